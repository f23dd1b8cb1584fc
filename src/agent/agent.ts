// The agent loop: ask the model, record its tool calls as ActionEvents, pass them through the gates,
// execute them and record ObservationEvents, until it finishes, errs, runs out of iterations or
// budget, gets stuck, waits for confirmation or is aborted. Every outcome is an event; run() never
// rejects for model or tool failures. The model's view is rebuilt from the host's events at every
// step (Condensations applied), so the agent holds no conversation state of its own beyond usage
// totals and the shell.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import type { Action, ActionEvent, Event, ObservationEvent } from '../api/events/index.ts';
import { BadGateway, Conflict, Invalid } from '../api/errors.ts';
import { newEventBase } from '../api/events/index.ts';
import { execute, plan, type ExecuteOutcome } from './act.ts';
import { ASK_USAGE_ID, askMessages } from './ask.ts';
import {
  condensationEvent,
  condensationNeed,
  condenserConfig,
  CondenserConfigError,
  DEFAULT_CONDENSER,
  planCondensation,
  shrinkLimit,
  SUMMARY_RETRIES,
  summaryMessages,
  type CondensationNeed,
  type CondenserConfig,
} from './condenser/summarizing.ts';
import { buildView, type View } from './condenser/view.ts';
import { confirmationGate, usesPredictedRisk } from './confirmation/policy.ts';
import { agentError, assistantMessage, conversationError, environmentMessage, stateUpdate, systemPromptEvent, userReject } from './events.ts';
import { runGates, type ActionGate } from './gate.ts';
import { HookRunner, resolveHooks, STOP_FEEDBACK_PREFIX } from './hooks/index.ts';
import { ConversationMcp, McpConfigError, McpConnectError, requestMcpSource } from './mcp/index.ts';
import { ConversationPlugins } from './plugins/index.ts';
import { ModelClient, type ChatMessage, type ChatTool, type Completion, type ModelClientOptions } from './llm/client.ts';
import { toModelCallError } from './llm/errors.ts';
import { detectStuck } from './stuck/detector.ts';
import { createMasker, maskDeep } from './mask.ts';
import { buildMessages, pendingActions } from './messages.ts';
import { ConversationSkills } from './skills/conversation.ts';
import { skillInfo } from './skills/types.ts';
import { dynamicContext, systemPrompt } from './system-prompt.ts';
import { optionalTools } from './tools/optional-tools.ts';
import { BrowserSession } from './tools/browser/session.ts';
import { browserTools, wantsBrowser } from './tools/browser/tools.ts';
import { fileEditorTool } from './tools/file-editor.ts';
import { finishTool, thinkTool } from './tools/simple-tools.ts';
import { TerminalSession, type TerminalSessionOptions } from './tools/terminal-session.ts';
import { terminalTool } from './tools/terminal.ts';
import { toChatTool, type AgentTool, type ToolContext } from './tools/tool.ts';
import type { AgentHost, ConversationAgent, CreateAgent, LlmConfig } from './types.ts';
import { addUsage, priced, statsValue, usageFromStats, type BucketState, type UsageBucket } from './usage.ts';
import { createLogger } from '../util/log.ts';

const log = createLogger('agent');

export const LLM_NOT_CONFIGURED =
  'No model is configured for this conversation. Set LLM_MODEL (and LLM_BASE_URL, LLM_API_KEY for an OpenAI-compatible endpoint) for agentyard, or send agent.llm in the start request.';

export interface AgentOptions {
  /** An extra gate after the built-in ones (tests; embedders). */
  beforeExecute?: ActionGate;
  model?: ModelClientOptions;
  terminal?: TerminalSessionOptions;
  /** Where full texts of capped terminal outputs go (outside the workspace). Default: a temp dir per agent, removed by close(). */
  outputDir?: string;
}

export function createAgentWith(options: AgentOptions = {}): CreateAgent {
  return (host) => new Agent(host, options);
}

export const createAgent: CreateAgent = createAgentWith();

