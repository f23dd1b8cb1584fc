// Stable cursor paging over in-memory lists: a page_id names the sort key of the first item of
// the page (opaque base64url of [key, name]), so items created meanwhile never shift a page.
import { Invalid } from '../api/errors.ts';
import { normalizeTimestamp } from '../agent-server/store/wire.ts';

export interface Page<T> {
  items: T[];
  next_page_id: string | null;
}

export interface Keyed<T> {
  key: string;
  name: string;
  item: T;
}

function encode(key: string, name: string): string {
  return Buffer.from(JSON.stringify([key, name])).toString('base64url');
}

function decode(pageId: string): [string, string] {
  try {
    const v = JSON.parse(Buffer.from(pageId, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'string') return [v[0], v[1]];
  } catch {
    // fall through
  }
  throw new Invalid([{ loc: ['query', 'page_id'], msg: 'Invalid page_id', type: 'value_error' }]);
}

function compare(a: { key: string; name: string }, b: { key: string; name: string }): number {
  return a.key < b.key ? -1 : a.key > b.key ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** Sorts by (key, name), ascending or descending, and cuts the page that starts at `pageId`. */
export function pageOf<T>(rows: Keyed<T>[], opts: { pageId?: string | undefined; limit: number; descending: boolean }): Page<T> {
  const dir = opts.descending ? -1 : 1;
  const sorted = [...rows].sort((a, b) => dir * compare(a, b));
  let start = 0;
  if (opts.pageId !== undefined && opts.pageId !== '') {
    const [key, name] = decode(opts.pageId);
    const at = sorted.findIndex((r) => dir * compare(r, { key, name }) >= 0);
    start = at === -1 ? sorted.length : at;
  }
  const page = sorted.slice(start, start + opts.limit);
  const next = sorted[start + opts.limit];
  return { items: page.map((r) => r.item), next_page_id: next ? encode(next.key, next.name) : null };
}

/** A timestamp filter parameter, normalised to UTC ISO; 422 at `query.<name>` when unparseable. */
export function timeParam(text: string | undefined, name: string): string | undefined {
  if (text === undefined || text === '') return undefined;
  const ts = normalizeTimestamp(text);
  if (ts === undefined) throw new Invalid([{ loc: ['query', name], msg: 'Input should be a valid datetime', type: 'datetime_parsing' }]);
  return ts;
}

/**
 * Stored timestamps seen lately, normalised: a page of records compares and shows about a hundred,
 * mostly the same from one request to the next, and parsing them was a tenth of a search's time
 * (issue #16). Cleared when full rather than evicted one by one: a miss only costs a parse.
 */
const isoCache = new Map<string, string>();
const ISO_CACHE_SIZE = 10_000;

/** A stored timestamp (whole seconds or milliseconds, any zone form) as comparable UTC ISO. */
export function isoOf(text: string | undefined): string {
  if (!text) return '';
  let iso = isoCache.get(text);
  if (iso === undefined) {
    iso = normalizeTimestamp(text) || '';
    if (isoCache.size >= ISO_CACHE_SIZE) isoCache.clear();
    isoCache.set(text, iso);
  }
  return iso;
}
