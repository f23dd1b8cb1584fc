// One loaded conversation: the AgentHost its agent talks to, and the execution-status machine.
// Status changes are persisted and emitted as ConversationStateUpdateEvent('execution_status').
//   idle/paused/error/stuck/finished --run--> running --agent--> finished | error | stuck | waiting
//   idle|running --pause--> paused (the agent's signal aborts; it stops between steps)
//   finished|stuck --user message--> idle
//   waiting_for_confirmation --accept, or a message with run:true--> running (pending actions run first)
//   waiting_for_confirmation --reject--> idle (each pending action answered by a UserRejectObservation)
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentHost, ConversationAgent, CreateAgent, LlmConfig, ModelRouting } from '../../agent/types.ts';
import type { ServerRouting } from './model-routing.ts';
import { pendingActions } from '../../agent/messages.ts';
import type { ConfirmationPolicy, SecurityAnalyzer, SendMessageRequest } from '../../api/agent-server/index.ts';
import { joinAnalyzerKeys, maskedAnalyzer } from '../../agent/confirmation/policy.ts';
import type { ExecutionStatus } from '../../api/conversation.ts';
import { BadRequest, Conflict, NotFound, NotImplemented } from '../../api/errors.ts';
import { newEventBase, parseEvent, type Event } from '../../api/events/index.ts';
import type { Logger } from '../../util/log.ts';
import type { ConversationRow, ConversationPatch, ConversationStore } from '../store/conversation-store.ts';
import type { EventStore } from '../store/event-store.ts';
import type { StorageFaultState } from '../store/storage-health.ts';
import { CRITIC_KEY_PLACE, maskSecrets } from '../secrets.ts';
import { Published, type EventBus } from './bus.ts';
import { conversationInfo, fullStateValue } from './info.ts';
import { maskedRouteTools, routeLlms, type RouteLlmKeys } from './route-llms.ts';
import { SkillState } from './skill-state.ts';
import { activeBranch, ROOT_PARENT_ID } from './tree.ts';
import { GoalLoop, lastGoalStatus, type GoalStatus } from './goal.ts';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { fetchPlugin, loadPluginDir, PluginFetchError, PluginLoadError } from '../../agent/plugins/index.ts';
import { PluginRefError, resolvePluginRef } from '../../agent/plugins/marketplace-ref.ts';
import type { McpOAuthProviders } from '../../agent/mcp/index.ts';
import type { ExtensionsConfig } from '../../agent/skills/extensions-repo.ts';
import { AcpConversationAgent, acpSupportsSwitch, recordedAgentState, recordedModels, type AcpInfo } from '../acp/agent.ts';
import type { HttpCredentialBinding } from '../acp/credential-binding.ts';
import { idleCollector } from '../idle-collect.ts';

export interface RuntimeContext {
  events: EventStore;
  conversations: ConversationStore;
  bus: EventBus;
  createAgent: CreateAgent;
  log: Logger;
  persistenceDir: string;
  /** The user's home for user and installed skills and plugins (AgentServerOptions.home); default the process's. */
  userHome?: string;
  /** OAuth clients for the conversations' oauth2 MCP servers (the agent server's token store). */
  mcpOAuth?: McpOAuthProviders;
  /** The extensions repository public skills come from (agent_context.load_public_skills). */
  extensions?: ExtensionsConfig;
  /** The meta-profiles and LLM profiles the model-routing tool routes with, and its switch (conversation/model-routing.ts). */
  routing?: ServerRouting;
  /** After every append: the sink pusher's wake-up. */
  onAppended(conversationId: string): void;
  /** After a change of status, title or usage: the sink's conversation update. */
  onChanged(conversationId: string): void;
  onActivity(): void;
  /** The storage fault in force, if any (see store/storage-health.ts); absent: faults are not tracked. */
  storageFault?(): StorageFaultState | undefined;
  /** Throws InsufficientStorage while the disk refuses writes (after trying the held ones again). */
  assertWritable?(): void;
  /** The live conversations started as children of this one (ConversationInfo.sub_conversation_ids). */
  childrenOf?(conversationId: string): string[];
}

export interface RuntimeInit {
  row: ConversationRow;
  workspaceDir: string;
  llm: LlmConfig | undefined;
  secrets: Record<string, string>;
  /** The security analyzer's keys, kept out of the stored request (sealed with the secrets). */
  analyzerKeys?: Record<string, string>;
  /**
   * The agent's `mcp_config` with its env and header values, when it has any: the stored request
   * carries them as null (secret values never reach the database unsealed; mcp-secrets.ts).
   */
  mcpConfig?: Record<string, unknown> | undefined;
  /** The routing tool's inline LLM keys, kept out of the stored request (sealed with the secrets; route-llms.ts). */
  routeLlmKeys?: RouteLlmKeys;
}

interface ActiveRun {
  controller: AbortController;
  done: Promise<void>;
  /** Stopped because the disk refused its events: its error status is final for this run. */
  stoppedForStorage?: boolean;
}

export const ALREADY_RUNNING = 'Conversation already running. Wait for completion or pause first.';
/** OpenHands' 409 detail for /goal and /goal/resume while a run or a goal loop is going on. */
export const GOAL_BUSY = 'Conversation run or goal loop already running.';