class Agent implements ConversationAgent {
  readonly #host: AgentHost;
  readonly #opts: AgentOptions;
  #mask: (text: string) => string;
  readonly #tools: AgentTool[];
  /** The unmasked actions of calls this agent planned; events carry masked copies. */
  readonly #real = new Map<string, Action>();
  /**
   * Run in order over each batch of executable actions; the first gate that rejects an action wins
   * for it (later gates do not see it), and a gate asking for confirmation holds what is left. Pre-tool
   * hooks (rejection_source `hook`) go before the confirmation policy, so a blocked action never asks.
   */
  readonly #gates: ActionGate[];
  #terminal: TerminalSession | undefined;
  #browser: BrowserSession | undefined;
  /** MCP servers: connected at a run's start, closed when a run is aborted (pause, interrupt, delete) or the agent closes. */
  readonly #mcp: ConversationMcp;
  /** The start request's plugins, fetched in the background from the agent's creation on (their commands trigger on the first message). */
  readonly #plugins: ConversationPlugins;
  /** Settles once the plugins are loaded (or failed to): their skills and tools are added then. */
  readonly #pluginsReady: Promise<void>;
  #closed = false;
  #ownOutputDir: string | undefined;
  /** Loaded when the agent is created: keyword triggers apply as user messages are recorded. */
  readonly #skills: ConversationSkills;
  /** Loaded at the first run (project hooks file, hook_config, plugins); SessionStart runs then. */
  #hooks: HookRunner | undefined;
  /** Prompt tokens of the last agent call since the last condensation: the view's size in tokens, one step behind. */
  #viewTokens: number | undefined;
  /** The model client and the `host.llm` it was made for. */
  #client: { config: LlmConfig; client: ModelClient } | undefined;
  /** Usage per bucket (agent calls, condenser summaries), continued from the recorded stats. */
  #usage: Record<UsageBucket, BucketState>;

