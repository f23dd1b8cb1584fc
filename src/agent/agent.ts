// The agent loop: ask the model, turn its tool calls into ActionEvents, execute them, record
// ObservationEvents, until it finishes, errs, runs out of iterations or is aborted. Every outcome
// is an event; run() never rejects for model or tool failures.
import type { ActionEvent, Event } from '../api/events/index.ts';
import { newEventBase } from '../api/events/index.ts';
import { ModelClient, type Completion, type ToolCall } from './llm/client.ts';
import { toModelCallError } from './llm/errors.ts';
import { createMasker } from './mask.ts';
import { buildMessages } from './messages.ts';
import { dynamicContext, systemPrompt } from './system-prompt.ts';
import { fileEditorTool } from './tools/file-editor.ts';
import { finishTool, thinkTool } from './tools/simple-tools.ts';
import { TerminalSession, terminalTool } from './tools/terminal.ts';
import { toChatTool, ToolArgumentError, type AgentTool } from './tools/tool.ts';
import { addUsage, statsValue, usageFromEvents, type Usage } from './usage.ts';
import type { AgentHost, ConversationAgent, CreateAgent } from './types.ts';

export const LLM_NOT_CONFIGURED =
  'No model is configured for this conversation. Set LLM_MODEL (and LLM_BASE_URL, LLM_API_KEY for an OpenAI-compatible endpoint) for agentyard, or send agent.llm in the start request.';

function maskDeep<T>(value: T, mask: (text: string) => string): T {
  if (typeof value === 'string') return mask(value) as T;
  if (Array.isArray(value)) return value.map((v) => maskDeep(v, mask)) as T;
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, maskDeep(v, mask)])) as T;
  return value;
}

export const createAgent: CreateAgent = (host) => new Agent(host);

class Agent implements ConversationAgent {
  readonly #host: AgentHost;
  readonly #mask: (text: string) => string;
  readonly #tools: AgentTool[];
  #terminal: TerminalSession | undefined;
  #usage: Usage;

