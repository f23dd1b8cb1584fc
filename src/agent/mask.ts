// Secrets never leave the sandbox in clear: every text the agent emits passes through a masker.
export const SECRET_MASK = '<secret-hidden>';

/** Values shorter than this are not masked: masking "a" or "1" would shred every output. */
const MIN_SECRET_LENGTH = 3;

export function createMasker(secrets: Readonly<Record<string, string>>): (text: string) => string {
  const values = Object.values(secrets)
    .filter((v) => v.length >= MIN_SECRET_LENGTH)
    .flatMap((v) => [v, Buffer.from(v).toString('base64'), encodeURIComponent(v)])
    .filter((v, i, all) => v.length >= MIN_SECRET_LENGTH && all.indexOf(v) === i)
    .sort((a, b) => b.length - a.length);
  if (values.length === 0) return (text) => text;
  return (text) => values.reduce((out, v) => out.split(v).join(SECRET_MASK), text);
}
