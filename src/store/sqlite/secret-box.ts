// Encryption at rest for Secret `data` (AES-256-GCM). Each object is sealed with a fresh IV and
// its namespace/name as associated data, so a ciphertext copied onto another Secret's row fails
// to open instead of silently moving a credential.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';

const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const PREFIX = 'aes-256-gcm:v1:';

export class SecretBox {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== KEY_BYTES) throw new Error(`SqliteStore: secretKey must be ${KEY_BYTES} bytes, got ${key.length}`);
    this.#key = Buffer.from(key);
  }

  seal(plaintext: string, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    cipher.setAAD(Buffer.from(context));
    const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), ct]).toString('base64');
  }

  open(sealed: string, context: string): string {
    if (!sealed.startsWith(PREFIX)) throw new Error(`SqliteStore: Secret ${context} has data in an unknown format`);
    const raw = Buffer.from(sealed.slice(PREFIX.length), 'base64');
    const decipher = createDecipheriv('aes-256-gcm', this.#key, raw.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch (err) {
      // Never include the ciphertext or key material: the message may end up in a log.
      throw new Error(`SqliteStore: cannot decrypt Secret ${context} (wrong secret key?)`, { cause: err });
    }
  }
}

export function isSealed(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith(PREFIX);
}

/**
 * The key for a database file: `<db>.key` next to it, created on first use with mode 0600.
 * `wx` makes two processes racing to create it agree on one key (the loser reads the winner's).
 */
export function loadOrCreateKeyFile(path: string): Buffer {
  try {
    writeFileSync(path, randomBytes(KEY_BYTES).toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const key = Buffer.from(readFileSync(path, 'utf8').trim(), 'base64');
  if (key.length !== KEY_BYTES) throw new Error(`SqliteStore: key file ${path} does not hold a ${KEY_BYTES}-byte base64 key`);
  return key;
}

export function ephemeralKey(): Buffer {
  return randomBytes(KEY_BYTES);
}
