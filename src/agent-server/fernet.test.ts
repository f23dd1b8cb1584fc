// The Fernet tokens of X-Expose-Secrets: encrypted. The known tokens were made by OpenHands 1.58.2's
// Cipher("fernet-test-key") (its venv's cryptography); e2e/parity's secrets_encrypted flow checks the
// same against the running 1.58.2 both ways.
import { describe, expect, it } from 'vitest';
import { Fernet, FERNET_TOKEN_PREFIX, looksEncrypted } from './fernet.ts';

const KEY = 'fernet-test-key';
/** 1.58.2: Cipher(KEY)._get_fernet()._encrypt_from_parts(b"sk-secret \xc3\xa9", 1700000000, bytes(range(16))). */
const FIXED = 'gAAAAABlU_EAAAECAwQFBgcICQoLDA0OD9nJBb227kuFkDmqokHFETf6haL-s2iazVBmz13zjIICKRqXht09PZ1Xu0ZyxOP_Cw==';
/** 1.58.2: Cipher(KEY).encrypt(SecretStr("hello")) (random IV, its clock). */
const FROM_158 = 'gAAAAABrB-lnr8aZT6jjuSDrMR_ERRPG4nSvDcmxwt_JN9qm_dVQKK_yyx8KvO4d3nsD0jx2sawGOy8n1akyIe2B_lKKNxcEtw==';

describe('Fernet (OpenHands 1.58 Cipher)', () => {
  const f = new Fernet(KEY);

  it('makes the very token 1.58 makes from the same key, time and IV, and opens 1.58 tokens', () => {
    expect(f.encrypt('sk-secret é', 1_700_000_000_000, Buffer.from([...Array(16).keys()]))).toBe(FIXED);
    expect(f.decrypt(FIXED)).toBe('sk-secret é');
    expect(f.decrypt(FROM_158)).toBe('hello');
  });

  it('round-trips any text with a fresh IV each time, always under the prefix 1.58 looks for', () => {
    for (const value of ['', 'x', 'a'.repeat(16), 'multi\nline "json" {}', '🔑'.repeat(40)]) {
      const a = f.encrypt(value);
      const b = f.encrypt(value);
      expect(a).not.toBe(b);
      expect(a.startsWith(FERNET_TOKEN_PREFIX) && looksEncrypted(a)).toBe(true);
      expect(a.length % 4).toBe(0);
      expect(f.decrypt(a)).toBe(value);
    }
  });

  it('opens nothing of another key, a changed byte, a cut token or a plain value', () => {
    expect(new Fernet('another-key').decrypt(FIXED)).toBeUndefined();
    const raw = Buffer.from(FIXED, 'base64url');
    for (const at of [0, 5, 12, 30, raw.length - 1]) {
      const bad = Buffer.from(raw);
      bad[at]! ^= 1;
      expect(f.decrypt(bad.toString('base64url') + '==')).toBeUndefined();
    }
    expect(f.decrypt(FIXED.slice(0, -8))).toBeUndefined();
    expect(f.decrypt(FIXED.replace(/=+$/, ''))).toBeUndefined(); // 1.58 refuses it unpadded too
    expect(f.decrypt('sk-plain-value')).toBeUndefined();
    expect(looksEncrypted('sk-plain-value')).toBe(false);
  });

  it('opens a token of a previous key (OH_PREVIOUS_SECRET_KEYS) and makes new ones with the current key only', () => {
    const rotated = new Fernet('key-b', ['key-a']);
    const old = new Fernet('key-a').encrypt('sk-old');
    expect(rotated.decrypt(old)).toBe('sk-old');
    const fresh = rotated.encrypt('sk-new');
    expect(new Fernet('key-b').decrypt(fresh)).toBe('sk-new');
    expect(new Fernet('key-a').decrypt(fresh)).toBeUndefined();
    expect(new Fernet('key-c', ['key-b']).decrypt(old)).toBeUndefined();
  });
});