export class ConversationRuntime implements AgentHost {
  readonly conversationId: string;
  readonly workspaceDir: string;
  #llm: LlmConfig | undefined;
  #secrets: Readonly<Record<string, string>>;
  #analyzerKeys: Readonly<Record<string, string>>;
  readonly #routeLlmKeys: Readonly<RouteLlmKeys>;
  readonly maxIterations: number;
  readonly #ctx: RuntimeContext;
  #row: ConversationRow;
  #agent: ConversationAgent | undefined;
  #run: ActiveRun | undefined;
  #rerun = false;
  #deleted = false;
  #closing = false;
  /** The whole log, once read. */
  #cache: Event[] | undefined;
  /** The active branch (the path from HEAD to the root); the log itself while no navigate moved HEAD off its end. */
  #branch: Event[] | undefined;
  /**
   * HEAD of the conversation tree (OpenHands 1.58 `leaf_event_id`): the last event that is not a
   * state update; the parent of the next event. Undefined until read from the events.
   */
  #leaf: string | null | undefined;
  /** Activated and invoked skills, loaded from the events at the first info(). */
  #skills: SkillState | undefined;
  /** load_plugin during a run: the agent is replaced (and loads its plugins again) once the run ends. */
  #reloadAgent = false;
  /** The /goal loop going on, if any. */
  #goal: GoalLoop | undefined;
  /** While a model call of the run waits for the provider's rate limit: until when (ISO). Memory only: no run survives a restart. */
  #rateLimitedUntil: string | null = null;

  /** See RuntimeInit.mcpConfig; `#withMcp` caches the request with it put back, per stored request. */
  readonly #mcpConfig: Record<string, unknown> | undefined;
  #withMcp: { from: ConversationRow['request']; value: ConversationRow['request'] } | undefined;

  constructor(ctx: RuntimeContext, init: RuntimeInit) {
    this.#ctx = ctx;
    this.#row = init.row;
    this.#mcpConfig = init.mcpConfig;
    this.conversationId = init.row.id;
    this.workspaceDir = init.workspaceDir;
    this.#llm = init.llm;
    this.#secrets = Object.freeze({ ...init.secrets });
    this.#analyzerKeys = Object.freeze({ ...init.analyzerKeys });
    this.#routeLlmKeys = Object.freeze(structuredClone(init.routeLlmKeys ?? {}));
    this.maxIterations = init.row.request.max_iterations ?? 500;
  }

  /** The model the agent's next call uses (switch_llm replaces it). */
  get llm(): LlmConfig | undefined {
    return this.#llm;
  }

  get secrets(): Readonly<Record<string, string>> {
    return this.#secrets;
  }

  /** Secrets added or replaced after start; `patch` persists them (sealed) with the stored request. */
  setSecrets(secrets: Record<string, string>, patch: ConversationPatch): void {
    this.#secrets = Object.freeze({ ...secrets });
    this.#update(patch);
    this.#agent?.secretsChanged?.();
  }

