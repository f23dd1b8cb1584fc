// OpenHands' wire form of an exposed secret (X-Expose-Secrets: encrypted, secrets_encrypted: true):
// a Fernet token under the server's secret key. Fernet is a short, fixed format
// (github.com/fernet/spec): 0x80 | 64-bit big-endian timestamp | 16-byte IV | AES-128-CBC/PKCS7
// ciphertext | HMAC-SHA256 of all before it, urlsafe base64 with padding. The key is 32 bytes: the
// first half signs, the second encrypts. OpenHands 1.58 (sdk/utils/cipher.py) derives it from
// OH_SECRET_KEY as SHA-256 of the key's UTF-8 bytes, so a token either server makes opens on the
// other when both have the same OH_SECRET_KEY. No expiry (1.58 decrypts without a ttl).
//
// Not the at-rest sealing (secrets.ts, AES-256-GCM bound to its row): a token leaves the server, and
// whoever holds it can only send it back to a server with the same key.
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** Every Fernet token starts with this (version byte 0x80, then a timestamp's zero high bytes); 1.58's FERNET_TOKEN_PREFIX. */
export const FERNET_TOKEN_PREFIX = 'gAAAAA';

const VERSION = 0x80;
const HEADER = 1 + 8 + 16;
const MAC = 32;

export class Fernet {
  readonly #signing: Buffer;
  readonly #encryption: Buffer;
  /** Keys that only decrypt (OH_PREVIOUS_SECRET_KEYS), as 1.58's MultiFernet tries them after the current one. */
  readonly #previous: Fernet[];

  /**
   * `secretKey` as OH_SECRET_KEY holds it (any string), derived as 1.58's Cipher._derive_fernet does;
   * `previous` as 1.58's Cipher takes them (blank ones and repeats of the current key dropped).
   */
  constructor(secretKey: string, previous: readonly string[] = []) {
    const key = createHash('sha256').update(secretKey, 'utf8').digest();
    this.#signing = key.subarray(0, 16);
    this.#encryption = key.subarray(16, 32);
    this.#previous = [...new Set(previous.filter((k) => k.trim() !== '' && k !== secretKey))].map((k) => new Fernet(k));
  }

  /** A token for `plaintext`; `now` (ms) and `iv` only to reproduce a known token in a test. */
  encrypt(plaintext: string, now = Date.now(), iv: Buffer = randomBytes(16)): string {
    const header = Buffer.alloc(HEADER);
    header[0] = VERSION;
    header.writeBigUInt64BE(BigInt(Math.floor(now / 1000)), 1);
    iv.copy(header, 9);
    const cipher = createCipheriv('aes-128-cbc', this.#encryption, iv);
    const body = Buffer.concat([header, cipher.update(plaintext, 'utf8'), cipher.final()]);
    return Buffer.concat([body, this.#mac(body)]).toString('base64url') + padding(body.length + MAC);
  }

  /** The plaintext, or undefined for anything that is not a token of this key nor a previous one (wrong key, tampered, not Fernet). */
  decrypt(token: string): string | undefined {
    const opened = this.#decrypt(token);
    if (opened !== undefined) return opened;
    for (const p of this.#previous) {
      const old = p.decrypt(token);
      if (old !== undefined) return old;
    }
    return undefined;
  }

  #decrypt(token: string): string | undefined {
    // Python's urlsafe_b64decode: padding required, the urlsafe alphabet (a token never has anything else).
    if (!/^[A-Za-z0-9_-]+={0,2}$/.test(token) || token.length % 4 !== 0) return undefined;
    const data = Buffer.from(token, 'base64url');
    if (data.length < HEADER + 16 + MAC || data[0] !== VERSION || (data.length - HEADER - MAC) % 16 !== 0) return undefined;
    const body = data.subarray(0, data.length - MAC);
    if (!timingSafeEqual(this.#mac(body), data.subarray(data.length - MAC))) return undefined;
    try {
      const decipher = createDecipheriv('aes-128-cbc', this.#encryption, data.subarray(9, HEADER));
      return Buffer.concat([decipher.update(data.subarray(HEADER, data.length - MAC)), decipher.final()]).toString('utf8');
    } catch {
      return undefined; // bad padding: a token signed with this key never has one
    }
  }

  #mac(body: Buffer): Buffer {
    return createHmac('sha256', this.#signing).update(body).digest();
  }
}

/** Whether a value looks like a token (1.58 treats anything else as plaintext, also under secrets_encrypted). */
export const looksEncrypted = (value: string): boolean => value.startsWith(FERNET_TOKEN_PREFIX);

const padding = (bytes: number) => '='.repeat((3 - (bytes % 3)) % 3);
