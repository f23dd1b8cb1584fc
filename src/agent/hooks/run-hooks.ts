// The hooks of one agent across its runs: loaded at the first run (the project's hooks file,
// hook_config, the plugins' hooks; SessionStart runs then), UserPromptSubmit for new user messages,
// PreToolUse before each action is recorded, PostToolUse after a batch, Stop when the agent wants to finish, SessionEnd at close.
import { Invalid } from '../../api/errors.ts';
import type { ActionEvent, ErrorClassification, Event, ObservationEvent } from '../../api/events/index.ts';
import { createLogger } from '../../util/log.ts';
import { environmentMessage } from '../events.ts';
import type { Rejection } from '../gate.ts';
import type { AgentHost } from '../types.ts';
import { resolveHooks, type HookConfig } from './index.ts';
import { HookRunner, STOP_FEEDBACK_PREFIX } from './runner.ts';

const log = createLogger('agent');

type Fail = (code: string, detail: string, classification?: ErrorClassification) => void;

export class RunHooks {
  readonly #host: AgentHost;
  readonly #emit: (event: Event) => void;
  readonly #fail: Fail;
  /** Loaded at the first run; SessionStart runs then. */
  #runner: HookRunner | undefined;

  constructor(host: AgentHost, emit: (event: Event) => void, fail: Fail) {
    this.#host = host;
    this.#emit = emit;
    this.#fail = fail;
  }

  /** PreToolUse for one action (a block: rejection_source `hook`); everything passes before the hooks are loaded. */
  preToolUse(action: ActionEvent): Promise<Rejection | undefined> {
    return this.#runner ? this.#runner.preToolUse(action) : Promise.resolve(undefined);
  }

  /** The hooks, loaded once (`extra`: the plugins' configs); false after a bad configuration ended the run. */
  async load(extra: () => Promise<HookConfig[]>): Promise<boolean> {
    if (this.#runner) return true;
    let config;
    try {
      config = await resolveHooks(this.#host, await extra());
    } catch (err) {
      if (!(err instanceof Invalid)) throw err;
      this.#fail('HookConfigError', `Invalid hook configuration: ${err.detail.map((i) => i.msg).join('; ')}`, { kind: 'config', retryable: false, user_action: 'settings' });
      return false;
    }
    const runner = (this.#runner = new HookRunner(config, this.#host, this.#emit));
    const start = await runner.sessionStart();
    if (start.additionalContext) this.#emit(environmentMessage(start.additionalContext));
    return true;
  }

  /**
   * UserPromptSubmit hooks for user messages they have not seen yet. True when one blocked: the
   * run ends as finished without a model call (the blocked message stays out of the model's view).
   */
  async submitPrompts(): Promise<boolean> {
    const hooks = this.#runner;
    if (!hooks?.has('UserPromptSubmit')) return false;
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
  visible(events: readonly Event[]): readonly Event[] {
    if (!this.#runner?.has('UserPromptSubmit')) return events;
    const blocked = this.#runner.blockedMessages(this.#host.events());
    return blocked.size ? events.filter((e) => !blocked.has(e.id)) : events;
  }

  /** The agent wants to stop: true unless a Stop hook denies it (its feedback then goes to the model). */
  async stop(): Promise<boolean> {
    const verdict = this.#runner ? await this.#runner.stop() : { stop: true, feedback: null };
    if (!verdict.stop && verdict.feedback) this.#emit(environmentMessage(`${STOP_FEEDBACK_PREFIX} ${verdict.feedback}`));
    return verdict.stop;
  }

  /** PostToolUse for each observation of a batch that ran. */
  async postToolUse(actions: readonly ActionEvent[], observed: readonly ObservationEvent[]): Promise<void> {
    for (const o of observed) {
      const action = actions.find((a) => a.id === o.action_id);
      if (action && this.#runner) await this.#runner.postToolUse(action, o);
    }
  }

  /** SessionEnd, once; the conversation may be gone (deleted): its record has nowhere to go then. */
  async close(): Promise<void> {
    const hooks = this.#runner;
    this.#runner = undefined;
    if (hooks) await hooks.sessionEnd().catch((err: unknown) => log.warn({ err, conversationId: this.#host.conversationId }, 'SessionEnd hooks could not be recorded'));
  }
}
