// The agent loop: ask the model, record its tool calls as ActionEvents, pass them through the gates,
// execute them and record ObservationEvents, until it finishes, errs, runs out of iterations or
// budget, gets stuck, waits for confirmation or is aborted. Every outcome is an event; run() never
// rejects for model or tool failures. The model's view is rebuilt from the host's events at every
// step (Condensations applied), so the agent holds no conversation state of its own beyond usage
// totals and the shell. Its parts: model-calls.ts (the model, usage, ask_agent), toolbox.ts (tools
// and their sessions, MCP), hooks/run-hooks.ts (hooks across runs), condenser/condense.ts.
import { DEFAULT_MARKETPLACE_PATH, extensionsConfigFromEnv, loadPublicSkills } from './skills/extensions-repo.ts';
import type { Action, ActionEvent, ErrorClassification, Event, ObservationEvent } from '../api/events/index.ts';
import { newEventBase } from '../api/events/index.ts';
import { execute, plan, type ExecuteOutcome } from './act.ts';
import { askMessages } from './ask.ts';
import { condenseOnce, configuredCondenser } from './condenser/condense.ts';
import { AgentCritic } from './critic/agent-critic.ts';
import { condensationNeed, DEFAULT_CONDENSER } from './condenser/summarizing.ts';
import { buildView } from './condenser/view.ts';
import { AnalyzerState } from './confirmation/analyzers/analyze.ts';
import { confirmationGate, usesPredictedRisk } from './confirmation/policy.ts';
import { agentError, assistantMessage, conversationError, environmentMessage, stateUpdate, systemPromptEvent, userReject } from './events.ts';
import { runGates, type ActionGate, type Rejection } from './gate.ts';
import { RunHooks } from './hooks/run-hooks.ts';
import type { ChatMessage, Completion, ModelClientOptions } from './llm/client.ts';
import { McpConfigError, McpConnectError, requestMcpSource } from './mcp/index.ts';
import { createMasker, maskDeep } from './mask.ts';
import { buildMessages, pendingActions } from './messages.ts';
import { ModelView } from './model-view.ts';
import { ModelCalls } from './model-calls.ts';
import { ConversationPlugins } from './plugins/index.ts';
import { ConversationSkills } from './skills/conversation.ts';
import { mergeByName, type Skill } from './skills/types.ts';
import { skillInfo } from './skills/types.ts';
import { detectStuck } from './stuck/detector.ts';
import { dynamicContext, systemPrompt } from './system-prompt.ts';
import { Toolbox, type ToolboxOptions } from './toolbox.ts';
import { runSubAgent, usableSubAgents } from './subagent.ts';
import { BUILTIN_AGENTS, projectAgents, userAgents } from './subagent-definitions.ts';
import { pluginAgent, type PluginAgent } from './plugins/index.ts';
import { routeTaskTool, routeToolSpec } from './tools/route-task.ts';
import { taskTool, wantsTaskTool } from './tools/task.ts';
import { toChatTool, type AgentTool, type ToolContext } from './tools/tool.ts';
import type { AgentHost, ConversationAgent, CreateAgent } from './types.ts';
import { createLogger } from '../util/log.ts';

export { LLM_NOT_CONFIGURED } from './model-calls.ts';

const log = createLogger('agent');

/** The executable actions of one response, and those of them answered by a rejection instead of running. */
interface Batch {
  actions: readonly ActionEvent[];
  rejected: ReadonlyMap<string, Rejection>;
}

export interface AgentOptions extends ToolboxOptions {
  /** An extra gate after the built-in ones (tests; embedders). */
  beforeExecute?: ActionGate;
  model?: ModelClientOptions;
}

export function createAgentWith(options: AgentOptions = {}): CreateAgent {
  return (host) => new Agent(host, options);
}

export const createAgent: CreateAgent = createAgentWith();