  constructor(host: AgentHost) {
    this.#host = host;
    this.#mask = createMasker(host.secrets);
    const terminal = () => (this.#terminal ??= new TerminalSession(host.workspaceDir, { ...host.secrets }));
    this.#tools = [terminalTool(terminal), fileEditorTool(), thinkTool, finishTool];
    this.#usage = usageFromEvents(host.events());
  }

  async run(signal: AbortSignal): Promise<void> {
    const host = this.#host;
    if (!host.llm) return this.#fail('LLMNotConfigured', LLM_NOT_CONFIGURED);
    host.setExecutionStatus('running');
    this.#ensureSystemPrompt();
    let model: ModelClient;
    try {
      model = new ModelClient(host.llm);
    } catch (err) {
      const e = toModelCallError(err);
      return this.#fail(e.code, this.#mask(e.message));
    }
    for (let iteration = 0; !signal.aborted; iteration++) {
      if (iteration >= host.maxIterations) {
        return this.#fail('MaxIterationsReached', `The agent reached the maximum of ${host.maxIterations} iterations for one run`);
      }
      let completion: Completion;
      try {
        completion = await model.complete(buildMessages(host.events()), this.#tools.map(toChatTool), signal);
      } catch (err) {
        if (signal.aborted) return;
        const e = toModelCallError(err);
        return this.#fail(e.code, this.#mask(e.message));
      }
      this.#recordUsage(completion);
      if (completion.toolCalls.length === 0) {
        host.emit({
          ...newEventBase('agent'),
          kind: 'MessageEvent',
          llm_message: { role: 'assistant', content: [{ type: 'text', text: this.#mask(completion.content ?? '') }] },
          llm_response_id: completion.responseId,
        } as Event);
        host.setExecutionStatus('finished');
        return;
      }
      const finished = await this.#act(completion, signal);
      if (finished) {
        host.setExecutionStatus('finished');
        return;
      }
    }
  }

  async close(): Promise<void> {
    await this.#terminal?.close();
    this.#terminal = undefined;
  }

  /** Emits one ActionEvent per call (sharing llm_response_id), then executes them in order. */
  async #act(completion: Completion, signal: AbortSignal): Promise<boolean> {
    const host = this.#host;
    const thought = completion.content ? [{ type: 'text' as const, text: this.#mask(completion.content) }] : [];
    const planned: { event: ActionEvent; action?: Record<string, unknown>; tool?: AgentTool; error?: string }[] = completion.toolCalls.map((call, i) => {
      const { action, tool, error, summary } = this.#parse(call);
      const event = {
        ...newEventBase('agent'),
        kind: 'ActionEvent',
        thought: i === 0 ? thought : [],
        // The event shows the action masked; the tool runs the real one.
        action: action ? maskDeep(action, this.#mask) : null,
        tool_name: call.name,
        tool_call_id: call.id,
        tool_call: { id: call.id, name: call.name, arguments: this.#mask(call.arguments), origin: 'completion' },
        llm_response_id: completion.responseId,
        security_risk: 'UNKNOWN',
        summary: summary ?? null,
      } as ActionEvent;
      return { event, ...(action ? { action } : {}), ...(tool ? { tool } : {}), ...(error ? { error } : {}) };
    });
    for (const p of planned) host.emit(p.event);

    let finished = false;
    for (const { event, action, tool, error } of planned) {
      if (signal.aborted) break;
      if (!tool || error) {
        host.emit({ ...newEventBase('agent'), kind: 'AgentErrorEvent', tool_name: event.tool_name, tool_call_id: event.tool_call_id, error: error ?? 'Unknown tool' } as Event);
        continue;
      }
      try {
        const result = await tool.execute(action!, { workspaceDir: host.workspaceDir, signal, mask: this.#mask });
        host.emit({
          ...newEventBase('environment'),
          kind: 'ObservationEvent',
          tool_name: event.tool_name,
          tool_call_id: event.tool_call_id,
          observation: result.observation,
          action_id: event.id,
        } as Event);
        if (tool.name === 'finish') finished = true;
      } catch (err) {
        host.emit({ ...newEventBase('agent'), kind: 'AgentErrorEvent', tool_name: event.tool_name, tool_call_id: event.tool_call_id, error: this.#mask(`The tool failed: ${(err as Error).message}`) } as Event);
      }
    }
    return finished;
  }

  #parse(call: ToolCall): { action?: Record<string, unknown> & { kind: string }; tool?: AgentTool; error?: string; summary?: string } {
    const tool = this.#tools.find((t) => t.name === call.name);
    if (!tool) return { error: `Tool '${call.name}' does not exist. Available tools: ${this.#tools.map((t) => t.name).join(', ')}` };
    let args: Record<string, unknown>;
    try {
      const parsed = JSON.parse(call.arguments || '{}') as unknown;
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
      args = parsed as Record<string, unknown>;
    } catch {
      return { tool, error: `The arguments of '${call.name}' are not a JSON object: ${this.#mask(call.arguments)}` };
    }
    const summary = typeof args.summary === 'string' ? this.#mask(args.summary) : undefined;
    try {
      return { tool, action: tool.toAction(args), ...(summary ? { summary } : {}) };
    } catch (err) {
      if (err instanceof ToolArgumentError) return { tool, error: err.message, ...(summary ? { summary } : {}) };
      throw err;
    }
  }

  #ensureSystemPrompt(): void {
    if (this.#host.events().some((e) => e.kind === 'SystemPromptEvent')) return;
    this.#host.emit({
      ...newEventBase('agent'),
      kind: 'SystemPromptEvent',
      system_prompt: { type: 'text', text: systemPrompt(this.#tools) },
      tools: this.#tools.map((t) => ({ kind: t.definitionKind, title: t.name, description: t.description, action_type: t.actionKind, observation_type: t.observationKind })),
      dynamic_context: { type: 'text', text: dynamicContext(this.#host.workspaceDir, Object.keys(this.#host.secrets)) },
    } as Event);
  }

  #recordUsage(completion: Completion): void {
    this.#usage = addUsage(this.#usage, completion.usage);
    this.#host.emit({ ...newEventBase('environment'), kind: 'ConversationStateUpdateEvent', key: 'stats', value: statsValue(this.#host.llm?.model ?? 'unknown', this.#usage) } as Event);
  }

  #fail(code: string, detail: string): void {
    this.#host.emit({ ...newEventBase('environment'), kind: 'ConversationErrorEvent', code, detail } as Event);
    this.#host.setExecutionStatus('error');
  }
}
