// Stuck detection with OpenHands' StuckDetector semantics (`conversation/stuck_detector.py`): of the
// last 20 events, those after the last user message count. Equality ignores ids and timestamps: an
// action is its source, thought, action (or raw arguments when unparsable) and tool; an observation
// its source, observation (or error text) and tool.
import type { Event } from '../../api/events/index.ts';

export const STUCK_THRESHOLDS = { actionObservation: 4, actionError: 3, monologue: 3, alternatingPattern: 6 } as const;

const WINDOW = 20;

export type StuckPattern = 'repeating_action_observation' | 'repeating_action_error' | 'monologue' | 'alternating_action_observation';

export type StuckVerdict =
  | { kind: 'ok' }
  /** The same call failed `actionError` times in a row: tell the model once, then go on. */
  | { kind: 'nudge'; toolName: string; text: string }
  | { kind: 'stuck'; pattern: StuckPattern; detail: string };

type Answer = Extract<Event, { kind: 'ObservationEvent' | 'AgentErrorEvent' | 'UserRejectObservation' }>;
type Act = Extract<Event, { kind: 'ActionEvent' }>;

const isAnswer = (e: Event): e is Answer => e.kind === 'ObservationEvent' || e.kind === 'AgentErrorEvent' || e.kind === 'UserRejectObservation';

function actionKey(a: Act): string {
  return JSON.stringify([a.source, a.thought.map((t) => t.text), a.action ?? a.tool_call.arguments, a.tool_name]);
}

function answerKey(o: Answer): string {
  if (o.kind === 'ObservationEvent') return JSON.stringify(['obs', o.source, o.observation, o.tool_name]);
  if (o.kind === 'AgentErrorEvent') return JSON.stringify(['err', o.source, o.error, o.tool_name]);
  return JSON.stringify(['rej', o.source, o.rejection_reason, o.tool_name]);
}

const allSame = (keys: string[]) => keys.every((k) => k === keys[0]);

export function nudgeText(toolName: string, times: number): string {
  return (
    `You've called \`${toolName}\` with the same arguments ${times} times in a row and it failed the same way each time. ` +
    'Repeating it will not help: read the error, change the arguments or try a different approach.'
  );
}

export function detectStuck(events: readonly Event[]): StuckVerdict {
  // As OpenHands: the last 20 events of any kind (state updates included), then only those after
  // the last user message among them.
  const scanned = events.slice(-WINDOW);
  let start = 0;
  for (let i = scanned.length - 1; i >= 0; i--) {
    const e = scanned[i]!;
    if (e.kind === 'MessageEvent' && e.source === 'user') {
      start = i + 1;
      break;
    }
  }
  const window = scanned.slice(start);
  const actions = window.filter((e): e is Act => e.kind === 'ActionEvent').reverse();
  const answers = window.filter(isAnswer).reverse();
  // The nudge is given once per user turn: it is the only environment message the agent sends.
  const nudged = window.some((ev) => ev.kind === 'MessageEvent' && ev.source === 'environment');

  // 1. The same action with the same observation, 4 times in a row.
  const n = STUCK_THRESHOLDS.actionObservation;
  if (actions.length >= n && answers.length >= n) {
    const a = actions.slice(0, n).map(actionKey);
    const o = answers.slice(0, n).map(answerKey);
    if (allSame(a) && allSame(o) && answers[0]!.kind !== 'AgentErrorEvent') {
      return { kind: 'stuck', pattern: 'repeating_action_observation', detail: `The same action got the same observation ${n} times in a row.` };
    }
  }

  // 2. The same action failing with the same error: a nudge at the threshold, stuck beyond it.
  const e = STUCK_THRESHOLDS.actionError;
  let streak = 0;
  while (
    streak < Math.min(actions.length, answers.length) &&
    answers[streak]!.kind === 'AgentErrorEvent' &&
    actionKey(actions[streak]!) === actionKey(actions[0]!) &&
    answerKey(answers[streak]!) === answerKey(answers[0]!)
  ) {
    streak++;
  }
  if (streak > e) return { kind: 'stuck', pattern: 'repeating_action_error', detail: `The same action failed with the same error ${streak} times in a row.` };
  if (streak === e && !nudged) return { kind: 'nudge', toolName: actions[0]!.tool_name, text: nudgeText(actions[0]!.tool_name, streak) };

  // 3. Monologue: agent messages with nothing else in between (summaries do not break the run).
  const m = STUCK_THRESHOLDS.monologue;
  let said = 0;
  for (let i = window.length - 1; i >= 0; i--) {
    const ev = window[i]!;
    // State updates and summaries do not break a monologue; environment messages neither count nor break.
    if (ev.kind === 'CondensationSummaryEvent' || ev.kind === 'ConversationStateUpdateEvent') continue;
    if (ev.kind !== 'MessageEvent') break;
    if (ev.source === 'agent') said++;
  }
  if (said >= m) return { kind: 'stuck', pattern: 'monologue', detail: `The agent sent ${said} messages in a row without user input.` };

  // 4. A/B/A/B/A/B over actions and observations.
  const p = STUCK_THRESHOLDS.alternatingPattern;
  const results = answers.filter((o) => o.kind !== 'UserRejectObservation');
  if (window.length >= p && actions.length >= p && results.length >= p) {
    const a = actions.slice(0, p).map(actionKey);
    const o = results.slice(0, p).map(answerKey);
    const alternates = (k: string[]) => k.every((x, i) => x === k[i % 2]);
    if (alternates(a) && alternates(o)) return { kind: 'stuck', pattern: 'alternating_action_observation', detail: `The agent alternated between two actions with the same two observations over ${p} steps.` };
  }
  return { kind: 'ok' };
}