class Agent implements ConversationAgent {
  readonly #host: AgentHost;
  #mask: (text: string) => string;
  readonly #toolbox: Toolbox;
  /** MCP servers connected for the system prompt before the first message: the next run's to end. */
  #mcpForNextRun: AbortController | undefined;
  /** The unmasked actions of calls this agent planned; events carry masked copies. */
  readonly #real = new Map<string, Action>();
  /**
   * Run in order over each batch of executable actions; the first gate that rejects an action wins
   * for it (later gates do not see it), and a gate asking for confirmation holds what is left. Pre-tool
   * hooks are not a gate: they run as each action is recorded (see #record).
   */
  readonly #gates: ActionGate[];
  /**
   * Actions a PreToolUse hook blocked in a batch that then waited for confirmation: answered with
   * their rejection when the batch is confirmed (1.58's state.blocked_actions). After a restart the
   * blocks are read back from the HookExecutionEvents (blockedByHook).
   */
  readonly #blocked = new Map<string, Rejection>();
  /** The start request's plugins, fetched in the background from the agent's creation on (their commands trigger on the first message). */
  readonly #plugins: ConversationPlugins;
  /** Settles once the plugins are loaded (or failed to): their skills and tools are added then. */
  readonly #pluginsReady: Promise<void>;
  #closed = false;
  /** The critic of the current run (agent.critic), read when a run starts. */
  #critic: AgentCritic | undefined;
  /** Loaded when the agent is created: keyword triggers apply as user messages are recorded. */
  readonly #skills: ConversationSkills;
  /** Loaded at the first run (project hooks file, hook_config, plugins); SessionStart runs then. */
  readonly #hooks: RunHooks;
  readonly #calls: ModelCalls;
  /** What the model reads, followed step by step. */
  readonly #view = new ModelView();

