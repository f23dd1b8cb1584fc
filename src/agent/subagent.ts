// Sub-agents (OpenHands' task tool, openhands-tools TaskManager): an agent definition (a plugin's
// agents/*.md, the project's or user's .agents/agents/*.md) run to its end inside the same sandbox,
// on the parent's working directory and secrets, with the definition's prompt (added to its system
// message), tools, skills (`skills:`, resolved by name) and model (`model:`, else the parent's).
// OpenHands reads `model:` as the name of an LLM profile; this agent server has no profile store, so
// it is the model to call on the parent's endpoint (its base URL and key). As in OpenHands, the sub-agent's
// own events are not part of the parent conversation (OpenHands keeps them in a sub-conversation it
// deletes when the task ends): the parent records the task's ActionEvent and its TaskObservation,
// whose text is the sub-agent's final answer.
import { newEventBase, parseEvent, type Event } from '../api/events/index.ts';
import type { ExecutionStatus } from '../api/conversation.ts';
import type { StartConversationRequest } from '../api/agent-server/index.ts';
import type { PluginAgent } from './plugins/index.ts';
import { loadProjectSkillsSync, loadUserSkillsSync } from './skills/load.ts';
import { mergeByName, type Skill } from './skills/types.ts';
import type { RateLimitWait } from './llm/client.ts';
import { combinedMetrics, type BucketMetrics, type StatsValue } from './usage.ts';
import type { AgentHost, ConversationAgent, CreateAgent, LlmConfig } from './types.ts';
import { resolveEndpoint } from './llm/model-name.ts';

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

  readonly #model: string | undefined;
  /** The skills the definition names, and no others (as OpenHands' sub-agents). */
  readonly requestSkillsOnly = true;

  constructor(parent: AgentHost, def: PluginAgent, skills: readonly Skill[]) {
    this.#parent = parent;
    this.#model = def.model && def.model !== 'inherit' ? def.model : undefined;
    const preq = parent.request;
    const llm = { ...(preq.agent?.llm ?? {}), ...(this.#model ? { model: this.#model } : {}) };
    this.maxIterations = def.maxIterations ?? parent.maxIterations;
    this.request = {
      workspace: preq.workspace,
      agent: {
        kind: 'Agent',
        // Not streamed (OpenHands turns streaming off for sub-agents); its MCP servers are the parent's.
        llm: { ...llm, stream: false },
        tools: def.tools.map((name) => ({ name, params: {} })),
        ...(preq.agent?.mcp_config ? { mcp_config: preq.agent.mcp_config } : {}),
        agent_context: { system_message_suffix: def.prompt, ...(skills.length ? { skills: skills.map(wireSkill) } : {}) },
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
    const parent = this.#parent.llm;
    return this.#model ? { ...parent, model: this.#model } : parent;
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

/** A skill as a start request's agent_context.skills carries it. */
function wireSkill(s: Skill): Record<string, unknown> {
  return {
    name: s.name,
    type: s.type,
    content: s.content,
    trigger: s.triggers.length ? { type: 'keyword', keywords: s.triggers } : null,
    source: s.source,
    description: s.description,
    is_agentskills_format: s.is_agentskills_format,
    disable_model_invocation: s.disable_model_invocation,
  };
}

/**
 * The skills `def.skills` names, as OpenHands resolves them (project over user skills), here also
 * from the conversation's plugins (a plugin's agent naming its plugin's skill). The parent's
 * load_user_skills / load_project_skills are not read: 1.58's agent_definition_to_factory looks in
 * both whatever the parent loads (and never in public skills). Throws for a name found nowhere, with
 * OpenHands' message.
 */
export function resolveSubAgentSkills(def: PluginAgent, workspaceDir: string, pluginSkills: readonly Skill[] = []): Skill[] {
  if (!def.skills.length) return [];
  const available = new Map(mergeByName(pluginSkills, loadUserSkillsSync(), loadProjectSkillsSync(workspaceDir)).map((s) => [s.name, s]));
  return def.skills.map((name) => {
    const skill = available.get(name);
    if (!skill) throw new Error(`Skill '${name}' not found but was given to agent '${def.name}'.`);
    return skill;
  });
}

/**
 * The definitions whose named skills all resolve, in order: as 1.58's _register_definition, one
 * naming a skill found nowhere is skipped with a warning (once per definition) so the model is never
 * offered an agent whose task could only fail, and the other agents are unaffected.
 */
export function usableSubAgents(defs: readonly PluginAgent[], workspaceDir: string, pluginSkills: readonly Skill[], warn: (def: PluginAgent, reason: string) => void): PluginAgent[] {
  return defs.filter((def) => {
    try {
      resolveSubAgentSkills(def, workspaceDir, pluginSkills);
      return true;
    } catch (err) {
      warn(def, (err as Error).message);
      return false;
    }
  });
}

/**
 * A `model:` goes to the parent's endpoint with the parent's key; one whose provider prefix would
 * send it (and that key) elsewhere is refused.
 */
export function checkSubAgentModel(def: PluginAgent, parent: LlmConfig | undefined): void {
  if (!def.model || def.model === 'inherit' || !parent) return;
  const at = (c: LlmConfig) => {
    try {
      return resolveEndpoint(c).baseURL?.replace(/\/+$/, '') ?? 'default';
    } catch (err) {
      throw new Error(`model '${c.model}' of agent '${def.name}': ${(err as Error).message}`);
    }
  };
  if (at({ ...parent, model: def.model }) !== at(parent)) {
    throw new Error(`model '${def.model}' of agent '${def.name}' would be called at another endpoint than the conversation's model; name a model the conversation's endpoint serves, or 'inherit'`);
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
export async function runSubAgent(parent: AgentHost, create: CreateAgent, def: PluginAgent, prompt: string, signal: AbortSignal, pluginSkills: readonly Skill[] = []): Promise<SubAgentResult> {
  let skills: Skill[];
  try {
    checkSubAgentModel(def, parent.llm);
    skills = resolveSubAgentSkills(def, parent.workspaceDir, pluginSkills);
  } catch (err) {
    return { ok: false, text: `The sub-agent failed: ${(err as Error).message}` };
  }
  const host = new SubAgentHost(parent, def, skills);
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
