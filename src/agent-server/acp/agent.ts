// The conversation agent of kind `ACPAgent` (OpenHands 1.58): each run sends the user messages not
// yet sent to the ACP server as one prompt and records what the server reports, as 1.58 records it:
//   SystemPromptEvent (a placeholder: the server owns its prompt and tools), before the first message;
//   ACPToolCallEvent when a tool call starts and once when it reaches completed/failed;
//   ActionEvent(FinishAction) + ObservationEvent(FinishObservation) with the turn's text at its end;
//   ConversationErrorEvent (ACPSpawnError, ACPAuthRequired, ACPPromptError, ...) when it cannot.
// The server is sandbox code: it runs in the workspace with a sandbox environment and the
// conversation's own secrets (as environment variables), never the agent server's.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { mkdirSync, rmSync } from 'node:fs';
import type { ContentBlock, McpServer, SessionUpdate } from '@agentclientprotocol/sdk';
import { McpConfigError, resolveServer, serversOf } from '../../agent/mcp/config.ts';
import type { AgentHost, ConversationAgent } from '../../agent/types.ts';
import { conversationError, observationEvent, stateUpdate } from '../../agent/events.ts';
import { sandboxBaseEnv } from '../../agent/sandbox-env.ts';
import { requestSkills, skillsPromptSection } from '../../agent/skills/index.ts';
import type { AcpModelInfo, Agent } from '../../api/agent-server/index.ts';
import { BadRequest } from '../../api/errors.ts';
import { newEventBase, type ActionEvent, type Event } from '../../api/events/index.ts';
import type { Logger } from '../../util/log.ts';
import { maskSecrets } from '../secrets.ts';
import { CodexAuthLifecycle, CredentialBindingError, type HttpCredentialBinding } from './credential-binding.ts';
import { activeFileSecrets, fileSecretNames, materializeFileSecrets } from './file-secrets.ts';
import { resolveAcpCommand, detectProvider } from './providers.ts';
import { AcpRequestError, AcpSession, AcpStartError, type AcpLaunch } from './session.ts';

type ACPToolCallEvent = Extract<Event, { kind: 'ACPToolCallEvent' }>;

/** 1.58's defaults (ACPAgent): half an hour without a word from the server, 90 s to start. */
const PROMPT_TIMEOUT_S = 1800;
const STARTUP_TIMEOUT_S = 90;
/** How long a pause waits for the server to acknowledge session/cancel before the run lets go. */
const CANCEL_DRAIN_MS = 10_000;
const TERMINAL = new Set(['completed', 'failed']);
/** What 1.58 records as the system prompt of an ACP conversation. */
export const ACP_SYSTEM_PROMPT = 'This conversation is powered by an ACP server. The system prompt and tools are managed by the ACP server and are not available for display.';
/** 1.58's placeholder model and usage id of an ACP agent (the ACP server calls the model). */
const ACP_MANAGED = 'acp-managed';
/** 1.58's text for a turn that ended without any text. */
const NO_RESPONSE = '(No response from ACP server)';

/** The agent's ACP state, as ConversationInfo shows it. */
export interface AcpInfo {
  /** 1.58's agent_state keys of an ACP conversation ({} before its server started). */
  agentState: Record<string, unknown>;
  currentModelId: string | null;
  availableModels: AcpModelInfo[];
  supportsModelSwitch: boolean;
}

/**
 * The launch of an ACP agent described by a stored `agent` (kind ACPAgent). `acpRoot` is the
 * conversation's `acp` folder: credential files (acp_file_secrets) and an isolated HOME live there.
 */
export function acpLaunch(agent: Agent, cwd: string, secrets: Readonly<Record<string, string>>, acpRoot: string): AcpLaunch {
  const command = resolveAcpCommand(agent.acp_server, agent.acp_command, ['body', 'agent']);
  const specs = activeFileSecrets(agent.acp_file_secrets, detectProvider(agent.acp_server, command));
  const files = fileSecretNames(specs, secrets);
  // A credential file's content is not an environment variable (1.58 excludes it from the env).
  const envSecrets = Object.fromEntries(Object.entries(secrets).filter(([k]) => !files.has(k)));
  const env = { ...sandboxBaseEnv(), ...envSecrets };
  if (agent.acp_isolate_data_dir) {
    // The CLI's login, sessions and caches per conversation (1.58 acp_isolate_data_dir): HOME is the one lever all of them follow.
    const homeDir = join(acpRoot, agent.acp_server ?? 'custom');
    mkdirSync(homeDir, { recursive: true });
    env['HOME'] = homeDir;
  }
  Object.assign(env, materializeFileSecrets(specs, secrets, acpRoot));
  return {
    command,
    args: agent.acp_args ?? [],
    cwd,
    env,
    server: agent.acp_server ?? null,
    mode: agent.acp_session_mode ?? null,
    model: agent.acp_model ?? null,
    startupTimeoutMs: (agent.acp_startup_timeout ?? STARTUP_TIMEOUT_S) * 1000,
    mcpServers: acpMcpServers(agent.mcp_config, secrets),
    secrets: Object.values(secrets),
  };
}

