// Per-conversation secrets and LLM api keys. Decision: secret values never reach the database in
// plain text. They live in memory; when the process has a secret key (OH_SECRET_KEY, as OpenHands
// names it) they are also persisted AES-256-GCM sealed, so a restarted server gets them back.
// Without a key a restart forgets them (the LLM falls back to the server's defaults) and says so
// in the log. A rotated key (OH_PREVIOUS_SECRET_KEYS holds the old one) still opens what the old one
// sealed; reseal.ts seals it again with the new one at start. The key is never written to disk by
// us: the data dir may sit inside the workspace, where the agent can read files.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { createMasker } from '../agent/mask.ts';

const IV_BYTES = 12;
const TAG_BYTES = 16;
const PREFIX = 'aes-256-gcm:v1:';

export interface ConversationSecrets {
  secrets: Record<string, string>;
  llmApiKey?: string;
  /**
   * The security analyzer's keys by place (splitAnalyzerKeys in src/agent/confirmation/policy.ts), and
   * the critic's (`agent.critic.api_key`) at CRITIC_KEY_PLACE: the keys of the agent's advisers, which
   * the stored request has null.
   */
  analyzerKeys?: Record<string, string>;
  /** The agent's `mcp_config` with its env and header values (the stored request has them null). */
  mcpConfig?: Record<string, unknown>;
  /** The routing tool's inline LLMs' secret fields by profile name (conversation/route-llms.ts; the stored request has them null). */
  routeLlmKeys?: Record<string, Record<string, string>>;
}

/** Where the critic's key sits among `analyzerKeys` (no analyzer place starts with `critic.`). */
export const CRITIC_KEY_PLACE = 'critic.api_key';

export class SecretSealer {
  readonly #key: Buffer;
  /** Earlier keys (OH_PREVIOUS_SECRET_KEYS): they only open, the most recently retired first. */
  readonly #previous: Buffer[];

  /**
   * Any string; it is stretched to 256 bits with SHA-256 (a random key is expected, not a password).
   * `previous`: keys this one replaced, as 1.58's Cipher takes them (blank ones and repeats of the
   * current key dropped, order kept).
   */
  constructor(secretKey: string, previous: readonly string[] = []) {
    this.#key = derive(secretKey);
    this.#previous = [...new Set(previous.filter((k) => k.trim() !== '' && k !== secretKey))].map(derive);
  }

  get hasPrevious(): boolean {
    return this.#previous.length > 0;
  }

  /** `context` (the conversation id) is bound as associated data: a row copied elsewhere won't open. */
  seal(value: ConversationSecrets, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    cipher.setAAD(Buffer.from(context));
    const ct = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
    return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), ct]).toString('base64');
  }

  /** Undefined when the text cannot be opened with this key nor a previous one (a changed key, a foreign row). */
  open(sealed: string, context: string): ConversationSecrets | undefined {
    for (const key of [this.#key, ...this.#previous]) {
      const opened = openWith(key, sealed, context);
      if (opened) return opened;
    }
    return undefined;
  }

  /**
   * `sealed` under the current key (1.58's Cipher.rotate): the same text when the current key seals
   * it already, sealed again when only a previous key opens it, undefined when no key does.
   */
  reseal(sealed: string, context: string): string | undefined {
    if (openWith(this.#key, sealed, context)) return sealed;
    const opened = this.open(sealed, context);
    return opened && this.seal(opened, context);
  }
}

/** What a log says when a stored value opens with no configured key (1.58's UNDECRYPTABLE_SECRET_HINT). */
export const UNOPENABLE_HINT = 'it was sealed with a key that is neither OH_SECRET_KEY nor in OH_PREVIOUS_SECRET_KEYS: restore that key as OH_SECRET_KEY, or add it to OH_PREVIOUS_SECRET_KEYS';

const derive = (secretKey: string) => createHash('sha256').update(secretKey).digest();

function openWith(key: Buffer, sealed: string, context: string): ConversationSecrets | undefined {
  if (!sealed.startsWith(PREFIX)) return undefined;
  const raw = Buffer.from(sealed.slice(PREFIX.length), 'base64');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    const text = Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    return JSON.parse(text) as ConversationSecrets;
  } catch {
    return undefined;
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
