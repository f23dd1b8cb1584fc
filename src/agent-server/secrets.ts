// Per-conversation secrets and LLM api keys. Decision: secret values never reach the database in
// plain text. They live in memory; when the process has a secret key (OH_SECRET_KEY, as OpenHands
// names it) they are also persisted AES-256-GCM sealed, so a restarted server gets them back.
// Without a key a restart forgets them (the LLM falls back to the server's defaults) and says so
// in the log. The key is never written to disk by us: the data dir may sit inside the workspace,
// where the agent can read files.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { createMasker } from '../agent/mask.ts';

const IV_BYTES = 12;
const TAG_BYTES = 16;
const PREFIX = 'aes-256-gcm:v1:';

export interface ConversationSecrets {
  secrets: Record<string, string>;
  llmApiKey?: string;
  /** The security analyzer's keys by place (splitAnalyzerKeys in src/agent/confirmation/policy.ts). */
  analyzerKeys?: Record<string, string>;
  /** The agent's `mcp_config` with its env and header values (the stored request has them null). */
  mcpConfig?: Record<string, unknown>;
}

export class SecretSealer {
  readonly #key: Buffer;

  /** Any string; it is stretched to 256 bits with SHA-256 (a random key is expected, not a password). */
  constructor(secretKey: string) {
    this.#key = createHash('sha256').update(secretKey).digest();
  }

  /** `context` (the conversation id) is bound as associated data: a row copied elsewhere won't open. */
  seal(value: ConversationSecrets, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    cipher.setAAD(Buffer.from(context));
    const ct = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
    return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), ct]).toString('base64');
  }

  /** Undefined when the text cannot be opened with this key (a changed key, a foreign row). */
  open(sealed: string, context: string): ConversationSecrets | undefined {
    if (!sealed.startsWith(PREFIX)) return undefined;
    const raw = Buffer.from(sealed.slice(PREFIX.length), 'base64');
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, raw.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(context));
      decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      const text = Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
      return JSON.parse(text) as ConversationSecrets;
    } catch {
      return undefined;
    }
  }
}

export const MASK = '**********';

let cached: { key: string; mask: (text: string) => string } | undefined;

/**
 * Replaces every occurrence of each secret value in `text`, and of its common encodings (base64 at
 * any offset, hex, URL encoding: agent/mask.ts says which), longest first.
 */
export function maskSecrets(text: string, values: Iterable<string>): string {
  const list = [...values];
  const key = JSON.stringify(list);
  // The same conversation masks every string of every event with the same values: build once.
  if (cached?.key !== key) cached = { key, mask: createMasker(list, MASK) };
  return cached.mask(text);
}