/**
 * The conversation's MCP servers as ACP `session/new` takes them (1.58 _mcp_config_to_acp_servers):
 * the ACP server connects to them itself. Disabled servers are left out; `${NAME}` placeholders
 * are filled from the conversation's secrets. A server the ACP server cannot reach by its
 * transport is dropped at session start (AcpSession.start).
 */
export function acpMcpServers(mcpConfig: unknown, secrets: Readonly<Record<string, string>>): McpServer[] {
  const out: McpServer[] = [];
  try {
    // 1.58's agent takes the server map itself ({name: server}); the `{"mcpServers": ...}` file form too.
    const flat = mcpConfig !== null && typeof mcpConfig === 'object' && !Array.isArray(mcpConfig) && !('mcpServers' in mcpConfig);
    for (const [name, spec] of Object.entries(serversOf(flat ? { mcpServers: mcpConfig } : mcpConfig, 'agent.mcp_config'))) {
      if (spec['enabled'] === false) continue;
      const s = resolveServer(name, spec, (n) => (Object.hasOwn(secrets, n) ? secrets[n] : undefined));
      const pairs = (m: Record<string, string>) => Object.entries(m).map(([k, v]) => ({ name: k, value: v }));
      if (s.kind === 'stdio') out.push({ name, command: s.command, args: s.args, env: pairs(s.env) });
      else out.push({ type: s.kind, name, url: s.url, headers: pairs(s.headers) });
    }
  } catch (e) {
    if (e instanceof McpConfigError) throw new AcpStartError('ACPInitError', `agent.mcp_config: ${e.message}`);
    throw e;
  }
  return out;
}

/**
 * The conversation's ACP state as last recorded (its last `agent_state` update): what 1.58 keeps in
 * base_state.json across restarts, ours in the event log. {} before a server ever started.
 */
export function recordedAgentState(events: readonly Event[]): Record<string, unknown> {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.kind === 'ConversationStateUpdateEvent' && e.key === 'agent_state' && e.value !== null && typeof e.value === 'object') return { ...(e.value as Record<string, unknown>) };
  }
  return {};
}

/** The recorded model list (agent_state's acp_available_models), [] when there is none. */
export function recordedModels(state: Record<string, unknown>): AcpModelInfo[] {
  return Array.isArray(state['acp_available_models']) ? (state['acp_available_models'] as AcpModelInfo[]) : [];
}

/** Whether the agent's ACP server can switch models live, as far as its name or command tells before it runs. */
export function acpSupportsSwitch(agent: Agent): boolean {
  return detectProvider(agent.acp_server, agent.acp_command ?? [])?.supportsModelSwitch ?? false;
}

/** PromptResponse.usage (unstable in the protocol). */
interface TurnUsage {
  inputTokens?: number;
  outputTokens?: number;
  cachedReadTokens?: number | null;
  thoughtTokens?: number | null;
}

interface ToolCallState {
  tool_call_id: string;
  title: string;
  status: string | null;
  tool_kind: string | null;
  raw_input: unknown;
  raw_output: unknown;
  content: unknown[] | null;
}

