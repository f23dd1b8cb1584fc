// /goal loops (OpenHands 1.58 sdk/conversation/goal and EventService._run_goal_loop): inside one
// conversation, the objective is sent and run; after each run a judge (a call of the conversation's
// model on the objective and the transcript) says whether it is provably done; if not, a followup
// message names what is missing and the agent runs again, up to max_iterations audit rounds. Every
// lifecycle point is a ConversationStateUpdateEvent with key `goal` (GoalStatus); the last one is
// what /goal/resume continues from, also after a restart.
import { newEventBase, type Event } from '../../api/events/index.ts';
import { buildMessages } from '../../agent/messages.ts';
import type { ChatMessage } from '../../agent/llm/client.ts';

export type GoalStatusName = 'running' | 'complete' | 'capped' | 'interrupted';

export interface GoalVerdict {
  score: number;
  complete: boolean;
  missing: string;
}

export interface GoalStatus {
  active: boolean;
  status: GoalStatusName;
  iteration: number;
  max_iterations: number;
  objective: string;
  verdict: GoalVerdict | null;
}

// The texts the conversation records (OpenHands' FOLLOWUP_PROMPT and RESUME_PROMPT): clients see them in the events.
export const followupPrompt = (iteration: number, missing: string) =>
  `The goal is NOT yet complete (audit iteration ${iteration}).\nOutstanding: ${missing}\n\nInspect the real current state of the workspace (do not rely on memory). For each remaining requirement, make concrete progress and gather authoritative evidence by running the relevant tests/commands. Keep the full objective intact and finish only once every requirement is provably satisfied.`;
export const RESUME_PROMPT =
  'Resuming a goal that was paused or interrupted. Re-check the real current state of the workspace (do not rely on memory) and continue making concrete, verified progress toward the original objective. Finish only once every requirement is provably satisfied.';

const JUDGE_SYSTEM = [
  'You judge whether an AI software agent has COMPLETED a goal.',
  'Work out the concrete requirements the objective implies. For each, look in the transcript for evidence the agent produced itself: file contents, command output, test results. A requirement that is only claimed, uncertain or without evidence is not satisfied.',
  'Answer with strict JSON only, exactly in this shape:',
  '{"score": <0.0-1.0, how likely the whole objective is provably done>, "complete": <true|false>, "missing": "<what remains, briefly; empty when complete>"}',
].join('\n');

/** The judge's messages: the transcript as `role: text` turns, the system prompt left out (it says nothing about the goal). */
export function judgeMessages(objective: string, events: readonly Event[]): ChatMessage[] {
  const turns = buildMessages(events)
    .filter((m) => m.role !== 'system')
    .flatMap((m) => {
      const c = m.content;
      const text = (typeof c === 'string' ? c : Array.isArray(c) ? c.map((p) => ('text' in p ? p.text : '')).join('\n') : '').trim();
      return text ? [`${m.role}: ${text}`] : [];
    });
  return [
    { role: 'system', content: JUDGE_SYSTEM },
    { role: 'user', content: `<objective>\n${objective}\n</objective>\n\n<transcript>\n${turns.join('\n\n')}\n</transcript>` },
  ];
}

/** The judge's answer, read conservatively (OpenHands _parse_verdict): unreadable means not done. */
export function parseVerdict(raw: string): GoalVerdict {
  const text = raw.trim();
  let data: Record<string, unknown> | undefined;
  for (const candidate of [text, /\{[\s\S]*\}/.exec(text)?.[0]]) {
    if (candidate === undefined) continue;
    try {
      const parsed: unknown = JSON.parse(candidate);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
        data = parsed as Record<string, unknown>;
        break;
      }
    } catch {
      // the next candidate
    }
  }
  if (!data) return { score: 0, complete: false, missing: 'Judge verdict could not be parsed.' };
  const n = Number(data['score'] ?? 0);
  const score = Math.max(0, Math.min(1, Number.isFinite(n) ? n : 0));
  return { score, complete: data['complete'] === undefined ? score >= 1 : Boolean(data['complete']), missing: data['missing'] ? String(data['missing']) : '' };
}

