// Secrets never leave the sandbox in clear: every text the agent emits passes through a masker, and
// the agent server masks events again before it stores them (agent-server/secrets.ts uses this file).
//
// What is masked, for each secret value (decision, #18 finding 12): the value itself and the
// encodings a command line turns it into without trying hard:
// - base64, standard and URL-safe, at each of the three byte offsets a secret can sit at inside a
//   longer encoded string (`echo -n "user:$TOKEN" | base64`): the characters that depend only on
//   the secret's bytes are masked (at most two characters at each end carry a few of its bits);
// - hex, lower and upper case (`xxd -p`, `od -tx1` without spaces);
// - URL encoding (`encodeURIComponent`, percent escapes in either case, `+` for space);
// - the JSON-escaped form (a value with quotes, backslashes or newlines inside a JSON string).
// Not masked: other transformations (reversed, split across lines, compressed, encrypted,
// base32, per-character escapes) — an agent that wants to exfiltrate a secret it can read will
// always find one; masking keeps secrets out of transcripts by accident, it is not a boundary.
export const SECRET_MASK = '<secret-hidden>';

/** Values shorter than this are not masked: masking "a" or "1" would shred every output. */
const MIN_SECRET_LENGTH = 3;
/** Encoded forms shorter than this are not masked (a short base64 fragment is ordinary text). */
const MIN_ENCODED_LENGTH = 6;

/** The base64 characters that depend only on `bytes` when they start `offset` bytes into the input. */
function base64Cores(bytes: Buffer): string[] {
  const out: string[] = [];
  for (const offset of [0, 1, 2]) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    const start = Math.ceil((8 * offset) / 6);
    const end = Math.floor((8 * (offset + bytes.length)) / 6);
    out.push(encoded.slice(start, end));
  }
  // A whole value encoded on its own also ends in its final, partly padded characters.
  out.push(bytes.toString('base64').replace(/=+$/, ''));
  return out.flatMap((s) => [s, s.replaceAll('+', '-').replaceAll('/', '_')]);
}

function urlForms(value: string): string[] {
  const upper = encodeURIComponent(value);
  const lower = upper.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase());
  return [upper, lower, upper.replaceAll('%20', '+')];
}

/** Every form of `value` a masker replaces (the value first). */
export function secretForms(value: string): string[] {
  if (value.length < MIN_SECRET_LENGTH) return [];
  const bytes = Buffer.from(value, 'utf8');
  const hex = bytes.toString('hex');
  const encoded = [...base64Cores(bytes), hex, hex.toUpperCase(), ...urlForms(value), JSON.stringify(value).slice(1, -1)];
  return [value, ...encoded.filter((f) => f.length >= MIN_ENCODED_LENGTH && f !== value)];
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Replaces each secret value and its encoded forms (see the top of this file) with `mask`.
 * Longest forms first, so a secret that contains another is replaced whole; one pass over the text.
 */
export function createMasker(secrets: Readonly<Record<string, string>> | Iterable<string>, mask: string = SECRET_MASK): (text: string) => string {
  const values = Symbol.iterator in secrets ? [...(secrets as Iterable<string>)] : Object.values(secrets);
  const forms = [...new Set(values.flatMap(secretForms))].sort((a, b) => b.length - a.length);
  if (forms.length === 0) return (text) => text;
  const pattern = new RegExp(forms.map(escapeRegExp).join('|'), 'g');
  return (text) => text.replace(pattern, mask);
}

/** Masks every string inside a JSON-like value. */
export function maskDeep<T>(value: T, mask: (text: string) => string): T {
  if (typeof value === 'string') return mask(value) as T;
  if (Array.isArray(value)) return value.map((v) => maskDeep(v, mask)) as T;
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, maskDeep(v, mask)])) as T;
  return value;
}
