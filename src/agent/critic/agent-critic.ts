// The critic as the agent loop uses it (OpenHands' CriticMixin): actions scored before they are
// recorded (the finish, or every action in all_actions mode), and a finish scored too low turned into
// a follow-up user message while refinement iterations remain. A failed evaluation is logged and the
// action recorded without a result, as OpenHands does: the critic advises, it never stops the agent.
import type { ActionEvent, ErrorClassification, Event } from '../../api/events/index.ts';
import { newEventBase } from '../../api/events/index.ts';
import { createLogger } from '../../util/log.ts';
import { buildView } from '../condenser/view.ts';
import type { ChatTool } from '../llm/client.ts';
import { buildMessages } from '../messages.ts';
import type { AgentHost } from '../types.ts';
import { criticConfig, CriticConfigError, evaluate, followupPrompt, refinementsSoFar, shouldRefine, type CriticConfig } from './critic.ts';

const log = createLogger('critic');

export class AgentCritic {
  readonly #host: AgentHost;
  readonly #cfg: CriticConfig;
  readonly #tools: () => ChatTool[];

  private constructor(host: AgentHost, cfg: CriticConfig, tools: () => ChatTool[]) {
    this.#host = host;
    this.#cfg = cfg;
    this.#tools = tools;
  }

  /** The critic `agent.critic` configures: undefined for none, false once an unusable one ended the run (`fail`). */
  static configured(host: AgentHost, tools: () => ChatTool[], fail: (code: string, detail: string, classification?: ErrorClassification) => void): AgentCritic | undefined | false {
    try {
      const cfg = criticConfig(host.request.agent?.critic);
      if (!cfg) return undefined;
      if (!host.llm?.apiKey) throw new CriticConfigError("The critic authenticates with the agent LLM's key, and the LLM has none");
      return new AgentCritic(host, cfg, tools);
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
      const events = [...buildView(this.#host.events()).events, ...actions.slice(0, i + 1).map((a) => a.event)];
      try {
        const result = await evaluate(this.#cfg, this.#host.llm!.apiKey!, buildMessages(events), this.#tools(), events.map((e) => e.id), signal);
        p.event = { ...p.event, critic_result: result };
      } catch (err) {
        if (signal.aborted) return;
        log.warn({ conversationId: this.#host.conversationId, reason: (err as Error).message }, 'critic evaluation failed; the action is recorded without a critic result');
      }
    }
  }

  /** After a finish ran: the follow-up message when its score asks for another iteration and one remains. */
  followup(events: readonly Event[]): Event | undefined {
    if (!this.#cfg.refinement) return undefined;
    const finish = events.findLast((e): e is ActionEvent => e.kind === 'ActionEvent' && e.tool_name === 'finish');
    if (!finish?.critic_result || !shouldRefine(this.#cfg, finish.critic_result)) return undefined;
    const texts = events.flatMap((e) => (e.kind === 'MessageEvent' && e.source === 'user' ? [(e.llm_message.content ?? []).map((c) => ('text' in c ? c.text : '')).join('')] : []));
    const done = refinementsSoFar(texts);
    if (done >= this.#cfg.refinement.maxIterations) return undefined;
    const text = followupPrompt(finish.critic_result, done + 1);
    return { ...newEventBase('user'), llm_message: { role: 'user', content: [{ type: 'text', text }] }, activated_skills: [], extended_content: [], kind: 'MessageEvent' };
  }
}
