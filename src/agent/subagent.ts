// Sub-agents (OpenHands' task tool, openhands-tools TaskManager): a plugin's agents/*.md definition
// run to its end inside the same sandbox, on the parent's working directory, model and secrets, with
// the definition's prompt (added to its system message) and tools. As in OpenHands, the sub-agent's
// own events are not part of the parent conversation (OpenHands keeps them in a sub-conversation it
// deletes when the task ends): the parent records the task's ActionEvent and its TaskObservation,
// whose text is the sub-agent's final answer.
import { newEventBase, parseEvent, type Event } from '../api/events/index.ts';
import type { ExecutionStatus } from '../api/conversation.ts';
import type { StartConversationRequest } from '../api/agent-server/index.ts';
import type { PluginAgent } from './plugins/index.ts';
import type { RateLimitWait } from './llm/client.ts';
import { combinedMetrics, type BucketMetrics, type StatsValue } from './usage.ts';
import type { AgentHost, ConversationAgent, CreateAgent } from './types.ts';

export interface SubAgentResult {
  ok: boolean;
  /** The final answer, or why it stopped (with what it had produced). */
  text: string;
  /** What its model calls used, over its buckets (undefined when it made none). */
  usage?: BucketMetrics;
}

/** The sub-agent's last stats update. */
function usageOf(events: readonly Event[]): BucketMetrics | undefined {
  const last = events.findLast((e) => e.kind === 'ConversationStateUpdateEvent' && e.key === 'stats');
  return last?.kind === 'ConversationStateUpdateEvent' ? combinedMetrics(last.value as StatsValue) : undefined;
}

/** The sub-agent's host: everything from the parent but its own request, status and events (kept in memory). */
class SubAgentHost implements AgentHost {
  readonly #parent: AgentHost;
  readonly request: StartConversationRequest;
  readonly maxIterations: number;
  readonly #events: Event[] = [];
  #status: ExecutionStatus = 'idle';

  constructor(parent: AgentHost, def: PluginAgent) {
    this.#parent = parent;
    const preq = parent.request;
    const llm = preq.agent?.llm ?? {};
    this.maxIterations = def.maxIterations ?? parent.maxIterations;
    this.request = {
      workspace: preq.workspace,
      agent: {
        kind: 'Agent',
        // Not streamed (OpenHands turns streaming off for sub-agents); its MCP servers are the parent's.
        llm: { ...llm, stream: false },
        tools: def.tools.map((name) => ({ name, params: {} })),
        ...(preq.agent?.mcp_config ? { mcp_config: preq.agent.mcp_config } : {}),
        agent_context: { system_message_suffix: def.prompt },
      },
      confirmation_policy: { kind: 'NeverConfirm' },
      max_iterations: this.maxIterations,
    } as StartConversationRequest;
  }

  /** The parent's id: the model gateway counts the sub-agent's usage for the conversation that asked. */
  get conversationId(): string {
    return this.#parent.conversationId;
  }
  get workspaceDir(): string {
    return this.#parent.workspaceDir;
  }
  get llm() {
    return this.#parent.llm;
  }
  /** Its MCP servers are the parent's, so are their stored OAuth tokens. */
  get mcpOAuth() {
    return this.#parent.mcpOAuth;
  }
  get secrets() {
    return this.#parent.secrets;
  }
  stats() {
    return null;
  }
  events(): readonly Event[] {
    return this.#events;
  }
  emit(event: Event): void {
    this.#events.push(parseEvent(event));
  }
  executionStatus(): ExecutionStatus {
    return this.#status;
  }
  setExecutionStatus(status: ExecutionStatus): void {
    this.#status = status;
  }
  /** A wait for the provider's rate limit is the parent's run waiting too. */
  rateLimited(wait: RateLimitWait | null): void {
    this.#parent.rateLimited?.(wait);
  }
}

/** OpenHands' get_agent_final_response: the last finish message, else the agent's last text. */
function finalResponse(events: readonly Event[]): string {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.kind === 'ActionEvent' && e.action?.kind === 'FinishAction') return e.action.message;
    if (e.kind === 'MessageEvent' && e.source === 'agent') return (e.llm_message.content ?? []).map((c) => ('text' in c ? c.text : '')).join('\n');
  }
  return '';
}

/** Runs `def` on `prompt` to its end (or until `signal` aborts); never rejects for the sub-agent's own failures. */
export async function runSubAgent(parent: AgentHost, create: CreateAgent, def: PluginAgent, prompt: string, signal: AbortSignal): Promise<SubAgentResult> {
  const host = new SubAgentHost(parent, def);
  const withUsage = (r: SubAgentResult): SubAgentResult => {
    const usage = usageOf(host.events());
    return usage ? { ...r, usage } : r;
  };
  let agent: ConversationAgent | undefined;
  try {
    agent = create(host);
    await agent.ready?.();
    await agent.recordSystemPrompt?.();
    host.emit({ ...newEventBase('user'), llm_message: { role: 'user', content: [{ type: 'text', text: prompt }] }, activated_skills: [], extended_content: [], kind: 'MessageEvent' });
    await agent.run(signal);
  } catch (err) {
    return withUsage({ ok: false, text: `The sub-agent failed: ${err instanceof Error ? err.message : String(err)}` });
  } finally {
    await agent?.close().catch(() => undefined);
  }
  const events = host.events();
  const status = host.executionStatus();
  if (status === 'finished') return withUsage({ ok: true, text: finalResponse(events) || 'Task completed with no result.' });
  const errors = events.filter((e) => e.kind === 'ConversationErrorEvent');
  const reason = errors.length ? errors.at(-1)!.detail : `Sub-agent stopped without finishing (status: ${signal.aborted ? 'paused' : status}).`;
  const partial = finalResponse(events);
  return withUsage({ ok: false, text: partial ? `${reason}\nPartial result:\n${partial}` : reason });
}
