// The agent loop: ask the model, record its tool calls as ActionEvents, pass them through the gate,
// execute them and record ObservationEvents, until it finishes, errs, runs out of iterations, waits
// for confirmation or is aborted. Every outcome is an event; run() never rejects for model or tool
// failures. The model's view is rebuilt from the host's events at every step, so the agent holds
// no conversation state of its own beyond usage totals and the shell.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import type { Action, Event } from '../api/events/index.ts';
import { newEventBase } from '../api/events/index.ts';
import { execute, plan, type ExecuteOutcome } from './act.ts';
import { agentError, assistantMessage, conversationError, stateUpdate, userReject } from './events.ts';
import type { ActionGate } from './gate.ts';
import { ModelClient, type Completion, type ModelClientOptions } from './llm/client.ts';
import { toModelCallError } from './llm/errors.ts';
import { createMasker, maskDeep } from './mask.ts';
import { buildMessages, pendingActions } from './messages.ts';
import { dynamicContext, systemPrompt } from './system-prompt.ts';
import { fileEditorTool } from './tools/file-editor.ts';
import { finishTool, thinkTool } from './tools/simple-tools.ts';
import { TerminalSession, type TerminalSessionOptions } from './tools/terminal-session.ts';
import { terminalTool } from './tools/terminal.ts';
import { toChatTool, type AgentTool, type ToolContext } from './tools/tool.ts';
import type { AgentHost, ConversationAgent, CreateAgent } from './types.ts';
import { addUsage, statsValue, usageFromEvents, type Usage } from './usage.ts';

export const LLM_NOT_CONFIGURED =
  'No model is configured for this conversation. Set LLM_MODEL (and LLM_BASE_URL, LLM_API_KEY for an OpenAI-compatible endpoint) for agentyard, or send agent.llm in the start request.';

export interface AgentOptions {
  /** Runs between recording a response's actions and executing them (confirmation policies, hooks). */
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
  readonly #mask: (text: string) => string;
  readonly #tools: AgentTool[];
  /** The unmasked actions of calls this agent planned; events carry masked copies. */
  readonly #real = new Map<string, Action>();
  #terminal: TerminalSession | undefined;
  #ownOutputDir: string | undefined;
  #usage: Usage;