  constructor(host: AgentHost, opts: AgentOptions) {
    this.#host = host;
    this.#opts = opts;
    this.#mask = this.#createMask();
    this.#skills = new ConversationSkills(host);
    this.#plugins = new ConversationPlugins(host);
    this.#mcp = new ConversationMcp({ cwd: host.workspaceDir, secrets: () => host.secrets });
    this.#tools = [
      terminalTool({
        session: () => (this.#terminal ??= new TerminalSession(host.workspaceDir, opts.terminal)),
        secrets: () => host.secrets,
        outputDir: () => opts.outputDir ?? (this.#ownOutputDir ??= join(tmpdir(), `agentyard-outputs-${randomBytes(6).toString('hex')}`)),
      }),
      fileEditorTool(),
      thinkTool,
      finishTool,
      ...(wantsBrowser(host.request.agent?.tools) ? browserTools(() => (this.#browser ??= new BrowserSession(undefined, host.persistenceDir ? { recordingsDir: join(host.persistenceDir, 'browser_recordings') } : {}))) : []),
      ...optionalTools(host),
      ...this.#skills.tools(),
    ];
    this.#gates = [
      (batch, signal) => (this.#hooks ? this.#hooks.preToolUseGate()(batch, signal) : Promise.resolve({ kind: 'execute' })),
      confirmationGate(() => host.request.confirmation_policy),
      ...(opts.beforeExecute ? [opts.beforeExecute] : []),
    ];
    this.#pluginsReady = this.#plugins.wanted ? this.#plugins.load().then(() => this.#pluginsLoaded(), (err: unknown) => this.#pluginsLoaded(err)) : Promise.resolve();
    const recorded = host.stats();
    this.#usage = { agent: { total: usageFromStats(recorded, 'agent') }, condenser: { total: usageFromStats(recorded, 'condenser') }, [ASK_USAGE_ID]: { total: usageFromStats(recorded, ASK_USAGE_ID) } };
  }

  async run(signal: AbortSignal): Promise<void> {
    const host = this.#host;
    if (!this.#model()) return;
    const condenser = this.#condenser();
    if (condenser === false) return;
    host.setExecutionStatus('running');
    await this.#pluginsReady;
    if (signal.aborted) return;
    if (this.#plugins.error) {
      this.#fail('PluginLoadError', this.#mask(`A plugin could not be loaded: ${this.#plugins.error}`), { kind: 'config', retryable: false, user_action: 'settings' });
      return;
    }
    if (!(await this.#connectMcp(signal))) return;
    this.#ensureSystemPrompt();
    const hooks = await this.#loadHooks();
    if (!hooks) return;
    if (await this.#submitPrompts(hooks)) {
      host.setExecutionStatus('finished');
      return;
    }
    const ctx: ToolContext & { signal: AbortSignal } = { workspaceDir: host.workspaceDir, signal, mask: this.#mask };
    const costAtStart = this.#spent();

    // Recorded but unanswered actions (a batch that waited for confirmation, or one a stopped run
    // left unfinished) run first: running again confirms them.
    const pending = pendingActions(host.events());
    if (pending.length && (await this.#finishIf(await this.#execute(pending, ctx)))) return;

    for (let iteration = 0; ; iteration++) {
      if (signal.aborted || this.#limitReached(iteration, costAtStart) || this.#stuck()) return;
      // Read at every step: switch_llm takes effect at the next model call.
      const model = this.#model();
      if (!model) return;
      const view = buildView(host.events());
      // A request (POST /condense, a context-window error) condenses even without a configured condenser.
      const cfg = condenser ?? (view.unhandledRequest ? DEFAULT_CONDENSER : undefined);
      const need = condensationNeed(view, cfg, { ...(this.#viewTokens !== undefined ? { promptTokens: this.#viewTokens } : {}), ...(host.request.agent?.llm.max_input_tokens ? { maxInputTokens: host.request.agent.llm.max_input_tokens } : {}) });
      if (need && cfg) {
        const outcome = await this.#condense(model, view, cfg, need, signal);
        if (outcome === 'stop') return;
        // The condensation is this step; the next one reads the condensed view.
        if (outcome === 'condensed') continue;
      }
      const completion = await this.#call(model, buildMessages(this.#visible(view.events)), this.#tools.map(toChatTool), signal, {
        stream: host.request.agent?.llm.stream === true,
        // Once: a context-window error right after an unanswered request is not cured by asking again.
        condensable: condenser !== undefined && !view.unhandledRequest,
        bucket: 'agent',
      });
      if (completion === 'condense') {
        this.#emit({ ...newEventBase('environment'), kind: 'CondensationRequest' });
        continue;
      }
      if (!completion) return;
      // A response that arrived is recorded even if the run was stopped meanwhile: its actions stay pending.
      if (completion.toolCalls.length === 0) {
        this.#emit(assistantMessage(completion));
        if (await this.#finish()) return;
        continue;
      }
      const runnable = await this.#record(completion, signal);
      if (runnable === 'wait') {
        host.setExecutionStatus('waiting_for_confirmation');
        return;
      }
      if (await this.#finishIf(await this.#execute(runnable, ctx))) return;
    }
  }

  /**
   * Forces one condensation now (POST /condense while no run is active), with the configured
   * condenser or OpenHands' defaults. Emits a Condensation, or nothing when there is too little to forget.
   */
  async condense(signal: AbortSignal): Promise<void> {
    const model = this.#model();
    const cfg = model && this.#condenser();
    if (!model || cfg === false) return;
    await this.#condense(model, buildView(this.#host.events()), cfg ?? DEFAULT_CONDENSER, { request: true, events: false }, signal);
  }

  /** Opens the MCP servers (once per run that finds them closed) and adds their tools; false once a failure ended the run. */
  async #connectMcp(signal: AbortSignal): Promise<boolean> {
    if (this.#mcp.connected) return true;
    try {
      const sources = [...requestMcpSource(this.#host.request.agent?.mcp_config), ...this.#plugins.mcpSources(this.#host.request)];
      if (sources.length === 0) return true;
      const tools = await this.#mcp.connect(sources, signal);
      for (let i = this.#tools.length - 1; i >= 0; i--) if (this.#tools[i]!.definitionKind === 'MCPToolDefinition') this.#tools.splice(i, 1);
      // A built-in tool keeps its name; an MCP tool of the same name is left out.
      this.#tools.push(...tools.filter((t) => !this.#tools.some((b) => b.name === t.name)));
    } catch (err) {
      if (!(err instanceof McpConfigError) && !(err instanceof McpConnectError)) throw err;
      if (signal.aborted) return false;
      const code = err instanceof McpConfigError ? 'MCPConfigError' : 'MCPConnectionError';
      this.#fail(code, this.#mask(err.message), { kind: 'config', retryable: err instanceof McpConnectError, user_action: 'settings' });
      return false;
    }
    // A paused or interrupted run lets its servers go; the next run opens them again.
    signal.addEventListener('abort', () => void this.#mcp.close(), { once: true });
    return true;
  }

  /** Records a response's actions and passes the executable ones through the gates: what may run now, or 'wait'. */
  async #record(completion: Completion, signal: AbortSignal): Promise<ActionEvent[] | 'wait'> {
    const planned = plan(this.#tools, completion, usesPredictedRisk(this.#host.request.security_analyzer));
    for (const p of planned) {
      if (p.event.action) this.#real.set(p.event.id, p.event.action);
      this.#emit(p.event);
    }
    for (const p of planned) if (p.error) this.#emit(agentError(p.event.tool_name, p.event.tool_call_id, p.error));
    const executable = planned.filter((p) => !p.error).map((p) => p.event);
    if (executable.length === 0) return [];
    const verdict = await runGates(this.#gates, executable, signal);
    for (const a of executable) {
      const r = verdict.rejected.get(a.id);
      if (r) this.#emit(userReject(a, r.reason, r.source));
    }
    const runnable = executable.filter((a) => !verdict.rejected.has(a.id));
    return verdict.wait && runnable.length ? 'wait' : runnable;
  }

  /** Max iterations and max budget per run; true once the run ended with a ConversationErrorEvent. */
  #limitReached(iteration: number, costAtStart: number): boolean {
    const max = this.#host.maxIterations;
    if (iteration >= max) {
      this.#fail('MaxIterationsReached', `The agent reached the maximum of ${max} iterations in one run. Send a message to continue.`);
      return true;
    }
    const budget = this.#host.request.max_budget_per_run;
    const spent = this.#spent() - costAtStart;
    if (budget != null && spent >= budget) {
      this.#fail('MaxBudgetReached', `The agent spent ${spent.toFixed(4)} USD in this run, reaching max_budget_per_run (${budget}). Send a message to continue.`, { kind: 'quota', retryable: false, user_action: 'settings' });
      return true;
    }
    return false;
  }

  /** True once the run ended as stuck; gives the one-time nudge for a repeated failing call. */
  #stuck(): boolean {
    if (this.#host.request.stuck_detection === false) return false;
    const verdict = detectStuck(this.#host.events());
    if (verdict.kind === 'nudge') this.#emit(environmentMessage(verdict.text));
    if (verdict.kind !== 'stuck') return false;
    // OpenHands records only the status change; the log says which pattern.
    log.warn({ conversationId: this.#host.conversationId, pattern: verdict.pattern }, verdict.detail);
    this.#host.setExecutionStatus('stuck');
    return true;
  }

  /** The configured condenser; false once an unusable configuration ended the run with an error. */
  #condenser(): CondenserConfig | undefined | false {
    try {
      return condenserConfig(this.#host.request.agent?.condenser);
    } catch (err) {
      if (!(err instanceof CondenserConfigError)) throw err;
      this.#fail('CondenserConfigError', err.message, { kind: 'config', retryable: false, user_action: 'settings' });
      return false;
    }
  }

  /** One condensation: the model summarizes the forgotten events (not streamed), then a Condensation is recorded. */
  async #condense(model: ModelClient, view: View, cfg: CondenserConfig, need: CondensationNeed, signal: AbortSignal): Promise<'condensed' | 'nothing' | 'stop'> {
    const forget = planCondensation(view, cfg, need);
    if (!forget) return 'nothing';
    // A summary request that does not fit is retried with shorter event texts (OpenHands' hard reset scaling).
    for (let attempt = 0, limit = Infinity; ; attempt++) {
      const summary = await this.#call(model, summaryMessages(forget.forgotten, limit), [], signal, { stream: false, condensable: attempt < SUMMARY_RETRIES, bucket: 'condenser' });
      if (summary === 'condense') {
        limit = shrinkLimit(forget.forgotten, limit);
        continue;
      }
      if (!summary) return 'stop';
      this.#emit(condensationEvent(forget, summary));
      this.#viewTokens = undefined;
      return 'condensed';
    }
  }

  /** The model client for `host.llm` (made again once switch_llm replaced it), or undefined after recording why there is none. */
  #model(): ModelClient | undefined {
    const llm = this.#host.llm;
    if (!llm) {
      this.#fail('LLMNotConfigured', LLM_NOT_CONFIGURED, { kind: 'config', retryable: false, user_action: 'settings' });
      return undefined;
    }
    try {
      return this.#clientFor(llm);
    } catch (err) {
      const e = toModelCallError(err);
      this.#fail(e.code, e.message, e.classification);
      return undefined;
    }
  }

  /** Throws ModelCallError('LLMConfigError') for a configuration that cannot work. */
  #clientFor(llm: LlmConfig): ModelClient {
    if (this.#client?.config !== llm) this.#client = { config: llm, client: new ModelClient(llm, this.#opts.model) };
    return this.#client.client;
  }

  /**
   * A side question (ask_agent) answered from the model's view of the conversation, with its tools
   * (so it reads the tool calls of the history) and no event recorded, even the system prompt of a
   * conversation that never ran. Its usage is counted (ask-agent-llm) without a stats event.
   */
  async ask(question: string, signal: AbortSignal): Promise<string> {
    const llm = this.#host.llm;
    if (!llm) throw new Conflict(LLM_NOT_CONFIGURED);
    let model: ModelClient;
    let completion: Completion;
    try {
      model = this.#clientFor(llm);
      const events = this.#host.events();
      const prompt = events.some((e) => e.kind === 'SystemPromptEvent') ? undefined : this.#systemPromptEvent();
      completion = await model.complete(askMessages(this.#visible(buildView(events).events), prompt, question), this.#tools.map(toChatTool), signal);
    } catch (err) {
      const e = toModelCallError(err);
      if (e.code === 'LLMConfigError') throw new Conflict(this.#mask(e.message));
      throw new BadGateway(`The model could not answer (${e.code}): ${this.#mask(e.message)}`);
    }
    this.#recordUsage(model.model, completion, ASK_USAGE_ID);
    if (!completion.content?.trim()) throw new BadGateway('The model answered the question with tool calls instead of text');
    return this.#mask(completion.content);
  }

  /**
   * One model call with its usage recorded. Undefined when the run must end (aborted, or failed with
   * a ConversationErrorEvent); 'condense' for a context-window error that a condensation may cure.
   */
  async #call(model: ModelClient, messages: ChatMessage[], tools: ChatTool[], signal: AbortSignal, o: { stream: boolean; condensable: boolean; bucket: UsageBucket }): Promise<Completion | 'condense' | undefined> {
    let completion: Completion;
    const onDelta = o.stream ? this.#host.streamDelta?.bind(this.#host) : undefined;
    try {
      completion = await model.complete(messages, tools, signal, { stream: o.stream, ...(onDelta ? { onDelta: (d) => onDelta(maskDeep(d, this.#mask)) } : {}) });
    } catch (err) {
      if (signal.aborted || err instanceof OpenAI.APIUserAbortError) return undefined;
      const e = toModelCallError(err);
      if (e.code === 'LLMContextWindowExceedError' && o.condensable) return 'condense';
      this.#fail(e.code, e.message, e.classification);
      return undefined;
    }
    this.#recordUsage(model.model, completion, o.bucket);
    return completion;
  }

  userMessageSkills(text: string) {
    return this.#skills.forUserMessage(text, this.#host.events());
  }

  ready(): Promise<void> {
    return this.#pluginsReady;
  }

  /** Plugin skills join the conversation's (before the system prompt lists them), with invoke_skill if they bring the first AgentSkills. */
  #pluginsLoaded(err?: unknown): void {
    if (err !== undefined) this.#plugins.error ??= `unexpected failure: ${err instanceof Error ? err.message : String(err)}`;
    if (this.#closed) return;
    const skills = this.#plugins.skills();
    this.#skills.addExtra(skills);
    this.#tools.push(...this.#skills.toolsMissingFrom(this.#tools));
    this.#host.recordPluginSkills?.(skills.map(skillInfo));
  }

  secretsChanged(): void {
    // The terminal reads host.secrets at each command: nothing to export ahead of time.
    this.#mask = this.#createMask();
  }

  llmChanged(): void {
    // The next #model() makes the new client; the new key is masked from now on.
    this.#mask = this.#createMask();
  }

  #createMask(): (text: string) => string {
    // The model API key is a secret of the conversation too, should anything ever echo it.
    const host = this.#host;
    return createMasker(host.llm?.apiKey ? { ...host.secrets, '(llm api key)': host.llm.apiKey } : host.secrets);
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#hooks) {
      const hooks = this.#hooks;
      this.#hooks = undefined;
      // The conversation may be gone (deleted): its SessionEnd record has nowhere to go then.
      await hooks.sessionEnd().catch((err: unknown) => log.warn({ err, conversationId: this.#host.conversationId }, 'SessionEnd hooks could not be recorded'));
    }
    await this.#mcp.close();
    await this.#plugins.close();
    await this.#terminal?.close();
    this.#terminal = undefined;
    await this.#browser?.close();
    this.#browser = undefined;
    if (this.#ownOutputDir) rmSync(this.#ownOutputDir, { recursive: true, force: true });
    this.#ownOutputDir = undefined;
  }

  async #finishIf(outcome: ExecuteOutcome): Promise<boolean> {
    return outcome === 'finished' && this.#finish();
  }

  /** The agent wants to stop: Stop hooks may deny it (their feedback goes to the model, the run goes on). */
  async #finish(): Promise<boolean> {
    const verdict = this.#hooks ? await this.#hooks.stop() : { stop: true, feedback: null };
    if (!verdict.stop) {
      if (verdict.feedback) this.#emit(environmentMessage(`${STOP_FEEDBACK_PREFIX} ${verdict.feedback}`));
      return false;
    }
    this.#host.setExecutionStatus('finished');
    return true;
  }

  /** Runs actions; PostToolUse hooks see each observation once the batch ran. */
  async #execute(actions: readonly ActionEvent[], ctx: ToolContext & { signal: AbortSignal }): Promise<ExecuteOutcome> {
    const observed: ObservationEvent[] = [];
    const outcome = await execute(this.#tools, actions, ctx, (e) => {
      this.#emit(e);
      if (e.kind === 'ObservationEvent') observed.push(e);
    }, this.#real);
    for (const o of observed) {
      const action = actions.find((a) => a.id === o.action_id);
      if (action && this.#hooks) await this.#hooks.postToolUse(action, o);
    }
    return outcome;
  }

  /** The conversation's hooks, loaded once (SessionStart runs then); undefined after a bad configuration ended the run. */
  async #loadHooks(): Promise<HookRunner | undefined> {
    if (this.#hooks) return this.#hooks;
    let config;
    try {
      // Plugin hooks (src/agent/plugins) are passed as the extra configs.
      config = await resolveHooks(this.#host, await this.#plugins.hookConfigs());
    } catch (err) {
      if (!(err instanceof Invalid)) throw err;
      this.#fail('HookConfigError', `Invalid hook configuration: ${err.detail.map((i) => i.msg).join('; ')}`, { kind: 'config', retryable: false, user_action: 'settings' });
      return undefined;
    }
    const hooks = (this.#hooks = new HookRunner(config, this.#host, (e) => this.#emit(e)));
    const start = await hooks.sessionStart();
    if (start.additionalContext) this.#emit(environmentMessage(start.additionalContext));
    return hooks;
  }

  /**
   * UserPromptSubmit hooks for user messages they have not seen yet. True when one blocked: the
   * run ends as finished without a model call (the blocked message stays out of the model's view).
   */
  async #submitPrompts(hooks: HookRunner): Promise<boolean> {
    if (!hooks.has('UserPromptSubmit')) return false;
    const events = this.#host.events();
    const seen = hooks.submittedMessages(events);
    const fresh = events.filter((e): e is Extract<Event, { kind: 'MessageEvent' }> => e.kind === 'MessageEvent' && e.source === 'user' && !seen.has(e.id));
    let blocked = false;
    for (const m of fresh) {
      const o = await hooks.userPromptSubmit(m);
      if (o.blocked) blocked = true;
      else if (o.additionalContext) this.#emit(environmentMessage(o.additionalContext));
    }
    return blocked;
  }

  /** The events the model sees: without user messages a UserPromptSubmit hook blocked. */
  #visible(events: readonly Event[]): readonly Event[] {
    if (!this.#hooks?.has('UserPromptSubmit')) return events;
    const blocked = this.#hooks.blockedMessages(this.#host.events());
    return blocked.size ? events.filter((e) => !blocked.has(e.id)) : events;
  }

  /** The one way out: every event is masked here, whatever a tool or the model put into it. */
  #emit(event: Event): void {
    if (event.kind === 'ObservationEvent') event = this.#withPathRules(event);
    this.#host.emit(maskDeep(event, this.#mask));
  }

  /** Path rules (nested AGENTS.md, `paths:` skills) for the file the observed action touched. */
  #withPathRules(event: ObservationEvent): ObservationEvent {
    const events = this.#host.events();
    const action = this.#real.get(event.action_id) ?? events.find((e): e is ActionEvent => e.kind === 'ActionEvent' && e.id === event.action_id)?.action;
    return this.#skills.withPathRules(event, action, events);
  }

  #ensureSystemPrompt(): void {
    if (this.#host.events().some((e) => e.kind === 'SystemPromptEvent')) return;
    this.#emit(this.#systemPromptEvent());
  }

  #systemPromptEvent(): Event {
    const context = [dynamicContext(this.#host.workspaceDir, Object.keys(this.#host.secrets)), this.#skills.promptSection(this.#host.llm?.model)].filter(Boolean).join('\n\n');
    return systemPromptEvent(this.#tools, systemPrompt(this.#tools), context);
  }

  #recordUsage(model: string, completion: Completion, bucket: UsageBucket): void {
    const usage = priced(completion.usage, this.#host.request.agent?.llm);
    this.#usage[bucket] = { total: addUsage(this.#usage[bucket].total, usage), last: { usage, responseId: completion.responseId } };
    if (bucket === 'agent' && usage.promptTokens > 0) this.#viewTokens = usage.promptTokens;
    const stats = statsValue(model, this.#usage, this.#host.request.max_budget_per_run ?? null);
    // A side question leaves no event (OpenHands); its usage is kept, and in the next stats event.
    if (bucket === ASK_USAGE_ID) this.#host.recordStats?.(stats);
    else this.#emit(stateUpdate('stats', stats));
  }

  /** What the model calls cost so far, summaries included (the budget counts both). */
  #spent(): number {
    return this.#usage.agent.total.cost + this.#usage.condenser.total.cost;
  }

  #fail(code: string, detail: string, classification?: Parameters<typeof conversationError>[2]): void {
    this.#emit(conversationError(code, detail, classification));
    this.#host.setExecutionStatus('error');
  }
}