/** The last goal status recorded in `events`, if any. */
export function lastGoalStatus(events: readonly Event[]): GoalStatus | undefined {
  const e = events.findLast((x) => x.kind === 'ConversationStateUpdateEvent' && x.key === 'goal');
  return e?.kind === 'ConversationStateUpdateEvent' ? (e.value as GoalStatus) : undefined;
}

/** What the loop needs of its conversation (ConversationRuntime). */
export interface GoalHost {
  events(): readonly Event[];
  emit(event: Event): void;
  executionStatus(): string;
  /** Records a user message from the loop and starts the run. */
  sendGoalMessage(text: string): Promise<void>;
  /** Resolves once no run is going on or queued. */
  runsEnded(): Promise<void>;
  /** One call of the conversation's model without tools. */
  judge(messages: ChatMessage[], signal: AbortSignal): Promise<string>;
}

/** One /goal loop: the decisions (judge, count, cap) and the driver (messages, runs, status events). */
export class GoalLoop {
  readonly #host: GoalHost;
  readonly objective: string;
  readonly maxIterations: number;
  iteration: number;
  readonly #abort = new AbortController();
  #ended = false;

  constructor(host: GoalHost, o: { objective: string; maxIterations: number; iteration?: number }) {
    this.#host = host;
    this.objective = o.objective;
    this.maxIterations = o.maxIterations;
    this.iteration = o.iteration ?? 0;
  }

  get active(): boolean {
    return !this.#ended;
  }

  /**
   * Starts the loop in the background; `resume` sends RESUME_PROMPT instead of the objective.
   * Resolves once its first message is recorded and its run started (or the loop ended).
   */
  start(resume: boolean, onEnd: () => void): Promise<void> {
    let started!: () => void;
    const first = new Promise<void>((r) => (started = r));
    void this.#drive(resume, started).finally(() => {
      this.#ended = true;
      started();
      onEnd();
    });
    return first;
  }

  /** Ends the loop without a status event (the conversation is closing: a restart finds it active and records it interrupted). */
  abandon(): void {
    this.#abort.abort();
    this.#ended = true;
  }

  /**
   * Ends the loop (not the run going on): an `interrupted` status, resumable. At once: the driver,
   * waiting for the run or the judge, sees it when that returns and does nothing more.
   */
  stop(): void {
    if (this.#ended) return;
    this.#abort.abort();
    this.#ended = true;
    this.#status(false, 'interrupted');
  }

  #status(active: boolean, status: GoalStatusName, verdict: GoalVerdict | null = null): void {
    const value: GoalStatus = { active, status, iteration: this.iteration, max_iterations: this.maxIterations, objective: this.objective, verdict };
    this.#host.emit({ ...newEventBase('environment'), key: 'goal', value, kind: 'ConversationStateUpdateEvent' });
  }

  async #drive(resume: boolean, started: () => void): Promise<void> {
    const signal = this.#abort.signal;
    const halted = () => signal.aborted;
    try {
      this.#status(true, 'running');
      await this.#host.sendGoalMessage(resume ? RESUME_PROMPT : this.objective);
      started();
      for (;;) {
        await this.#host.runsEnded();
        if (halted()) return;
        const status = this.#host.executionStatus();
        // A pause or an error stops the goal (resumable); a stuck run goes to the judge, as in OpenHands.
        if (status === 'paused' || status === 'error') {
          this.#ended = true;
          this.#status(false, 'interrupted');
          return;
        }
        const verdict = parseVerdict(await this.#host.judge(judgeMessages(this.objective, this.#host.events()), signal));
        if (halted()) return;
        this.iteration++;
        if (verdict.complete || this.iteration >= this.maxIterations) {
          this.#ended = true;
          this.#status(false, verdict.complete ? 'complete' : 'capped', verdict);
          return;
        }
        this.#status(true, 'running', verdict);
        await this.#host.sendGoalMessage(followupPrompt(this.iteration, verdict.missing || 'Some requirements are not yet verified.'));
      }
    } catch {
      // A judge that fails (the model down) leaves the loop dead: interrupted, so that it can be resumed.
      if (!halted() && !this.#ended) {
        this.#ended = true;
        this.#status(false, 'interrupted');
      }
    }
  }
}
