// The two JSON forms of a stored event. The store keeps the full form (defaults applied, nulls
// kept) and hands it to the event sink, which validates strictly. Search results and WebSocket
// frames use OpenHands' `exclude_none` form: properties whose value is null are left out.
import { Invalid } from '../../api/errors.ts';

/** Free-form payloads whose nulls carry meaning (a state snapshot's `title: null`, MCP tool data). */
const OPAQUE_KEYS: ReadonlySet<string> = new Set(['value', 'data', 'metadata', 'hook_input', 'storage_state', 'params']);

function strip(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(strip);
  if (typeof v !== 'object' || v === null) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    if (x === null) continue;
    out[k] = OPAQUE_KEYS.has(k) ? x : strip(x);
  }
  return out;
}

/** `exclude_none` form of a stored event's JSON text. */
export function toWireJson(json: string): string {
  return JSON.stringify(strip(JSON.parse(json)));
}

export function excludeNone<T>(value: T): T {
  return strip(value) as T;
}

const HAS_ZONE = /(Z|[+-]\d{2}:?\d{2})$/i;

/**
 * A timestamp as UTC ISO with milliseconds (`2026-08-22T10:15:30.123Z`), so string order is time
 * order. A naive timestamp (no zone, as OpenHands writes them) is read as UTC. Undefined when the
 * text is not a date.
 */
export function normalizeTimestamp(text: string): string | undefined {
  const t = text.trim();
  const ms = Date.parse(HAS_ZONE.test(t) ? t : `${t}Z`);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

/** A timestamp query parameter, or a 422 located at `loc`. */
export function timestampParam(text: string | undefined, loc: (string | number)[]): string | undefined {
  if (text === undefined || text === '') return undefined;
  const ts = normalizeTimestamp(text);
  if (ts === undefined) throw new Invalid([{ loc, msg: 'Input should be a valid datetime', type: 'datetime_parsing' }]);
  return ts;
}
