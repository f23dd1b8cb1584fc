// The critic as the agent loop uses it (OpenHands' CriticMixin): actions scored before they are
// recorded (the finish, or every action in all_actions mode), the agent's plain answers too in
// finish_and_message mode, and a finish scored too low turned into a follow-up user message while
// refinement iterations remain. A failed evaluation is logged and the event recorded without a
// result, as OpenHands does: the critic advises, it never stops the agent.
// What the critic reads is the model's view as 1.58 builds it (View.from_events): tool calls not
// answered yet are left out, so the action being scored is not in its own trace (its parallel
// siblings neither), while an answer being scored is.
import type { ActionEvent, CriticResult, ErrorClassification, Event } from '../../api/events/index.ts';

type MessageEvent = Extract<Event, { kind: 'MessageEvent' }>;
import { newEventBase } from '../../api/events/index.ts';
import { createLogger } from '../../util/log.ts';
import { buildView } from '../condenser/view.ts';
import { stateUpdate } from '../events.ts';
import type { ChatTool } from '../llm/client.ts';
import { buildMessages } from '../messages.ts';
import type { AgentHost } from '../types.ts';
import { criticConfig, CriticConfigError, evaluate, followupPrompt, refinementsSoFar, shouldRefine, type CriticConfig } from './critic.ts';

const log = createLogger('critic');

export class AgentCritic {
  readonly #host: AgentHost;
  readonly #cfg: CriticConfig;
  readonly #apiKey: string;
  readonly #tools: () => ChatTool[];

  private constructor(host: AgentHost, cfg: CriticConfig, apiKey: string, tools: () => ChatTool[]) {
    this.#host = host;
    this.#cfg = cfg;
    this.#apiKey = apiKey;
    this.#tools = tools;
  }

  /** The critic `agent.critic` configures: undefined for none, false once an unusable one ended the run (`fail`). */
  static configured(host: AgentHost, tools: () => ChatTool[], fail: (code: string, detail: string, classification?: ErrorClassification) => void): AgentCritic | undefined | false {
    try {
      const cfg = criticConfig(host.request.agent?.critic);
      if (!cfg) return undefined;
      // Its own key (sealed apart on the agent server), else the agent LLM's, as 1.58's settings build it.
      const apiKey = host.criticApiKey?.() ?? cfg.apiKey ?? host.llm?.apiKey;
      if (!apiKey) throw new CriticConfigError("The critic has no api_key, and the agent LLM has no key to authenticate with either");
      return new AgentCritic(host, cfg, apiKey, tools);
    } catch (err) {
      if (!(err instanceof CriticConfigError)) throw err;
      fail('CriticConfigError', err.message, { kind: 'config', retryable: false, user_action: 'settings' });
      return false;
    }
  }

  /** Scores the actions the mode asks for, each with the conversation so far and itself, before they are recorded. */
  async annotate(actions: { event: ActionEvent }[], signal: AbortSignal): Promise<void> {
    for (let i = 0; i < actions.length; i++) {
      const p = actions[i]!;
      if (!p.event.action || (this.#cfg.mode !== 'all_actions' && p.event.tool_name !== 'finish')) continue;
      const result = await this.#score(actions.slice(0, i + 1).map((a) => a.event), signal);
      if (result === 'aborted') return;
      if (result) p.event = { ...p.event, critic_result: result };
    }
  }

  /** The agent's plain answer (no tool call), scored before it is recorded in finish_and_message mode (1.58: in that mode only). */
  async annotateMessage(message: MessageEvent, signal: AbortSignal): Promise<MessageEvent> {
    if (this.#cfg.mode !== 'finish_and_message') return message;
    const result = await this.#score([message], signal);
    return result && result !== 'aborted' ? { ...message, critic_result: result } : message;
  }

  /** One evaluation over the view with `fresh` (not recorded yet) at its end; undefined when it failed. */
  async #score(fresh: readonly Event[], signal: AbortSignal): Promise<CriticResult | undefined | 'aborted'> {
    const events = answeredOnly([...buildView(this.#host.events()).events, ...fresh]);
    try {
      return await evaluate(this.#cfg, this.#apiKey, buildMessages(events), this.#tools(), events.map((e) => e.id), signal);
    } catch (err) {
      if (signal.aborted) return 'aborted';
      log.warn({ conversationId: this.#host.conversationId, reason: (err as Error).message }, 'critic evaluation failed; the event is recorded without a critic result');
      return undefined;
    }
  }

  /**
   * After a finish ran: when its score asks for another iteration and one remains, the events to
   * record, as 1.58 records them: agent_state's iteration count, then the follow-up user message.
   */
  followup(events: readonly Event[]): Event[] | undefined {
    if (!this.#cfg.refinement) return undefined;
    const finish = events.findLast((e): e is ActionEvent => e.kind === 'ActionEvent' && e.tool_name === 'finish');
    if (!finish?.critic_result || !shouldRefine(this.#cfg, finish.critic_result)) return undefined;
    const texts = events.flatMap((e) => (e.kind === 'MessageEvent' && e.source === 'user' ? [(e.llm_message.content ?? []).map((c) => ('text' in c ? c.text : '')).join('')] : []));
    const done = refinementsSoFar(texts);
    if (done >= this.#cfg.refinement.maxIterations) return undefined;
    const text = followupPrompt(finish.critic_result, done + 1);
    const state = events.findLast((e) => e.kind === 'ConversationStateUpdateEvent' && e.key === 'agent_state');
    const agentState = state?.kind === 'ConversationStateUpdateEvent' && state.value && typeof state.value === 'object' ? (state.value as Record<string, unknown>) : {};
    return [
      stateUpdate('agent_state', { ...agentState, [ITERATION_KEY]: done + 1 }),
      { ...newEventBase('user'), llm_message: { role: 'user', content: [{ type: 'text', text }] }, activated_skills: [], extended_content: [], kind: 'MessageEvent' },
    ];
  }
}

/** agent_state's key of the refinement iterations done (1.58's ITERATIVE_REFINEMENT_ITERATION_KEY). */
const ITERATION_KEY = 'iterative_refinement_iteration';

/** The view without tool calls that have no answer yet, nor answers without their call (1.58's View drops both). */
function answeredOnly(events: readonly Event[]): Event[] {
  const calls = new Set<string>();
  const answers = new Set<string>();
  for (const e of events) {
    if (e.kind === 'ActionEvent') calls.add(e.tool_call_id);
    else if (e.kind === 'ObservationEvent' || e.kind === 'AgentErrorEvent' || e.kind === 'UserRejectObservation') answers.add(e.tool_call_id);
  }
  return events.filter((e) => {
    if (e.kind === 'ActionEvent') return answers.has(e.tool_call_id);
    if (e.kind === 'ObservationEvent' || e.kind === 'AgentErrorEvent' || e.kind === 'UserRejectObservation') return calls.has(e.tool_call_id);
    return true;
  });
}
