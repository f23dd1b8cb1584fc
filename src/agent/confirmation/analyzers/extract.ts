// What of an ActionEvent the local analyzers read, and how its text is normalized before matching
// (OpenHands 1.58 `defense_in_depth/utils.py`, rewritten). Two corpora: the executable one (the
// call's argument leaves, the tool name) that shell signatures scan, and the text one (summary,
// reasoning, thought) that only injection signatures scan, because "rm -rf /" in a thought is not
// an action while "ignore all previous instructions" is dangerous anywhere.
import type { ActionEvent } from '../../../api/events/index.ts';

/** Bound on each corpus (joined length, separators counted): regex time stays bounded; beyond it nothing is seen. */
export const EXTRACT_CAP = 30_000;

class Bounded {
  readonly segments: string[] = [];
  #total = 0;
  add(text: string): void {
    const sep = this.segments.length ? 1 : 0;
    const room = EXTRACT_CAP - this.#total - sep;
    if (room <= 0) return;
    const t = text.length > room ? text.slice(0, room) : text;
    this.segments.push(t);
    this.#total += t.length + sep;
  }
}

function leaves(v: unknown, out: string[], depth = 0): void {
  // 1.58 falls back to the raw arguments on RecursionError (about 1000 levels); so do we.
  if (depth > 900) throw new RangeError('arguments nested too deep');
  if (typeof v === 'string') out.push(v);
  else if (Array.isArray(v)) for (const x of v) leaves(x, out, depth + 1);
  else if (v && typeof v === 'object') for (const x of Object.values(v)) leaves(x, out, depth + 1);
}

/** Executable segments: argument leaves first (the main injection surface gets the budget), then the names. */
export function execSegments(action: ActionEvent): string[] {
  const buf = new Bounded();
  const args = action.tool_call?.arguments;
  if (args) {
    try {
      const out: string[] = [];
      leaves(JSON.parse(args), out);
      for (const s of out) buf.add(s);
    } catch {
      buf.add(args);
    }
  }
  if (action.tool_name) buf.add(action.tool_name);
  if (action.tool_call?.name) buf.add(action.tool_call.name);
  return buf.segments;
}

/** Text segments: summary first, then reasoning, then each thought. */
export function textSegments(action: ActionEvent): string[] {
  const buf = new Bounded();
  if (action.summary) buf.add(action.summary);
  if (action.reasoning_content) buf.add(action.reasoning_content);
  for (const t of action.thought ?? []) if (t.text) buf.add(t.text);
  return buf.segments;
}

export const execContent = (a: ActionEvent): string => execSegments(a).join(' ');
export const allContent = (a: ActionEvent): string => [...execSegments(a), ...textSegments(a)].join(' ');

// Invisible characters stripped before matching: zero-width, format, bidi, Mongolian variation
// selectors, variation selectors, the tag block, C0/C1 controls (not TAB/LF/CR) and DEL.
const INVISIBLE = new RegExp(
  '[\\u200b\\u200c\\u200d\\u200e\\u200f\\u2060\\ufeff\\u180e]' +
    '|[\\u00ad\\u034f\\u2009\\u200a\\ufff9\\ufffa\\ufffb\\ufffc\\u2061\\u2062\\u2063\\u2064\\u206a-\\u206f\\u2800\\u1680\\u115f\\u1160\\u3164\\uffa0\\u061c]' +
    '|[\\u202a-\\u202e\\u2066-\\u2069]|[\\u180b\\u180c\\u180d\\u180f]|[\\ufe00-\\ufe0f]' +
    '|[\\u{e0000}-\\u{e007f}]|[\\u{e0100}-\\u{e01ef}]' +
    '|[\\u0001-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u0080-\\u009f\\u007f]',
  'gu',
);

/**
 * Collapses what hides a command from a regex but not from a shell: NULs, invisible characters,
 * fullwidth forms (NFKC), then runs of whitespace (Python's `\s` is Unicode-wide, like JS's).
 */
export function normalize(text: string): string {
  return text.replaceAll('\0', '').replace(INVISIBLE, '').normalize('NFKC').replace(/\s+/gu, ' ');
}
