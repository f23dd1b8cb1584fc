// Parsing stored or received events: defaults applied, strict validation, 422-shaped issues.
import { Invalid, type ValidationIssue } from '../errors.ts';
import { EVENT_SCHEMAS, type Event } from './events.ts';
import { EVENT_KINDS, isEventKind } from './kinds.ts';
import { parseValue } from './validate.ts';

/**
 * Validates `value` as an Event and returns a copy with the kind's defaults filled in.
 * The schema is chosen by `kind` first, so issues point into that kind only.
 * Throws `Invalid` with ValidationIssue[] (loc relative to the event; pass `prefix` to nest it).
 */
export function parseEvent(value: unknown, prefix: (string | number)[] = []): Event {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Invalid([{ loc: [...prefix], msg: 'Input should be an object', type: 'model_type' }]);
  }
  const kind = (value as { kind?: unknown }).kind;
  if (kind === undefined) {
    throw new Invalid([{ loc: [...prefix, 'kind'], msg: 'Field required', type: 'missing' }]);
  }
  if (!isEventKind(kind)) {
    const issue: ValidationIssue = {
      loc: [...prefix, 'kind'],
      msg: `Unknown event kind; expected one of: ${EVENT_KINDS.join(', ')}`,
      type: 'union_tag_invalid',
    };
    throw new Invalid([issue]);
  }
  return parseValue(EVENT_SCHEMAS[kind], value, { prefix }) as Event;
}
