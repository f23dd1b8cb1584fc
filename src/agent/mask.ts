// Secrets never leave the sandbox in clear: every text the agent emits passes through a masker.
export const SECRET_MASK = '<secret-hidden>';

/** Values shorter than this are not masked: masking "a" or "1" would shred every output. */
const MIN_SECRET_LENGTH = 3;

/** Replaces each secret value (and its base64 and URL-encoded forms) with `<secret-hidden>`. */
export function createMasker(secrets: Readonly<Record<string, string>>): (text: string) => string {
  const values = Object.values(secrets)
    .filter((v) => v.length >= MIN_SECRET_LENGTH)
    .flatMap((v) => [v, Buffer.from(v).toString('base64'), encodeURIComponent(v)])
    .filter((v, i, all) => v.length >= MIN_SECRET_LENGTH && all.indexOf(v) === i)
    // Longest first, so a secret that contains another is replaced whole.
    .sort((a, b) => b.length - a.length);
  if (values.length === 0) return (text) => text;
  return (text) => values.reduce((out, v) => (out.includes(v) ? out.split(v).join(SECRET_MASK) : out), text);
}

/** Masks every string inside a JSON-like value. */
export function maskDeep<T>(value: T, mask: (text: string) => string): T {
  if (typeof value === 'string') return mask(value) as T;
  if (Array.isArray(value)) return value.map((v) => maskDeep(v, mask)) as T;
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, maskDeep(v, mask)])) as T;
  return value;
}