  constructor(host: AgentHost, opts: AgentOptions) {
    this.#host = host;
    this.#mask = this.#createMask();
    this.#skills = new ConversationSkills(host);
    this.#plugins = new ConversationPlugins(host);
    this.#toolbox = new Toolbox(host, opts, this.#skills);
    // The task tool runs the plugins' agents/*.md as sub-agents: agents like this one, on the same options.
    if (wantsTaskTool(host.request.agent?.tools)) {
      const plugins = this.#plugins;
      // OpenHands' precedence: plugin agents, then the project's, the user's definitions, the built-ins; first wins by name.
      // A definition naming a skill found nowhere is skipped (1.58's _register_definition), logged once.
      const warned = new Set<PluginAgent>();
      const warn = (def: PluginAgent, reason: string) => {
        if (warned.has(def)) return;
        warned.add(def);
        log.warn({ conversationId: host.conversationId, agent: def.name, source: def.source }, `Skipping agent '${def.name}' from ${def.source}: ${reason}`);
      };
      const fileAgents = [...projectAgents(host.workspaceDir), ...userAgents(), ...BUILTIN_AGENTS].map(pluginAgent);
      const agents = () => {
        const seen = new Set<string>();
        const all = [...plugins.plugins.flatMap((p) => p.agents), ...fileAgents];
        return usableSubAgents(all, host.workspaceDir, plugins.skills(), warn).filter((a) => !seen.has(a.name) && (seen.add(a.name), true));
      };
      this.#toolbox.tools.push(taskTool({ agents, run: async (def, prompt, signal, taskId) => {
          const result = await runSubAgent(host, (h) => new Agent(h, opts), def, prompt, signal, plugins.skills());
          this.#calls.recordTask(taskId, result.usage);
          return result;
        } }) as AgentTool);
    }
    // The model-routing tool (an agent profile's meta-profile): the agent server's stores behind it.
    const route = routeToolSpec(host.request.agent?.tools);
    if (route) {
      this.#toolbox.tools.push(routeTaskTool({
        params: route,
        routing: () => host.routing,
        events: () => host.events(),
        classify: (llm, usageId, messages, signal) => this.#calls.classify(llm, usageId, messages, signal),
      }) as AgentTool);
    }
    const emit = (e: Event) => this.#emit(e);
    const fail = (code: string, detail: string, classification?: ErrorClassification) => this.#fail(code, detail, classification);
    this.#hooks = new RunHooks(host, emit, fail);
    this.#gates = [confirmationGate({ policy: () => host.request.confirmation_policy, analyzer: () => (host.securityAnalyzer ? host.securityAnalyzer() : host.request.security_analyzer), state: new AnalyzerState(), record: (e) => this.#emit(e) }), ...(opts.beforeExecute ? [opts.beforeExecute] : [])];
    // Public skills (agent_context.load_public_skills, OpenHands' extensions repository) load in the
    // background beside the plugins: both are in before the system prompt lists the skills.
    const ctx = host.request.agent?.agent_context;
    const publicSkills = ctx?.load_public_skills === true && !host.requestSkillsOnly ? loadPublicSkills(host.extensions ?? extensionsConfigFromEnv(), ctx.marketplace_path === undefined ? DEFAULT_MARKETPLACE_PATH : ctx.marketplace_path) : undefined;
    this.#pluginsReady =
      this.#plugins.wanted || publicSkills
        ? Promise.all([this.#plugins.wanted ? this.#plugins.load() : undefined, publicSkills]).then(([, pub]) => this.#pluginsLoaded(undefined, pub ?? []), (err: unknown) => this.#pluginsLoaded(err))
        : Promise.resolve();
    // Nothing to wait for: the loaded skills are known now (with plugins, once they are in).
    if (!this.#plugins.wanted && !publicSkills) this.#recordSkills();
    this.#calls = new ModelCalls({ host, options: opts.model, emit, mask: (text) => this.#mask(text), fail });
  }

  async run(signal: AbortSignal): Promise<void> {
    const host = this.#host;
    const mcp = this.#mcpForNextRun;
    this.#mcpForNextRun = undefined;
    if (mcp) signal.aborted ? mcp.abort() : signal.addEventListener('abort', () => mcp.abort(), { once: true });
    if (!this.#calls.current()) return;
    const condenser = configuredCondenser(host, (...a) => this.#fail(...a));
    if (condenser === false) return;
    const critic = AgentCritic.configured(host, () => this.#toolbox.tools.map(toChatTool), (...a) => this.#fail(...a));
    if (critic === false) return;
    this.#critic = critic;
    host.setExecutionStatus('running');
    await this.#pluginsReady;
    if (signal.aborted) return;
    if (this.#plugins.error) {
      this.#fail('PluginLoadError', this.#mask(`A plugin could not be loaded: ${this.#plugins.error}`), { kind: 'config', retryable: false, user_action: 'settings' });
      return;
    }
    if (!(await this.#connectMcp(signal))) return;
    this.#ensureSystemPrompt();
    this.#noticeUnrunnableAgents();
    if (!(await this.#hooks.load(() => this.#plugins.hookConfigs()))) return;
    if (await this.#hooks.submitPrompts()) {
      host.setExecutionStatus('finished');
      return;
    }
    const ctx: ToolContext & { signal: AbortSignal } = { workspaceDir: host.workspaceDir, signal, mask: this.#mask };
    const costAtStart = this.#calls.spent();

    // Recorded but unanswered actions (a batch that waited for confirmation, or one a stopped run
    // left unfinished) run first: running again confirms them.
    // A hook's block recorded with a held batch is its answer now.
    const pending = pendingActions(host.events());
    const blocked = new Map<string, Rejection>();
    for (const a of pending) {
      const r = this.#blocked.get(a.id) ?? blockedByHook(host.events(), a.id);
      this.#blocked.delete(a.id);
      if (r) blocked.set(a.id, r);
    }
    if (pending.length && (await this.#finishIf(await this.#execute({ actions: pending, rejected: blocked }, ctx)))) return;

    for (let iteration = 0; ; iteration++) {
      if (signal.aborted || this.#limitReached(iteration, costAtStart) || this.#stuck()) return;
      // Read at every step: switch_llm takes effect at the next model call.
      const model = this.#calls.current();
      if (!model) return;
      const view = this.#view.update(host.events());
      // A request (POST /condense, a context-window error) condenses even without a configured condenser.
      const cfg = condenser ?? (view.unhandledRequest ? DEFAULT_CONDENSER : undefined);
      const viewTokens = this.#calls.viewTokens;
      const need = condensationNeed(view, cfg, { ...(viewTokens !== undefined ? { promptTokens: viewTokens } : {}), ...(host.request.agent?.llm.max_input_tokens ? { maxInputTokens: host.request.agent.llm.max_input_tokens } : {}) });
      if (need && cfg) {
        const outcome = await condenseOnce(this.#calls, model, view, cfg, need, signal, (e) => this.#emit(e));
        if (outcome === 'stop') return;
        // The condensation is this step; the next one reads the condensed view.
        if (outcome === 'condensed') continue;
      }
      // Hooks that hide blocked prompts make a view of their own; otherwise the kept messages serve.
      const visible = this.#hooks.visible(view.events);
      const messages = visible === view.events ? this.#view.messages() : buildMessages(visible);
      const completion = await this.#calls.call(model, messages, this.#toolbox.tools.map(toChatTool), signal, {
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
        const message = maskDeep(assistantMessage(completion), this.#mask);
        // Scored (masked, as the critic service is told nothing the events do not say) before it is
        // recorded, so the MessageEvent carries its critic_result (OpenHands).
        this.#emit(this.#critic ? await this.#critic.annotateMessage(message, signal) : message);
        this.#emitTokens(completion);
        if (await this.#finish()) return;
        continue;
      }
      const runnable = await this.#record(completion, signal);
      if (runnable === 'wait') {
        host.setExecutionStatus('waiting_for_confirmation');
        return;
      }
      const executed = await this.#execute(runnable, ctx);
      this.#emitTokens(completion);
      if (await this.#finishIf(executed)) return;
    }
  }

  /**
   * Forces one condensation now (POST /condense while no run is active), with the configured
   * condenser or OpenHands' defaults. Emits a Condensation, or nothing when there is too little to forget.
   */
  async condense(signal: AbortSignal): Promise<void> {
    const model = this.#calls.current();
    const cfg = model && configuredCondenser(this.#host, (...a) => this.#fail(...a));
    if (!model || cfg === false) return;
    await condenseOnce(this.#calls, model, buildView(this.#host.events()), cfg ?? DEFAULT_CONDENSER, { request: true, events: false }, signal, (e) => this.#emit(e));
  }

  /**
   * A side question (ask_agent) answered from the model's view of the conversation, with its tools
   * (so it reads the tool calls of the history) and no event recorded, even the system prompt of a
   * conversation that never ran. Its usage is counted (ask-agent-llm) without a stats event.
   */
  ask(question: string, signal: AbortSignal): Promise<string> {
    const messages = () => {
      const events = this.#host.events();
      const prompt = events.some((e) => e.kind === 'SystemPromptEvent') ? undefined : this.#systemPromptEvent();
      return askMessages(this.#hooks.visible(buildView(events).events), prompt, question);
    };
    return this.#calls.ask(messages, this.#toolbox.tools.map(toChatTool), signal);
  }

  complete(messages: ChatMessage[], signal: AbortSignal): Promise<string> {
    return this.#calls.plain(messages, signal);
  }

  /** Opens the MCP servers (once per run that finds them closed) and adds their tools; false once a failure ended the run. */
  async #connectMcp(signal: AbortSignal): Promise<boolean> {
    try {
      await this.#toolbox.connectMcp(() => [...requestMcpSource(this.#host.request.agent?.mcp_config), ...this.#plugins.mcpSources(this.#host.request)], signal);
      return true;
    } catch (err) {
      if (!(err instanceof McpConfigError) && !(err instanceof McpConnectError)) throw err;
      if (signal.aborted) return false;
      const code = err instanceof McpConfigError ? 'MCPConfigError' : 'MCPConnectionError';
      this.#fail(code, this.#mask(err.message), { kind: 'config', retryable: err instanceof McpConnectError, user_action: 'settings' });
      return false;
    }
  }

  /** Records a response's actions and passes the executable ones through the gates: what may run now, or 'wait'. */
  async #record(completion: Completion, signal: AbortSignal): Promise<Batch | 'wait'> {
    const planned = plan(this.#toolbox.tools, completion, usesPredictedRisk(this.#host.request.security_analyzer));
    // Scored before they are recorded, so the ActionEvent carries its critic_result (OpenHands).
    await this.#critic?.annotate(planned, signal);
    // 1.58's order: each action's PreToolUse hooks (their HookExecutionEvents) just before its
    // ActionEvent, then the SecurityAnalysisEvent over the whole batch, hook-blocked actions too.
    const blocked = new Map<string, Rejection>();
    for (const p of planned) {
      if (p.event.action) this.#real.set(p.event.id, p.event.action);
      const r = p.error ? undefined : await this.#hooks.preToolUse(p.event);
      if (r) blocked.set(p.event.id, r);
      this.#emit(p.event);
    }
    for (const p of planned) if (p.error) this.#emit(agentError(p.event.tool_name, p.event.tool_call_id, p.error));
    const executable = planned.filter((p) => !p.error).map((p) => p.event);
    if (executable.length === 0) return { actions: [], rejected: new Map() };
    const verdict = await runGates(this.#gates, executable, signal);
    // As 1.58, a batch the policy holds waits whole, hook-blocked actions too: their rejections are
    // recorded when it is confirmed (a rejection by the user answers them like the others).
    const held = verdict.wait && executable.some((a) => !verdict.rejected.has(a.id));
    if (!held) for (const [id, r] of blocked) verdict.rejected.set(id, r);
    else for (const [id, r] of blocked) this.#blocked.set(id, r);
    if (held) {
      // Rejected before the hold (a gate earlier in the chain): answered now, the rest waits.
      for (const a of executable) {
        const r = verdict.rejected.get(a.id);
        if (r) this.#emit(userReject(a, r.reason, r.source));
      }
      return 'wait';
    }
    // The rejections are answered in the batch's order with the observations (#execute), as 1.58.
    return { actions: executable, rejected: verdict.rejected };
  }

  /** Max iterations and max budget per run; true once the run ended with a ConversationErrorEvent. */
  #limitReached(iteration: number, costAtStart: number): boolean {
    const max = this.#host.maxIterations;
    if (iteration >= max) {
      this.#fail('MaxIterationsReached', `The agent reached the maximum of ${max} iterations in one run. Send a message to continue.`);
      return true;
    }
    const budget = this.#host.request.max_budget_per_run;
    const spent = this.#calls.spent() - costAtStart;
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

  userMessageSkills(text: string) {
    return this.#skills.forUserMessage(text, this.#host.events());
  }

  ready(): Promise<void> {
    return this.#pluginsReady;
  }

  async recordSystemPrompt(): Promise<void> {
    if (this.#host.events().some((e) => e.kind === 'SystemPromptEvent')) return;
    await this.#pluginsReady;
    if (this.#closed || this.#plugins.error) return;
    try {
      // The MCP tools are part of the prompt. A failure is left to the run, which records it as the
      // conversation's error.
      // The servers connected here belong to the next run: its abort (pause, interrupt) lets them go.
      this.#mcpForNextRun = new AbortController();
      await this.#toolbox.connectMcp(() => [...requestMcpSource(this.#host.request.agent?.mcp_config), ...this.#plugins.mcpSources(this.#host.request)], this.#mcpForNextRun.signal);
    } catch (err) {
      if (err instanceof McpConfigError || err instanceof McpConnectError) return;
      throw err;
    }
    if (!this.#closed) this.#ensureSystemPrompt();
  }

  /** Once per conversation (a restart reloads the plugins): the plugin subagents that will not run (no task tool). */
  #noticeUnrunnableAgents(): void {
    if (wantsTaskTool(this.#host.request.agent?.tools)) return;
    const notice = this.#plugins.agentsNotice();
    if (!notice) return;
    const said = this.#host.events().some((e) => e.kind === 'MessageEvent' && e.source === 'environment' && (e.llm_message.content ?? []).some((c) => c.type === 'text' && c.text === notice));
    if (!said) this.#emit(environmentMessage(notice));
  }

  /** Plugin skills join the conversation's (before the system prompt lists them), with invoke_skill if they bring the first AgentSkills. */
  #pluginsLoaded(err?: unknown, publicSkills: readonly Skill[] = []): void {
    if (err !== undefined) this.#plugins.error ??= `unexpected failure: ${err instanceof Error ? err.message : String(err)}`;
    if (this.#closed) return;
    // Marketplace standalone skills < public skills < everything the conversation already has.
    this.#skills.addBase(mergeByName(this.#plugins.marketplaceSkills, publicSkills));
    const skills = this.#plugins.skills();
    this.#skills.addExtra(skills);
    this.#toolbox.tools.push(...this.#skills.toolsMissingFrom(this.#toolbox.tools));
    this.#recordSkills();
  }

  /**
   * Every skill the conversation loaded besides the request's own (user, project, public, plugin
   * skills), as OpenHands 1.58 has them in agent.agent_context.skills (its AgentContext resolves
   * load_user_skills / load_public_skills into `skills`, LocalConversation adds the project's and
   * the plugins'): kept with the conversation so that ConversationInfo lists them.
   */
  #recordSkills(): void {
    this.#host.recordPluginSkills?.(this.#skills.all.filter((s) => s.origin !== 'request').map(skillInfo));
  }

  secretsChanged(): void {
    // The terminal reads host.secrets at each command: nothing to export ahead of time.
    this.#mask = this.#createMask();
  }

  llmChanged(): void {
    // The next model call makes the new client; the new key is masked from now on.
    this.#mask = this.#createMask();
  }

  #createMask(): (text: string) => string {
    // The model API key is a secret of the conversation too, should anything ever echo it.
    const host = this.#host;
    return createMasker(host.llm?.apiKey ? { ...host.secrets, '(llm api key)': host.llm.apiKey } : host.secrets);
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#hooks.close();
    await this.#toolbox.closeMcp();
    await this.#plugins.close();
    await this.#toolbox.close();
  }

  async #finishIf(outcome: ExecuteOutcome): Promise<boolean> {
    if (outcome !== 'finished') return false;
    // Iterative refinement: a finish the critic scored too low goes on with its follow-up message.
    const followup = this.#critic?.followup(this.#host.events());
    if (followup) {
      for (const e of followup) this.#emit(e);
      return false;
    }
    return this.#finish();
  }

  /** The agent wants to stop: Stop hooks may deny it (their feedback goes to the model, the run goes on). */
  async #finish(): Promise<boolean> {
    if (!(await this.#hooks.stop())) return false;
    this.#host.setExecutionStatus('finished');
    return true;
  }

  /** Runs a batch (its rejected actions answered in place); PostToolUse hooks see each observation once the batch ran. */
  async #execute(batch: Batch, ctx: ToolContext & { signal: AbortSignal }): Promise<ExecuteOutcome> {
    const observed: ObservationEvent[] = [];
    const outcome = await execute(this.#toolbox.tools, batch.actions, ctx, (e) => {
      this.#emit(e);
      if (e.kind === 'ObservationEvent') observed.push(e);
    }, this.#real, batch.rejected);
    await this.#hooks.postToolUse(batch.actions.filter((a) => !batch.rejected.has(a.id)), observed);
    return outcome;
  }

  /** The one way out: every event is masked here, whatever a tool or the model put into it. */
  #emitTokens(completion: Completion): void {
    const tokens = this.#calls.tokens(completion);
    if (tokens) this.#emit(tokens);
  }

  #emit(event: Event): void {
    let fired: string[] = [];
    if (event.kind === 'ObservationEvent') ({ event, fired } = this.#withPathRules(event));
    this.#host.emit(maskDeep(event, this.#mask));
    // OpenHands 1.58 keeps the names in state.activated_path_rules (in ConversationInfo); a state
    // update tells live clients too, and lets the host keep them across restarts and forks.
    if (fired.length) this.#host.emit(stateUpdate('activated_path_rules', this.#skills.activatedPathRules(this.#host.events())));
  }

  /** Path rules (nested AGENTS.md, `paths:` skills) for the file the observed action touched. */
  #withPathRules(event: ObservationEvent): { event: ObservationEvent; fired: string[] } {
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
    return systemPromptEvent(this.#toolbox.tools, systemPrompt(this.#toolbox.tools), context);
  }

  #fail(code: string, detail: string, classification?: ErrorClassification): void {
    this.#emit(conversationError(code, detail, classification));
    this.#host.setExecutionStatus('error');
  }
}

/** A PreToolUse block recorded for an action (its HookExecutionEvent), as a rejection; undefined when none blocked it. */
function blockedByHook(events: readonly Event[], actionId: string): Rejection | undefined {
  const e = events.find((x) => x.kind === 'HookExecutionEvent' && x.hook_event_type === 'PreToolUse' && x.action_id === actionId && x.blocked === true);
  return e && e.kind === 'HookExecutionEvent' ? { reason: e.reason ?? 'Blocked by hook', source: 'hook' } : undefined;
}
