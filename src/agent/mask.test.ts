// The masker: a secret and its common encodings (#18 finding 12), computed here independently with
// Buffer and encodeURIComponent, never with the masker's own helpers.
import { describe, expect, it } from 'vitest';
import { createMasker, SECRET_MASK } from './mask.ts';

const SECRET = 'tok_Z9!a b/c+d?e=f"g\\h';
const mask = createMasker({ TOKEN: SECRET });
const hidden = (text: string) => {
  const out = mask(text);
  expect(out).toContain(SECRET_MASK);
  return out;
};

describe('createMasker', () => {
  it('masks the value and its base64 forms at every offset, standard and URL-safe', () => {
    expect(hidden(`x ${SECRET} y`)).toBe(`x ${SECRET_MASK} y`);
    for (const prefix of ['', 'u', 'us', 'use', 'user:', 'Authorization: Basic x']) {
      for (const suffix of ['', '!', '!!', '!!!']) {
        const b = Buffer.from(prefix + SECRET + suffix);
        for (const encoded of [b.toString('base64'), b.toString('base64url')]) {
          const out = hidden(encoded);
          // What is left is at most the few characters mixing the secret with its neighbours.
          expect(out.replace(SECRET_MASK, '').length, `${prefix}|${suffix}|${encoded}`).toBeLessThanOrEqual(Math.ceil(((prefix.length + suffix.length) * 4) / 3) + 6);
        }
      }
    }
  });

  it('masks hex in either case, URL encoding in its spellings, and the JSON-escaped form', () => {
    const hex = Buffer.from(SECRET).toString('hex');
    expect(mask(`a${hex}b`)).toBe(`a${SECRET_MASK}b`);
    expect(mask(hex.toUpperCase())).toBe(SECRET_MASK);
    const url = encodeURIComponent(SECRET);
    expect(mask(`q=${url}&x=1`)).toBe(`q=${SECRET_MASK}&x=1`);
    expect(mask(url.toLowerCase().replace(/tok_z9/, 'tok_Z9'))).toBe(SECRET_MASK);
    expect(mask(url.replaceAll('%20', '+'))).toBe(SECRET_MASK);
    expect(mask(JSON.stringify({ v: SECRET }))).toBe(`{"v":"${SECRET_MASK}"}`);
  });

  it('leaves ordinary text alone, and short values and their short encodings unmasked', () => {
    const text = 'ls -la; echo done; base64 is a word; deadbeef 0123';
    expect(mask(text)).toBe(text);
    const short = createMasker({ A: 'ab', B: 'xyz' });
    expect(short('ab xyz eHl6 78797a')).toBe(`ab ${SECRET_MASK} eHl6 ${SECRET_MASK}`);
  });

  it('replaces a secret that contains another one whole', () => {
    const m = createMasker({ A: 'secret-one', B: 'secret-one-and-more' });
    expect(m('secret-one-and-more / secret-one')).toBe(`${SECRET_MASK} / ${SECRET_MASK}`);
  });
});