  constructor(host: AgentHost, opts: AgentOptions) {
    this.#host = host;
    this.#opts = opts;
    // The model API key is a secret of the conversation too, should anything ever echo it.
    this.#mask = createMasker(host.llm?.apiKey ? { ...host.secrets, '(llm api key)': host.llm.apiKey } : host.secrets);
    this.#tools = [
      terminalTool({
        session: () => (this.#terminal ??= new TerminalSession(host.workspaceDir, { ...host.secrets }, opts.terminal)),
        outputDir: () => opts.outputDir ?? (this.#ownOutputDir ??= join(tmpdir(), `agentyard-outputs-${randomBytes(6).toString('hex')}`)),
      }),
      fileEditorTool(),
      thinkTool,
      finishTool,
    ];
    this.#usage = usageFromEvents(host.events());
  }

  async run(signal: AbortSignal): Promise<void> {
    const host = this.#host;
    if (!host.llm) return this.#fail('LLMNotConfigured', LLM_NOT_CONFIGURED, { kind: 'config', retryable: false, user_action: 'settings' });
    let model: ModelClient;
    try {
      model = new ModelClient(host.llm, this.#opts.model);
    } catch (err) {
      const e = toModelCallError(err);
      return this.#fail(e.code, e.message, e.classification);
    }
    host.setExecutionStatus('running');
    this.#ensureSystemPrompt();
    const ctx: ToolContext & { signal: AbortSignal } = { workspaceDir: host.workspaceDir, signal, mask: this.#mask };

    // Recorded but unanswered actions (a batch that waited for confirmation, or one a stopped run
    // left unfinished) run first: running again confirms them.
    const pending = pendingActions(host.events());
    if (pending.length && (this.#finishIf(await execute(this.#tools, pending, ctx, (e) => this.#emit(e), this.#real)))) return;

    for (let iteration = 0; ; iteration++) {
      if (signal.aborted) return;
      if (iteration >= host.maxIterations) {
        return this.#fail('MaxIterationsReached', `The agent reached the maximum of ${host.maxIterations} iterations in one run. Send a message to continue.`);
      }
      let completion: Completion;
      try {
        completion = await model.complete(buildMessages(host.events()), this.#tools.map(toChatTool), signal);
      } catch (err) {
        if (signal.aborted || err instanceof OpenAI.APIUserAbortError) return;
        const e = toModelCallError(err);
        return this.#fail(e.code, e.message, e.classification);
      }
      this.#recordUsage(model.model, completion);
      // A response that arrived is recorded even if the run was stopped meanwhile: its actions stay pending.
      if (completion.toolCalls.length === 0) {
        this.#emit(assistantMessage(completion));
        host.setExecutionStatus('finished');
        return;
      }
      const planned = plan(this.#tools, completion);
      for (const p of planned) {
        if (p.event.action) this.#real.set(p.event.id, p.event.action);
        this.#emit(p.event);
      }
      for (const p of planned) if (p.error) this.#emit(agentError(p.event.tool_name, p.event.tool_call_id, p.error));
      let runnable = planned.filter((p) => !p.error).map((p) => p.event);
      if (runnable.length && this.#opts.beforeExecute) {
        const verdict = await this.#opts.beforeExecute(runnable, signal);
        if (verdict.kind === 'wait_for_confirmation') {
          host.setExecutionStatus('waiting_for_confirmation');
          return;
        }
        if (verdict.kind === 'reject') {
          for (const a of runnable) {
            const r = verdict.rejected.get(a.id);
            if (r) this.#emit(userReject(a, r.reason, r.source));
          }
          runnable = runnable.filter((a) => !verdict.rejected.has(a.id));
        }
      }
      if (this.#finishIf(await execute(this.#tools, runnable, ctx, (e) => this.#emit(e), this.#real))) return;
    }
  }

  async close(): Promise<void> {
    await this.#terminal?.close();
    this.#terminal = undefined;
    if (this.#ownOutputDir) rmSync(this.#ownOutputDir, { recursive: true, force: true });
    this.#ownOutputDir = undefined;
  }

  #finishIf(outcome: ExecuteOutcome): boolean {
    if (outcome !== 'finished') return false;
    this.#host.setExecutionStatus('finished');
    return true;
  }

  /** The one way out: every event is masked here, whatever a tool or the model put into it. */
  #emit(event: Event): void {
    this.#host.emit(maskDeep(event, this.#mask));
  }

  #ensureSystemPrompt(): void {
    if (this.#host.events().some((e) => e.kind === 'SystemPromptEvent')) return;
    this.#emit({
      ...newEventBase('agent'),
      system_prompt: { type: 'text', text: systemPrompt(this.#tools) },
      tools: this.#tools.map((t) => ({
        description: t.description,
        action_type: t.actionKind,
        observation_type: t.observationKind,
        annotations: { title: t.name, readOnlyHint: t.readOnly ?? false, destructiveHint: !t.readOnly, idempotentHint: false, openWorldHint: t.name === 'terminal' },
        title: t.name,
        kind: t.definitionKind,
      })) as Extract<Event, { kind: 'SystemPromptEvent' }>['tools'],
      dynamic_context: { type: 'text', text: dynamicContext(this.#host.workspaceDir, Object.keys(this.#host.secrets)) },
      kind: 'SystemPromptEvent',
    });
  }

  #recordUsage(model: string, completion: Completion): void {
    this.#usage = addUsage(this.#usage, completion.usage);
    this.#emit(stateUpdate('stats', statsValue(model, this.#usage, { usage: completion.usage, responseId: completion.responseId })));
  }

  #fail(code: string, detail: string, classification?: Parameters<typeof conversationError>[2]): void {
    this.#emit(conversationError(code, detail, classification));
    this.#host.setExecutionStatus('error');
  }
}