export class AcpConversationAgent implements ConversationAgent {
  readonly #host: AgentHost;
  readonly #agent: Agent;
  #session: AcpSession | undefined;
  #starting: Promise<AcpSession> | undefined;
  /** User messages sent in this process (a paused turn's message is not sent twice). */
  readonly #sent = new Set<string>();
  /**
   * The message of a turn that did not complete (paused, cancelled, failed). When the ACP server
   * stops before answering it (prepare-for-sandbox-pause, as at a restart), the next run prompts it
   * again, before any newer message, as 1.58's prompt cursor (advanced only by a completed turn) does.
   */
  #unanswered: string | undefined;
  /** The message of the last turn that completed in this process. */
  #lastCompleted: string | undefined;
  /** The turn in progress: its accumulators (updates land here). */
  #turn: { text: string[]; thoughts: string[]; calls: ToolCallState[]; activity: { last: number } } | undefined;
  /** The last user message sent to the server (1.58's acp_last_prompt_user_message_id). */
  #lastPrompted: string | undefined;
  /** A model switched before the session started: applied when it starts. */
  #model: string | null;
  /** Credential bindings (PUT .../credential-bindings/{name}): their files come from an HTTP source. */
  readonly #bindings = new Map<string, HttpCredentialBinding>();
  /** The bound files of the running server. */
  readonly #lifecycles = new Map<string, CodexAuthLifecycle>();
  /** Values of bound credentials seen (loaded or refreshed): masked like secrets. */
  readonly #tracked = new Set<string>();
  /** The first-turn suffix reached the current session (a turn completed on it, or on the session it resumed). */
  #suffixInstalled = false;
  /** The server whose start the SystemPromptEvent was recorded for. */
  #promptRecordedFor: AcpSession | undefined;
  readonly #log: Logger | undefined;

  constructor(host: AgentHost, log?: Logger) {
    this.#host = host;
    this.#agent = host.request.agent!;
    this.#model = this.#agent.acp_model ?? null;
    this.#log = log;
    const recorded = recordedAgentState(host.events());
    if (typeof recorded['acp_last_prompt_user_message_id'] === 'string') this.#lastPrompted = recorded['acp_last_prompt_user_message_id'];
  }