  /** The request as the agent uses it: the stored one, with the MCP servers' env and header values put back. */
  get request() {
    const stored = this.#row.request;
    if (!this.#mcpConfig || !stored.agent) return stored;
    if (this.#withMcp?.from !== stored) this.#withMcp = { from: stored, value: { ...stored, agent: { ...stored.agent, mcp_config: this.#mcpConfig } } };
    return this.#withMcp.value;
  }

  /** The MCP configuration with its secret values (undefined: none), for sealing with the other secrets. */
  get mcpConfig(): Record<string, unknown> | undefined {
    return this.#mcpConfig;
  }

  get extensions(): ExtensionsConfig | undefined {
    return this.#ctx.extensions;
  }

  get routeLlmKeys(): Readonly<RouteLlmKeys> {
    return this.#routeLlmKeys;
  }

  get analyzerKeys(): Readonly<Record<string, string>> {
    return this.#analyzerKeys;
  }

  /** The security analyzer with its keys (the stored request has it without them). */
  securityAnalyzer(): SecurityAnalyzer | null {
    return joinAnalyzerKeys(this.#row.request.security_analyzer, this.#analyzerKeys);
  }

  /** The critic's key, sealed with the analyzer's (the stored request has it null). */
  criticApiKey(): string | undefined {
    return this.#analyzerKeys[CRITIC_KEY_PLACE];
  }

  get mcpOAuth(): McpOAuthProviders | undefined {
    return this.#ctx.mcpOAuth;
  }

  /**
   * The server's routing, its switch aimed at this conversation. The routing tool's inline LLMs
   * (`meta_profile_llms`, keys put back) come first, as in 1.58: a classifier or a target of that
   * name is the inline one, and a direct-routing answer may name either kind.
   */
  get routing(): ModelRouting | undefined {
    const r = this.#ctx.routing;
    if (!r) return undefined;
    const inline = routeLlms(this.#row.request.agent?.tools, this.#routeLlmKeys) ?? {};
    const own = (name: string) => (Object.hasOwn(inline, name) ? inline[name] : undefined);
    return {
      metaProfile: (name) => r.metaProfile(name),
      metaProfileNames: () => r.metaProfileNames(),
      llmProfile: (name) => {
        const llm = own(name);
        return llm ? r.llmOf(llm) : r.llmProfile(name);
      },
      llmProfileNames: () => [...new Set([...r.llmProfileNames(), ...Object.keys(inline)])].sort(),
      switchProfile: (name) => {
        const llm = own(name);
        return llm ? r.switchInline(this.conversationId, name, llm) : r.switchProfile(this.conversationId, name);
      },
    };
  }

  /** `<data dir>/conversations/<id>`: files of this conversation kept outside the workspace (browser recordings); removed with it. */
  get userHome(): string | undefined {
    return this.#ctx.userHome;
  }

  get persistenceDir(): string {
    return join(this.#ctx.persistenceDir, 'conversations', this.conversationId);
  }

  get row(): ConversationRow {
    return this.#row;
  }

  get isRunning(): boolean {
    return this.#run !== undefined;
  }

  /** Running, or a message sent during the run ended has its run still to start (the end of one run is seen before the next starts). */
  get runPending(): boolean {
    return this.#run !== undefined || (this.#rerun && !this.#closing);
  }

  /** Until when the run waits for the model provider's rate limit; null when it does not wait. */
  get rateLimitedUntil(): string | null {
    return this.#rateLimitedUntil;
  }

  info() {
    return conversationInfo({
      // The analyzer with its keys, so that info shows a key is set (masked), as 1.58 does.
      // The routing tool's inline LLMs show the mask where a key is set.
      row: { ...this.#row, request: { ...this.#row.request, security_analyzer: this.securityAnalyzer(), ...(this.#row.request.agent ? { agent: { ...this.#row.request.agent, tools: maskedRouteTools(this.#row.request.agent.tools, this.#routeLlmKeys) } } : {}) } },
      llm: this.llm,
      secretNames: Object.keys(this.secrets),
      persistenceDir: this.persistenceDir,
      skills: this.#skillState(),
      pluginSkills: this.#row.pluginSkills ?? [],
      rateLimitedUntil: this.#rateLimitedUntil,
      leafEventId: this.leafEventId(),
      subConversationIds: this.#ctx.childrenOf?.(this.conversationId) ?? [],
      ...(this.isAcp ? { acp: this.#acpInfo() } : { agentState: (this.#agentState ??= recordedAgentState(this.#log())) }),
    });
  }

  #acpInfo(): AcpInfo {
    if (this.#agent instanceof AcpConversationAgent) return this.#agent.info();
    // No agent in this process yet (after a restart): what the last one recorded, as 1.58 reads it back.
    const recorded = recordedAgentState(this.#log());
    const recordedModel = typeof recorded['acp_current_model_id'] === 'string' ? recorded['acp_current_model_id'] : null;
    return { agentState: recorded, currentModelId: this.#row.request.agent?.acp_model ?? recordedModel, availableModels: recordedModels(recorded), supportsModelSwitch: acpSupportsSwitch(this.#row.request.agent!) };
  }

  #skillState(): SkillState {
    return (this.#skills ??= SkillState.load(this.#ctx.events, this.conversationId));
  }

  // ---- AgentHost ----

  stats(): ConversationRow['stats'] {
    return this.#row.stats;
  }

  /** The active branch of the event tree: what the agent works on (the log keeps every branch). */
  events(): readonly Event[] {
    if (this.#branch) return this.#branch;
    const log = (this.#cache ??= this.#ctx.events.all(this.conversationId));
    const branch = activeBranch(log, this.leafEventId());
    // Kept as the log itself when it is the whole log, so that appends grow both (the model view follows one list).
    return (this.#branch = branch.length === log.length ? log : branch);
  }

  /**
   * POST /navigate (OpenHands navigate_to): HEAD moves to `eventId` (null: the empty tree); the next
   * events hang there, a sibling branch, and the agent's next run reads that branch only. Allowed
   * while running, as in OpenHands: the run goes on from the new HEAD at its next step.
   */
  navigate(eventId: string | null): void {
    if (eventId !== null && !this.#ctx.events.get(this.conversationId, eventId)) throw new NotFound(`Unknown event_id: ${eventId}`);
    this.#update({ headEventId: eventId ?? '' });
    this.#branch = undefined;
  }

  /** HEAD was moved to the empty tree (OpenHands head_is_empty). */
  get headIsEmpty(): boolean {
    return this.#row.headEventId === '';
  }

  /** agent_state as last recorded (an agent's, not an ACP one's: the critic's refinement count); read from the log at first use. */
  #agentState: Record<string, unknown> | undefined;

  emit(event: Event): void {
    if (this.#deleted) {
      this.#ctx.log.debug({ conversationId: this.conversationId, kind: event.kind }, 'event after delete dropped');
      return;
    }
    // As OpenHands 1.58: every event names its parent, the HEAD when it is appended; state updates
    // are no nodes of the tree (they do not move HEAD). The first event is the root (no parent).
    // After a move to the empty tree, the next event is a new root, marked as OpenHands does.
    const parent = this.leafEventId() ?? (this.headIsEmpty && this.#ctx.events.lastSeq(this.conversationId) > 0 ? ROOT_PARENT_ID : null);
    const stamped = event.parent_id == null && parent !== null ? { ...event, parent_id: parent } : event;
    // Validation applies the kind's defaults, so every stored event has the full wire shape.
    const parsed = parseEvent(this.#mask(stamped));
    const stored = this.#ctx.events.append(this.conversationId, parsed);
    if (parsed.kind !== 'ConversationStateUpdateEvent') {
      this.#leaf = parsed.id;
      // HEAD is the last event again.
      if (this.#row.headEventId != null) this.#update({ headEventId: null });
    }
    this.#cache?.push(parsed);
    if (this.#branch && this.#branch !== this.#cache) this.#branch.push(parsed);
    this.#skills?.add(parsed);
    this.#ctx.onActivity();
    if (parsed.kind === 'ConversationStateUpdateEvent' && parsed.key === 'agent_state' && this.#agentState !== undefined) {
      this.#agentState = { ...(parsed.value as Record<string, unknown>) };
    }
    if (parsed.kind === 'ConversationStateUpdateEvent' && parsed.key === 'stats') {
      this.#update({ stats: parsed.value as ConversationRow['stats'] });
    }
    this.#ctx.bus.publish(this.conversationId, new Published(stored.seq, parsed, stored.json));
    this.#ctx.onAppended(this.conversationId);
    if (!stored.saved) this.#stopForStorage();
    // As OpenHands 1.58, every user message (the client's, a refinement follow-up, a sub-agent's task)
    // is the state's last_user_message_id, and a client replaying events learns it after the message.
    if (parsed.kind === 'MessageEvent' && parsed.source === 'user') {
      this.#update({ lastUserMessageId: parsed.id });
      this.emit({ ...newEventBase('environment'), key: 'last_user_message_id', value: parsed.id, kind: 'ConversationStateUpdateEvent' });
    }
  }

  /**
   * The disk refused an event (held in memory, see EventStore): stop the run with an error that says
   * why, rather than let it produce more the disk cannot take. Its events, this error included, are
   * published and pushed to the sink from memory, and saved once the disk takes writes again.
   */
  #stopForStorage(): void {
    const run = this.#run;
    if (!run || run.controller.signal.aborted) return;
    const fault = this.#ctx.storageFault?.();
    this.#rerun = false;
    run.controller.abort();
    this.emit({
      ...newEventBase('environment'),
      code: fault?.kind === 'io' ? 'StorageIOError' : 'StorageFullError',
      detail: `${fault?.detail ?? 'The agent server cannot save to its database.'} The run stopped; its events are kept and saved once the disk takes writes again. Then send a message or run the conversation again to continue.`,
      kind: 'ConversationErrorEvent',
    });
    this.setExecutionStatus('error');
    run.stoppedForStorage = true;
  }

  executionStatus(): ExecutionStatus {
    return this.#row.executionStatus;
  }

  /** The HEAD of the event tree: the last event that is not a state update; null before any. */
  leafEventId(): string | null {
    const head = this.#row.headEventId;
    if (head != null) return head === '' ? null : head;
    // Read once (the events loaded, or one indexed query), then kept by emit().
    if (this.#leaf === undefined) this.#leaf = this.#cache ? (this.#cache.findLast((e) => e.kind !== 'ConversationStateUpdateEvent')?.id ?? null) : this.#ctx.events.lastNodeId(this.conversationId);
    return this.#leaf;
  }

  setExecutionStatus(status: ExecutionStatus): void {
    if (status === this.#row.executionStatus) return;
    // A paused run winding down must not overwrite the user's pause, nor one stopped by a full disk its error.
    if (this.#run?.controller.signal.aborted && (this.#row.executionStatus === 'paused' || this.#run.stoppedForStorage)) return;
    this.#update({ executionStatus: status });
    this.emit({ ...newEventBase('environment'), key: 'execution_status', value: status, kind: 'ConversationStateUpdateEvent' });
  }

  /**
   * The run's model call waits for the provider's rate limit, or goes on (null). OpenHands 1.58 waits
   * silently (its status stays running); here clients are told, by the state key
   * `rate_limited_until` (an ISO time, or null), and the event sink's conversation update carries it,
   * so the application shows the sandbox PAUSED meanwhile (spec part 3). The status stays `running`:
   * the run goes on by itself, and OpenHands clients wait on `running` for it to end.
   */
  rateLimited(wait: { until: Date } | null): void {
    const until = wait ? wait.until.toISOString() : null;
    if (until === this.#rateLimitedUntil || this.#deleted) return;
    this.#rateLimitedUntil = until;
    this.emit({ ...newEventBase('environment'), key: 'rate_limited_until', value: until, kind: 'ConversationStateUpdateEvent' });
    this.#ctx.onChanged(this.conversationId);
  }

  recordStats(stats: NonNullable<ConversationRow['stats']>): void {
    if (!this.#deleted) this.#update({ stats });
  }

  recordPluginSkills(skills: Record<string, unknown>[]): void {
    // None loaded and none recorded: no write (most conversations).
    if (this.#deleted || (skills.length === 0 && this.#row.pluginSkills === null) || JSON.stringify(skills) === JSON.stringify(this.#row.pluginSkills)) return;
    this.#update({ pluginSkills: skills });
  }

  /** Streamed answer pieces go to live subscribers only (StreamingDeltaEvent, never persisted). */
  streamDelta(delta: { content: string | null; reasoning: string | null }): void {
    if (this.#deleted) return;
    const event = { ...newEventBase('agent'), content: delta.content, reasoning_content: delta.reasoning, kind: 'StreamingDeltaEvent' as const };
    // Published carries persisted kinds; a socket-only kind rides along with seq null, like full_state.
    this.#ctx.bus.publish(this.conversationId, new Published(null, event as unknown as Event, JSON.stringify(event)));
  }

  // ---- operations behind the HTTP and WebSocket API ----

  /** Persisted with the conversation and applied from the next batch of actions on. */
  setConfirmationPolicy(policy: ConfirmationPolicy): void {
    this.#update({ request: { ...this.#row.request, confirmation_policy: policy } });
    this.#settingChanged('confirmation_policy', policy);
  }

  /**
   * Replaces the model from the agent's next call on (a call in flight finishes with the old one);
   * `patch` persists the new `agent.llm` (without its key) and the sealed key. Allowed while running,
   * as in OpenHands. Emits the masked agent as ConversationStateUpdateEvent('agent').
   */
  switchLlm(llm: LlmConfig | undefined, patch: ConversationPatch): void {
    this.#llm = llm;
    this.#update(patch);
    this.#agent?.llmChanged?.();
    this.#settingChanged('agent', this.info().agent);
  }

  /**
   * Persisted with the conversation; judges the actions recorded from now on (see
   * src/agent/confirmation/policy.ts: without an analyzer every risk is UNKNOWN).
   */
  setSecurityAnalyzer(analyzer: SecurityAnalyzer | null, keys: Record<string, string>, patch: ConversationPatch): void {
    this.#analyzerKeys = Object.freeze({ ...keys });
    this.#update(patch);
    // Shown to clients with its keys masked: the event is persisted and streamed.
    this.#settingChanged('security_analyzer', maskedAnalyzer(joinAnalyzerKeys(analyzer, keys)));
  }

  /**
   * Accept: run, which executes the pending actions first (a run already going is fine, as in
   * OpenHands). Reject: a UserRejectObservation (source user) answers each pending action and a
   * conversation waiting for confirmation becomes idle; the agent goes on at the next message or run.
   * With nothing waiting, accepting starts no run (it would ask the model again, unasked), and
   * rejecting while the agent runs is refused: its actions are executing, not waiting.
   */
  respondToConfirmation(accept: boolean, reason: string): void {
    const waiting = this.#row.executionStatus === 'waiting_for_confirmation';
    if (accept) {
      if (!this.#run && (waiting || pendingActions(this.events()).length > 0)) this.run();
      return;
    }
    if (this.#run) throw new Conflict('The agent is running: no action is waiting for confirmation.');
    for (const a of pendingActions(this.events())) {
      this.emit({
        ...newEventBase('environment'),
        tool_name: a.tool_name,
        tool_call_id: a.tool_call_id,
        action_id: a.id,
        rejection_reason: reason,
        rejection_source: 'user',
        kind: 'UserRejectObservation',
      });
    }
    if (waiting) this.setExecutionStatus('idle');
  }

  /**
   * POST /condense: records a CondensationRequest. A running agent handles it at its next step;
   * otherwise the agent condenses now and this resolves once the Condensation is recorded (or
   * there was too little to forget). Runs are refused meanwhile, as while running.
   */
  async condense(): Promise<void> {
    if (this.#closing) throw new Conflict('The conversation is closing');
    const agent = this.#ensureAgent();
    if (!agent.condense) throw new NotImplemented('This agent cannot condense its history');
    this.emit({ ...newEventBase('environment'), kind: 'CondensationRequest' });
    if (this.#run) return;
    const controller = new AbortController();
    const active: ActiveRun = { controller, done: Promise.resolve() };
    this.#run = active;
    idleCollector()?.runStarted();
    active.done = agent.condense(controller.signal).finally(() => {
      this.#run = undefined;
      if (this.#rerun && !this.#closing) this.#start();
    });
    await active.done;
  }

  /**
   * ask_agent: the agent's model answers with the conversation as context; nothing is recorded and
   * the status stays (a run may be going on). `signal` aborts the call when the caller goes away.
   */
  async askAgent(question: string, signal: AbortSignal): Promise<string> {
    if (this.#closing) throw new Conflict('The conversation is closing');
    const agent = this.#ensureAgent();
    if (!agent.ask) throw new NotImplemented('This agent cannot answer side questions');
    return agent.ask(question, signal);
  }

  /**
   * Creates the agent now rather than at the first message, so that what it loads in the background
   * (the plugins: their skills are listed by info() once loaded) is under way. Never throws.
   */
  prepareAgent(): void {
    this.#agentForMessage();
  }

  /**
   * Appends a user MessageEvent; `run` starts the agent, or queues one rerun if it is running. Waits
   * for the agent to be ready first (plugin commands are keyword triggers); messages sent meanwhile
   * are recorded in the order they came.
   */
  async sendMessage(msg: Pick<SendMessageRequest, 'content'>, run: boolean, o: { fromGoal?: boolean } = {}): Promise<Event> {
    // Also for messages over the events socket, which no HTTP guard sees: refused, not held, on a full disk.
    this.#ctx.assertWritable?.();
    // A message of the user's own supersedes a goal loop (OpenHands): it ends, resumable.
    if (!o.fromGoal && this.#goal?.active) this.#goal.stop();
    const content = msg.content ?? [];
    const text = content.map((c) => ('text' in c ? c.text : '')).join('\n');
    const agent = this.#agentForMessage();
    await agent?.ready?.();
    await agent?.recordSystemPrompt?.().catch((err: unknown) => this.#ctx.log.warn({ conversationId: this.conversationId, errName: (err as Error)?.name }, 'system prompt not recorded before the message; the run records it'));
    const skills = agent?.userMessageSkills?.(text);
    const event: Event = {
      ...newEventBase('user'),
      llm_message: { role: 'user', content },
      activated_skills: skills?.activated_skills ?? [],
      extended_content: skills?.extended_content ?? [],
      kind: 'MessageEvent',
    };
    this.emit(event);
    const s = this.#row.executionStatus;
    if (s === 'finished' || s === 'stuck') this.setExecutionStatus('idle');
    if (run) {
      if (this.#run) this.#rerun = true;
      else this.run();
    }
    return event;
  }

  /**
   * Keyword-triggered skills go into the recorded message itself (OpenHands), so the agent exists
   * from the first message on. One that cannot be created is left to the run, which reports why.
   */
  #agentForMessage(): ConversationAgent | undefined {
    if (this.#closing || this.#agent) return this.#agent;
    try {
      return this.#ensureAgent();
    } catch (err) {
      this.#ctx.log.warn({ conversationId: this.conversationId, errName: (err as Error).name }, 'agent not created for a user message; the run will report it');
      return undefined;
    }
  }

  // ---- /goal loops (conversation/goal.ts) ----

  /** POST /goal: 409 while a run or a goal loop goes on; resolves once its first run started. */
  startGoal(objective: string, maxIterations: number): Promise<void> {
    this.#goalAllowed();
    if (!objective.trim()) throw new BadRequest('Goal objective must not be empty.');
    return this.#startGoal(new GoalLoop(this.#goalHost(), { objective, maxIterations }), false);
  }

  /** POST /goal/resume: the last goal that did not complete or reach its cap, from the round it had reached. */
  resumeGoal(): Promise<void> {
    const last = this.#lastGoal();
    if (!last || last.status === 'complete' || last.status === 'capped') throw new BadRequest('no_resumable_goal');
    this.#goalAllowed();
    // Every resume runs at least one more round, so one is kept in hand under the cap.
    const loop = new GoalLoop(this.#goalHost(), { objective: last.objective, maxIterations: last.max_iterations, iteration: Math.min(last.iteration, last.max_iterations - 1) });
    return this.#startGoal(loop, true);
  }

  /** POST /goal/stop: ends the loop (an `interrupted` status), not the run going on. */
  stopGoal(): void {
    this.#goal?.stop();
  }

  /** A goal persisted active with no loop (the server stopped meanwhile) is recorded interrupted, as OpenHands does at load. */
  reconcileGoal(): void {
    const last = this.#lastGoal();
    if (last?.active) this.emit({ ...newEventBase('environment'), key: 'goal', value: { ...last, active: false, status: 'interrupted', verdict: null }, kind: 'ConversationStateUpdateEvent' });
  }

  #lastGoal(): GoalStatus | undefined {
    return (this.#cache ? lastGoalStatus(this.#cache) : this.#ctx.events.lastStateValue(this.conversationId, 'goal')) as GoalStatus | undefined;
  }

  #goalAllowed(): void {
    if (this.#closing) throw new Conflict('The conversation is closing');
    if (this.#goal?.active || this.#run || this.#row.executionStatus === 'running') throw new Conflict(GOAL_BUSY);
  }

  #startGoal(loop: GoalLoop, resume: boolean): Promise<void> {
    this.#goal = loop;
    return loop.start(resume, () => {
      if (this.#goal === loop) this.#goal = undefined;
    });
  }

  #goalHost() {
    return {
      events: () => this.#log(),
      emit: (e: Event) => this.emit(e),
      executionStatus: () => this.#row.executionStatus,
      sendGoalMessage: async (text: string) => void (await this.sendMessage({ content: [{ type: 'text', text }] }, true, { fromGoal: true })),
      runsEnded: async () => {
        while (this.#run) await this.#run.done;
      },
      judge: (messages: Parameters<NonNullable<ConversationAgent['complete']>>[0], signal: AbortSignal) => {
        const agent = this.#ensureAgent();
        if (!agent.complete) throw new NotImplemented('This agent cannot judge a goal');
        return agent.complete(messages, signal);
      },
    };
  }

  /** The whole log (every branch). */
  #log(): readonly Event[] {
    return (this.#cache ??= this.#ctx.events.all(this.conversationId));
  }

  /**
   * POST /load_plugin (OpenHands load_plugin): the plugin `ref` names in the conversation's registered
   * marketplaces is fetched and checked now (404 unknown, 400 unusable), then added to the stored
   * request's `plugins`, so that it is loaded as the start request's plugins are: by the agent, which
   * is replaced now (after the run, when one goes on) and loads them all in the background; a restart
   * loads it again. Its skills, hooks, MCP servers and agents apply from the next run on; the
   * replaced agent's shell session is closed with it.
   */
  async loadPlugin(ref: string): Promise<void> {
    if (this.#closing) throw new Conflict('The conversation is closing');
    const registrations = this.#row.request.agent?.agent_context?.registered_marketplaces ?? [];
    const cacheDir = join(tmpdir(), `agentyard-load-plugin-${randomBytes(6).toString('hex')}`);
    let source;
    try {
      source = await resolvePluginRef(ref, registrations, { baseDir: this.workspaceDir });
      loadPluginDir((await fetchPlugin(source, { cacheDir, baseDir: this.workspaceDir })).dir);
    } catch (err) {
      if (err instanceof PluginRefError) throw err.notFound ? new NotFound(err.message) : new BadRequest(err.message);
      if (err instanceof PluginFetchError || err instanceof PluginLoadError) throw new BadRequest(err.message);
      throw err;
    } finally {
      rmSync(cacheDir, { recursive: true, force: true });
    }
    this.#update({ request: { ...this.#row.request, plugins: [...(this.#row.request.plugins ?? []), source] } });
    if (this.#run) this.#reloadAgent = true;
    else this.#replaceAgent();
  }

  #replaceAgent(): void {
    const old = this.#agent;
    this.#agent = undefined;
    old?.close().catch((err: unknown) => this.#ctx.log.warn({ err, conversationId: this.conversationId }, 'agent close failed'));
    this.prepareAgent();
  }

  /** Starts the agent in the background. Conflict (409) while a run is alive. */
  run(): void {
    if (this.#run || this.#closing) throw new Conflict(ALREADY_RUNNING);
    // A finished conversation has nothing to answer until a new message (which sets it idle): like
    // OpenHands, running it again makes no model call and records nothing.
    if (this.#row.executionStatus === 'finished') return;
    this.#start();
  }

  /** A run (a message sent during the last one is waiting: #afterRun starts it even when finished). */
  #start(): void {
    this.#rerun = false;
    const controller = new AbortController();
    this.setExecutionStatus('running');
    const active: ActiveRun = { controller, done: Promise.resolve() };
    this.#run = active;
    active.done = this.#drive(controller.signal)
      // #drive turns failures into events; if even that fails, log it rather than crash the server.
      .catch((err: unknown) => this.#ctx.log.error({ conversationId: this.conversationId, errName: (err as Error)?.name }, 'run ended without its error event'))
      .finally(() => this.#afterRun());
  }

  /**
   * POST /api/conversations/prepare-for-sandbox-pause (1.58): the sandbox is about to be frozen, so
   * an ACP conversation's server process is stopped (a run in progress is paused first, and waited
   * for) and its credential files are left settled on disk; the next run starts the server again.
   * A conversation of the built-in agent holds no such process: nothing to do.
   */
  async prepareForSandboxPause(): Promise<void> {
    if (!(this.#agent instanceof AcpConversationAgent)) return;
    const run = this.#run;
    if (run) {
      this.pause();
      await run.done.catch(() => undefined);
      // 1.58 also cancels the run task: its cut-off run records an InterruptEvent after the PauseEvent.
      this.emit({ ...newEventBase('user'), kind: 'InterruptEvent' });
    }
    await this.#agent.close();
  }

  /** PUT .../credential-bindings/{name} (1.58): only an ACP conversation takes one; otherwise it is too late (409). */
  activateCredentialBinding(name: string, binding: HttpCredentialBinding): void {
    if (!this.isAcp || this.#closing) throw new Conflict('Credential binding activation arrived after ACP initialization');
    const agent = this.#ensureAgent();
    if (!(agent instanceof AcpConversationAgent)) throw new Conflict('Credential binding activation arrived after ACP initialization');
    agent.activateCredentialBinding(name, binding);
  }

  /** Stops the agent between steps: status paused plus a PauseEvent (InterruptEvent for interrupt). */
  pause(kind: 'PauseEvent' | 'InterruptEvent' = 'PauseEvent'): void {
    const s = this.#row.executionStatus;
    if (s !== 'idle' && s !== 'running' && !(kind === 'InterruptEvent' && this.#run)) return;
    this.#rerun = false;
    this.#run?.controller.abort();
    this.setExecutionStatus('paused');
    this.emit({ ...newEventBase('user'), kind });
  }

  update(patch: Pick<ConversationPatch, 'title' | 'tags' | 'lastUserMessageId'>): void {
    this.#update(patch);
  }

  /** A snapshot for WebSocket subscribers only (never persisted). */
  fullState(): Published {
    const value = fullStateValue(this.info(), { skills: this.#skillState(), rateLimitedUntil: this.#rateLimitedUntil, headIsEmpty: this.headIsEmpty });
    const event: Event = { ...newEventBase('environment'), key: 'full_state', value, kind: 'ConversationStateUpdateEvent' };
    return new Published(null, event, JSON.stringify(event));
  }

  /**
   * Restart recovery: a conversation persisted as running has no run any more. Close its dangling
   * tool calls (the model needs an answer to each) and move it to error, never leaving it wedged.
   */
  recoverFromRestart(): void {
    if (this.#row.executionStatus !== 'running') return;
    this.#answerDangling('A restart occurred while this tool was in progress. The tool call was not completed; check the workspace state before retrying.');
    this.emit({
      ...newEventBase('environment'),
      code: 'AgentServerRestarted',
      detail: 'The agent server restarted while this conversation was running, so the run stopped. Send a message or run it again to continue.',
      kind: 'ConversationErrorEvent',
    });
    this.setExecutionStatus('error');
  }

  /** Every ActionEvent without an answer gets `error` as one: the model needs an answer to each tool call. */
  #answerDangling(error: string): void {
    const answered = new Set<string>();
    for (const e of this.events()) {
      if (e.kind === 'ObservationEvent' || e.kind === 'UserRejectObservation' || e.kind === 'AgentErrorEvent') answered.add(e.tool_call_id);
    }
    for (const a of this.events()) {
      if (a.kind !== 'ActionEvent' || answered.has(a.tool_call_id)) continue;
      this.emit({ ...newEventBase('agent'), tool_name: a.tool_name, tool_call_id: a.tool_call_id, error, kind: 'AgentErrorEvent' });
    }
  }

  /**
   * Aborts a run (waiting up to `graceMs` for it to stop) and releases the agent's tools. A run
   * stopped by a shutdown (the sandbox paused, the service stopping) leaves the conversation
   * `paused` with a PauseEvent from the environment, resumable by the next message, rather than a
   * `running` that nothing runs.
   */
  async close(opts: { deleted?: boolean; graceMs?: number } = {}): Promise<void> {
    this.#closing = true;
    this.#rerun = false;
    this.#goal?.abandon();
    const run = this.#run;
    if (run) {
      run.controller.abort();
      await waitAtMost(run.done, opts.graceMs ?? 10_000);
    }
    if (opts.deleted) this.#deleted = true;
    else if (run && !this.#run && this.#row.executionStatus === 'running') {
      this.#answerDangling('The agent server was stopped (sandbox paused or service shutting down) while this tool was in progress. The tool call was not completed; check the workspace state before retrying.');
      this.emit({ ...newEventBase('environment'), kind: 'PauseEvent' });
      this.setExecutionStatus('paused');
    }
    const agent = this.#agent;
    this.#agent = undefined;
    if (agent) await agent.close().catch((err: unknown) => this.#ctx.log.warn({ err, conversationId: this.conversationId }, 'agent close failed'));
    if (opts.deleted) rmSync(this.persistenceDir, { recursive: true, force: true });
  }

  async #drive(signal: AbortSignal): Promise<void> {
    try {
      await this.#ensureAgent().run(signal);
      if (!signal.aborted && this.#row.executionStatus === 'running') this.setExecutionStatus('finished');
    } catch (err) {
      // The agent contract says model and tool failures become events; this is a bug or a crash.
      const e = err instanceof Error ? err : new Error(String(err));
      const detail = this.#maskText(e.message);
      this.#ctx.log.error({ conversationId: this.conversationId, errName: e.name, error: detail, stack: this.#maskText(e.stack ?? '') }, 'agent run failed');
      if (signal.aborted && this.#row.executionStatus === 'paused') return;
      this.emit({ ...newEventBase('environment'), code: e.name || 'Error', detail, kind: 'ConversationErrorEvent' });
      this.setExecutionStatus('error');
    }
  }

  #afterRun(): void {
    this.#run = undefined;
    idleCollector()?.runEnded();
    if (this.#deleted) return;
    if (this.#reloadAgent && !this.#closing) {
      this.#reloadAgent = false;
      this.#replaceAgent();
    }
    // The model client ends every wait it started; this only guards against a run that ended mid-wait some other way.
    this.rateLimited(null);
    // OpenHands clients treat the post-run snapshot as the authoritative end of a run.
    this.#ctx.bus.publish(this.conversationId, this.fullState());
    if (this.#rerun && !this.#closing) this.#start();
  }

  /** A client-set setting changed: state update for live clients, and the conversation is changed. */
  #settingChanged(key: string, value: unknown): void {
    this.emit({ ...newEventBase('environment'), key, value, kind: 'ConversationStateUpdateEvent' });
    this.#ctx.onChanged(this.conversationId);
  }

  #ensureAgent(): ConversationAgent {
    // An ACPAgent delegates to an ACP server (src/agent-server/acp); every other kind is the built-in loop.
    return (this.#agent ??= this.isAcp ? new AcpConversationAgent(this, this.#ctx.log.child({ part: 'acp' })) : this.#ctx.createAgent(this));
  }

  /** The agent is an ACP agent (kind ACPAgent). */
  get isAcp(): boolean {
    return this.#row.request.agent?.kind === 'ACPAgent';
  }

  /**
   * switch_acp_model: 400 for an agent that is not ACP (1.58's words); the switched model is stored
   * with the request, so a restarted server starts the session with it.
   */
  async switchAcpModel(model: string): Promise<void> {
    if (!this.isAcp) throw new BadRequest('switch_acp_model is only supported for ACP conversations.');
    if (!model.trim()) throw new BadRequest('model must be a non-empty string');
    await (this.#ensureAgent() as AcpConversationAgent).switchModel(model);
    const request = { ...this.#row.request, agent: { ...this.#row.request.agent!, acp_model: model } };
    this.#update({ request });
    this.#ctx.onChanged(this.conversationId);
  }

  #update(patch: ConversationPatch): void {
    const now = new Date().toISOString();
    this.#ctx.conversations.update(this.conversationId, patch, now);
    this.#row = { ...this.#row, ...patch, updatedAt: now };
    if ('executionStatus' in patch || 'title' in patch || 'stats' in patch) this.#ctx.onChanged(this.conversationId);
  }

  #secretValues(): string[] {
    const values = Object.values(this.secrets);
    if (this.llm?.apiKey) values.push(this.llm.apiKey);
    if (this.#agent instanceof AcpConversationAgent) values.push(...this.#agent.maskedValues());
    return values;
  }

  #maskText(text: string): string {
    return maskSecrets(text, this.#secretValues());
  }

  /** Defence in depth: the agent masks secrets in outputs, and nothing unmasked is stored anyway. */
  #mask(event: Event): Event {
    const values = this.#secretValues();
    if (values.length === 0) return event;
    const walk = (v: unknown): unknown => {
      if (typeof v === 'string') return maskSecrets(v, values);
      if (Array.isArray(v)) return v.map(walk);
      if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
      return v;
    };
    return walk(event) as Event;
  }
}

async function waitAtMost(p: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([p, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