  info(): AcpInfo {
    const s = this.#session;
    const recorded = s ? {} : recordedAgentState(this.#host.events());
    return {
      agentState: this.agentState(),
      currentModelId: s?.models.currentModelId ?? this.#model ?? (typeof recorded['acp_current_model_id'] === 'string' ? recorded['acp_current_model_id'] : null),
      availableModels: s?.models.availableModels ?? recordedModels(recorded),
      supportsModelSwitch: s ? s.supportsModelSwitch : acpSupportsSwitch(this.#agent),
    };
  }

  /**
   * 1.58 records the (placeholder) system prompt each time an ACP server has started for the
   * conversation (init_state): at the first run, so after the first user message, and again at the
   * turn after a restart or prepare-for-sandbox-pause, also when that server resumed the session;
   * `dynamic_context` is what the first prompt carries besides the user's text (suffix()).
   */
  #recordSystemPrompt(session: AcpSession): void {
    if (this.#promptRecordedFor === session) return;
    this.#promptRecordedFor = session;
    const suffix = this.#suffix();
    this.#host.emit({ ...newEventBase('agent'), system_prompt: { type: 'text', text: ACP_SYSTEM_PROMPT }, tools: [], dynamic_context: suffix ? { type: 'text', text: suffix } : null, kind: 'SystemPromptEvent' });
  }

  /**
   * What the ACP server is told besides the user's text, once, with the conversation's first turn:
   * the agent context's skills, the names of the secrets it has as environment variables (never
   * their values), and the agent context's system_message_suffix. Null when there is none of them.
   */
  #suffix(): string | null {
    // Credential files are not announced: their values are file blobs, not variables to use.
    const files = fileSecretNames(activeFileSecrets(this.#agent.acp_file_secrets, detectProvider(this.#agent.acp_server, this.#agent.acp_command ?? [])), this.#host.secrets);
    const names = Object.keys(this.#host.secrets).filter((n) => !files.has(n));
    const parts: string[] = [];
    // agent_context.skills (an ACP profile's skill catalog): rendered as the regular agent's prompt
    // renders them (1.58's to_acp_prompt_context reuses get_system_message_suffix). The ACP server
    // has no invoke_skill; it reads the listed skills' names and descriptions as prompt text.
    const skills = skillsPromptSection(requestSkills(this.#agent.agent_context?.skills));
    if (skills) parts.push(skills);
    if (names.length) parts.push(`<CUSTOM_SECRETS>\nThese secrets are set as environment variables of your process (use them by name, e.g. "$${names[0]}"; never print their values): ${names.join(', ')}.\n</CUSTOM_SECRETS>`);
    const custom = this.#agent.agent_context?.system_message_suffix;
    if (custom) parts.push(custom);
    return parts.length ? parts.join('\n\n') : null;
  }

  /** 1.58's `agent_state` of an ACP conversation: which server, session and models (as last recorded while no server runs). */
  agentState(): Record<string, unknown> {
    const s = this.#session;
    if (!s) return recordedAgentState(this.#host.events());
    return {
      acp_agent_name: s.agentName,
      acp_agent_version: s.agentVersion,
      acp_session_id: s.sessionId,
      acp_session_cwd: this.#host.workspaceDir,
      acp_supports_runtime_model_switch: s.supportsModelSwitch,
      acp_model_via_config_option: s.viaConfigOption,
      acp_current_model_id: s.models.currentModelId,
      ...(s.models.availableModels ? { acp_available_models: s.models.availableModels } : {}),
      ...(this.#lastPrompted ? { acp_last_prompt_user_message_id: this.#lastPrompted } : {}),
      ...(this.#suffixInstalled && this.#suffix() !== null ? { acp_suffix_installed: true } : {}),
    };
  }

  #emitAgentState(): void {
    this.#host.emit(stateUpdate('agent_state', this.agentState()));
  }

  /**
   * One turn per user message, oldest first, as 1.58 steps through its prompt cursor: messages that
   * came while no turn took them (a turn cut off by a restart, or several sent before a run) are
   * each their own prompt, never merged into one.
   */
  async run(signal: AbortSignal): Promise<void> {
    const pending = this.#pendingMessages();
    // Nothing new to say: no turn (a run of a finished conversation makes no call).
    if (pending.length === 0) return;
    let session: AcpSession;
    try {
      session = await this.#ensureSession();
    } catch (e) {
      if (!(e instanceof AcpStartError)) throw e;
      this.#host.emit(conversationError(e.code, e.message));
      this.#host.setExecutionStatus('error');
      return;
    }
    this.#emitAgentState();
    this.#recordSystemPrompt(session);
    // The messages waiting now; one sent during these turns gets a run of its own (the runtime reruns).
    for (const [i, message] of pending.entries()) {
      if (i > 0) {
        // As 1.58 between two steps: the turn finished, the next message runs it again.
        this.#host.setExecutionStatus('finished');
        this.#host.setExecutionStatus('running');
        if (session.closed) return;
      }
      if (signal.aborted || !(await this.#promptTurn(session, message, signal))) return;
    }
  }

  /** Prompts the ACP server with one user message; true when the turn completed. */
  async #promptTurn(session: AcpSession, message: Extract<Event, { kind: 'MessageEvent' }>, signal: AbortSignal): Promise<boolean> {
    this.#sent.add(message.id);
    this.#unanswered = message.id;
    this.#lastPrompted = message.id;
    const blocks: ContentBlock[] = messageBlocks(message);
    // The suffix goes with the first turn until one has completed (the server then has it in its history).
    const suffix = this.#suffix();
    if (suffix && !this.#suffixInstalled) blocks.push({ type: 'text', text: suffix });
    const turn = { text: [] as string[], thoughts: [] as string[], calls: [] as ToolCallState[], activity: { last: Date.now() } };
    this.#turn = turn;
    const onAbort = () => void session.cancel();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      const prompt = session.prompt(blocks, (this.#agent.acp_prompt_timeout ?? PROMPT_TIMEOUT_S) * 1000, turn.activity);
      // A pause asks the server to cancel; the run lets go once it acknowledges (or after a bound).
      const response = await (signal.aborted ? Promise.race([prompt, drainBound()]) : Promise.race([prompt, abortedThenDrain(signal, prompt)]));
      if (signal.aborted || response === undefined || response.stopReason === 'cancelled') {
        this.#closeInflight('failed');
        return false;
      }
      this.#closeInflight('completed');
      this.#unanswered = undefined;
      this.#lastCompleted = message.id;
      this.#suffixInstalled = true;
      this.#finish(turn);
      // usage is an unstable part of the protocol: read when the server sends it.
      this.#recordUsage((response as { usage?: TurnUsage }).usage);
      this.#emitAgentState();
      return true;
    } catch (e) {
      this.#closeInflight('failed');
      if (!(e instanceof AcpRequestError)) throw e;
      this.#host.emit(conversationError(e.code, e.message));
      this.#host.setExecutionStatus('error');
      if (session.closed) this.#session = undefined;
      return false;
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.#turn = undefined;
    }
  }

  /**
   * switch_acp_model: a live session switches at once (refused: 400, no answer: 504); before the
   * first run the model is kept and applied when the session starts.
   */
  async switchModel(model: string): Promise<void> {
    if (!model.trim()) throw new BadRequest('model must be a non-empty string');
    const session = this.#session;
    if (session && !session.closed) {
      if (!session.supportsModelSwitch) throw new BadRequest(`ACP provider '${session.provider?.key ?? session.agentName}' does not support runtime model switching.`);
      try {
        await session.setModel(model, (this.#agent.acp_prompt_timeout ?? PROMPT_TIMEOUT_S) * 1000);
      } catch (e) {
        if (e instanceof AcpRequestError) throw new BadRequest(e.message);
        throw e;
      }
    }
    this.#model = model;
  }

  async close(): Promise<void> {
    const s = this.#session ?? (await this.#starting?.catch(() => undefined));
    this.#session = undefined;
    await s?.close();
    if (this.#unanswered) this.#sent.delete(this.#unanswered);
    this.#unanswered = undefined;
    // The server is gone: what it last wrote into a bound file goes back to its source, then the file goes.
    const lifecycles = [...this.#lifecycles.values()];
    this.#lifecycles.clear();
    const failed = (await Promise.allSettled(lifecycles.map((l) => l.close()))).find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /** Bound credentials' values seen so far (the runtime masks them in every event, as secrets). */
  maskedValues(): string[] {
    return [...this.#tracked];
  }

  /**
   * 1.58 activate_credential_binding: before the server starts, the binding replaces the secret of
   * that name; once it runs, only the same source with new headers (a rotated authorization) is
   * taken. Anything else is too late (CredentialBindingError 409).
   */
  activateCredentialBinding(name: string, binding: HttpCredentialBinding): void {
    const existing = this.#bindings.get(name);
    if (existing && existing.url === binding.url) {
      existing.reauthorize(binding.headers);
      return;
    }
    if (existing || this.#starting || (this.#session && !this.#session.closed)) throw new CredentialBindingError(409, 'Credential binding activation arrived after ACP initialization');
    this.#bindings.set(name, binding);
  }

  /** The conversation's `acp` folder (1.58 `<persistence dir>/acp`; the workspace's `.openhands/acp` without one). */
  #acpRoot(): string {
    return this.#host.persistenceDir ? join(this.#host.persistenceDir, 'acp') : join(this.#host.workspaceDir, '.openhands', 'acp');
  }

  /** Writes the bound credential files for a server about to start; their environment variables. */
  async #materializeBindings(): Promise<Record<string, string>> {
    const env: Record<string, string> = {};
    const specs = activeFileSecrets(this.#agent.acp_file_secrets, detectProvider(this.#agent.acp_server, this.#agent.acp_command ?? []));
    for (const [name, binding] of this.#bindings) {
      const spec = specs.find((x) => x.secret_name === name);
      if (!spec || this.#lifecycles.has(name)) continue;
      try {
        const lc = await CodexAuthLifecycle.materialize(binding, (values) => values.forEach((v) => this.#tracked.add(v)));
        this.#lifecycles.set(name, lc);
        Object.assign(env, lc.env);
      } catch (e) {
        if (e instanceof CredentialBindingError) throw new AcpStartError('ACPAuthRequired', `${name}: ${e.message}`);
        throw e;
      }
      // The durable copy a static secret seeded earlier must not outlive the binding (1.58 removes it).
      rmSync(join(this.#acpRoot(), spec.subdir, spec.filename), { force: true });
    }
    return env;
  }

  #ensureSession(): Promise<AcpSession> {
    if (this.#session && !this.#session.closed) return Promise.resolve(this.#session);
    this.#starting ??= (async () => {
      try {
        const bound = await this.#materializeBindings();
        // A bound credential's static secret (if any) is not written: the source's copy is the one.
        const secrets = Object.fromEntries(Object.entries(this.#host.secrets).filter(([k]) => !this.#bindings.has(k)));
        const launch = acpLaunch(this.#agent, this.#host.workspaceDir, secrets, this.#acpRoot());
        Object.assign(launch.env, bound);
        launch.secrets = [...launch.secrets, ...this.#tracked];
        const recorded = recordedAgentState(this.#host.events());
        const s = await AcpSession.start({ ...launch, model: this.#model, resume: this.#resumable(recorded) }, (u) => this.#onUpdate(u));
        // A resumed session has what the one it continues had; a fresh one gets the suffix again (1.58).
        this.#suffixInstalled = s.resumed && recorded['acp_suffix_installed'] === true;
        if (s.resumeFailure) {
          // 1.58 falls back the same way and only logs it; the new acp_session_id in agent_state tells a client.
          this.#log?.warn({ conversationId: this.#host.conversationId, previousSession: fingerprint(s.resumeFailure.sessionId), session: fingerprint(s.sessionId), reason: s.resumeFailure.reason }, 'ACP session not resumed: a new session starts without the earlier context');
        }
        this.#session = s;
        return s;
      } finally {
        this.#starting = undefined;
      }
    })();
    return this.#starting;
  }

  /**
   * The session to load instead of starting one (1.58): the last recorded acp_session_id, unless it
   * was created in another working directory (ACP servers key their sessions by cwd: loading it
   * elsewhere would at best miss it, at worst load another).
   */
  #resumable(recorded: Record<string, unknown>): AcpLaunch['resume'] {
    const id = recorded['acp_session_id'];
    if (typeof id !== 'string' || !id) return null;
    const cwd = recorded['acp_session_cwd'];
    if (typeof cwd === 'string' && cwd !== this.#host.workspaceDir) {
      this.#log?.warn({ conversationId: this.#host.conversationId, previousSession: fingerprint(id) }, 'ACP session not resumed: it was created in another working directory');
      return null;
    }
    return { sessionId: id, viaConfigOption: recorded['acp_model_via_config_option'] === true };
  }

  /**
   * User messages this process has not sent yet, after the message of the last turn completed here
   * (a message sent during that turn is recorded before its finish), else after the last finish.
   */
  #pendingMessages(): Extract<Event, { kind: 'MessageEvent' }>[] {
    const events = this.#host.events();
    const at = this.#lastCompleted === undefined ? -1 : events.findIndex((e) => e.id === this.#lastCompleted);
    const from = at >= 0 ? at + 1 : events.findLastIndex((e) => e.kind === 'ActionEvent' && e.action?.kind === 'FinishAction') + 1;
    return events.slice(from).filter((e): e is Extract<Event, { kind: 'MessageEvent' }> => e.kind === 'MessageEvent' && e.source === 'user' && !this.#sent.has(e.id));
  }

  #mask(text: string): string {
    return maskSecrets(text, [...Object.values(this.#host.secrets), ...this.#tracked]);
  }

  #onUpdate(update: SessionUpdate): void {
    const turn = this.#turn;
    if (!turn) return;
    turn.activity.last = Date.now();
    switch (update.sessionUpdate) {
      case 'agent_message_chunk':
        if (update.content.type === 'text') turn.text.push(update.content.text);
        break;
      case 'agent_thought_chunk':
        if (update.content.type === 'text') turn.thoughts.push(update.content.text);
        break;
      case 'tool_call': {
        const call: ToolCallState = {
          tool_call_id: update.toolCallId,
          title: update.title,
          status: update.status ?? null,
          tool_kind: update.kind ?? null,
          raw_input: update.rawInput ?? null,
          raw_output: update.rawOutput ?? null,
          content: (update.content as unknown[] | undefined) ?? null,
        };
        turn.calls.push(call);
        this.#emitCall(call);
        break;
      }
      case 'tool_call_update': {
        const call = turn.calls.find((c) => c.tool_call_id === update.toolCallId);
        if (!call) break;
        const before = call.status;
        if (update.title != null) call.title = update.title;
        if (update.kind != null) call.tool_kind = update.kind;
        if (update.status != null) call.status = update.status;
        if (update.rawInput !== undefined) call.raw_input = update.rawInput;
        if (update.rawOutput !== undefined) call.raw_output = update.rawOutput;
        if (update.content != null) call.content = update.content as unknown[];
        // One event when it starts and one when it ends: progress frames each carry the whole output so far.
        if (call.status !== null && TERMINAL.has(call.status) && !(before !== null && TERMINAL.has(before))) this.#emitCall(call);
        break;
      }
      default:
        break;
    }
  }

  #emitCall(call: ToolCallState): void {
    const event: ACPToolCallEvent = {
      ...newEventBase('agent'),
      tool_call_id: call.tool_call_id,
      title: call.title,
      status: call.status,
      tool_kind: call.tool_kind,
      raw_input: call.raw_input,
      raw_output: call.raw_output,
      content: call.content,
      is_error: call.status === 'failed',
      kind: 'ACPToolCallEvent',
    };
    this.#host.emit(event);
  }

  /** The turn's usage as the server reports it, added to the conversation's `stats` under 1.58's `acp-managed`. */
  #recordUsage(usage: TurnUsage | null | undefined): void {
    const before = this.#host.stats()?.usage_to_metrics?.[ACP_MANAGED]?.accumulated_token_usage;
    const model = this.#session?.models.currentModelId ?? ACP_MANAGED;
    const turn = { prompt: usage?.inputTokens ?? 0, completion: usage?.outputTokens ?? 0 };
    const stats = this.#host.stats() ?? { usage_to_metrics: {} };
    this.#host.emit(stateUpdate('stats', {
      ...stats,
      usage_to_metrics: {
        ...stats.usage_to_metrics,
        [ACP_MANAGED]: {
          model_name: ACP_MANAGED,
          accumulated_cost: 0,
          max_budget_per_task: null,
          accumulated_token_usage: {
            model,
            prompt_tokens: (before?.prompt_tokens ?? 0) + turn.prompt,
            completion_tokens: (before?.completion_tokens ?? 0) + turn.completion,
            cache_read_tokens: (before?.cache_read_tokens ?? 0) + (usage?.cachedReadTokens ?? 0),
            cache_write_tokens: 0,
            reasoning_tokens: (before?.reasoning_tokens ?? 0) + (usage?.thoughtTokens ?? 0),
            context_window: 0,
            per_turn_token: turn.prompt + turn.completion,
            response_id: '',
          },
        },
      },
    }));
  }

  /** Tool calls the server opened and never closed: completed after a finished turn, failed after a cancelled or failed one (1.58). */
  #closeInflight(status: 'completed' | 'failed'): void {
    const turn = this.#turn;
    if (!turn) return;
    for (const call of turn.calls) {
      if (call.status !== null && TERMINAL.has(call.status)) continue;
      call.status = status;
      this.#emitCall(call);
    }
  }

  #finish(turn: { text: string[]; thoughts: string[] }): void {
    const text = this.#mask(turn.text.join('')) || NO_RESPONSE;
    const thoughts = this.#mask(turn.thoughts.join(''));
    const id = randomUUID();
    const action: ActionEvent = {
      ...newEventBase('agent'),
      thought: [],
      ...(thoughts ? { reasoning_content: thoughts } : {}),
      action: { kind: 'FinishAction', message: text },
      tool_name: 'finish',
      tool_call_id: id,
      tool_call: { id, name: 'finish', arguments: JSON.stringify({ message: text }), origin: 'completion' },
      llm_response_id: randomUUID(),
      kind: 'ActionEvent',
    };
    this.#host.emit(action);
    this.#host.emit(observationEvent(action, { kind: 'FinishObservation', content: [{ type: 'text', text }], is_error: false }));
  }
}

/** A session id as logs show it (its tail, as 1.58's _fingerprint_session_id): possessing the id is enough to resume the session. */
function fingerprint(id: string): string {
  return id.length <= 8 ? '<short>' : `...${id.slice(-8)}`;
}

function messageBlocks(m: Extract<Event, { kind: 'MessageEvent' }>): ContentBlock[] {
  const blocks: ContentBlock[] = [];
  for (const c of m.llm_message.content ?? []) {
    if (c.type === 'text') blocks.push({ type: 'text', text: c.text });
  }
  for (const c of m.extended_content ?? []) if (c.text) blocks.push({ type: 'text', text: c.text });
  return blocks;
}

function drainBound(): Promise<undefined> {
  return new Promise((resolve) => setTimeout(() => resolve(undefined), CANCEL_DRAIN_MS).unref());
}

/** Settles (undefined) CANCEL_DRAIN_MS after `signal` aborts, unless `prompt` settles first; never while it is not aborted. */
function abortedThenDrain(signal: AbortSignal, prompt: Promise<unknown>): Promise<undefined> {
  return new Promise((resolve) => {
    const onAbort = () => void drainBound().then(resolve);
    signal.addEventListener('abort', onAbort, { once: true });
    void prompt.finally(() => signal.removeEventListener('abort', onAbort)).catch(() => undefined);
  });
}
