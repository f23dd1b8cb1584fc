// Credential bindings of ACP agents (OpenHands 1.58 PUT /api/conversations/{id}/credential-bindings/
// {secret_name}): instead of a static secret, a credential file's content comes from an HTTP source
// that holds the canonical copy with a version (GET -> {value, version}; PUT {expected_version, value}
// -> {version}, 409 when another runtime changed it). While the ACP server runs, a token it refreshes
// in the file is written back to the source, so the refresh is not lost when the sandbox goes away.
// 1.58 supports it for Codex's auth.json (CODEX_AUTH_JSON) only: the file lives in a private temporary
// CODEX_HOME (not the conversation's durable folder, whose copy is removed), watched every 100 ms,
// flushed when the server stops (pause, prepare-for-sandbox-pause, delete) and then removed.
import { createHash } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const CODEX_AUTH_SECRET_NAME = 'CODEX_AUTH_JSON';
const SUPPORTED = new Set([CODEX_AUTH_SECRET_NAME]);
const MONITOR_MS = 100;
const TIMEOUT_MS = 5000;

export function supportsCredentialBinding(name: string): boolean {
  return SUPPORTED.has(name);
}

/** Why a source could not be used, with the status the activation answers (1.58's mapping). */
export class CredentialBindingError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}
const unsupported = () => new CredentialBindingError(501, 'Credential binding source is unsupported');
const invalid = () => new CredentialBindingError(422, 'Credential binding source is invalid');
const conflict = () => new CredentialBindingError(409, 'Credential binding source changed');
const rejected = () => new CredentialBindingError(403, 'Credential binding authorization was rejected');
const unavailable = () => new CredentialBindingError(502, 'Credential binding source is unavailable');

/** A Codex auth.json that can sign in: ChatGPT mode with a refresh token (1.58 is_valid_codex_auth). */
export function isValidCodexAuth(value: unknown): boolean {
  if (typeof value !== 'string' || !value.trim()) return false;
  try {
    const p = JSON.parse(value) as { auth_mode?: unknown; tokens?: { refresh_token?: unknown } };
    if (!p || typeof p !== 'object' || Array.isArray(p)) return false;
    if (p.auth_mode !== undefined && p.auth_mode !== null && p.auth_mode !== 'chatgpt') return false;
    return typeof p.tokens?.refresh_token === 'string' && p.tokens.refresh_token !== '';
  } catch {
    return false;
  }
}

/** The HTTP source of one credential. Headers (its authorization) can be rotated; the URL cannot. */
export class HttpCredentialBinding {
  readonly url: string;
  #headers: Record<string, string>;
  constructor(url: string, headers: Record<string, string>) {
    this.url = url;
    this.#headers = { ...headers };
  }

  get headers(): Record<string, string> {
    return { ...this.#headers };
  }

  reauthorize(headers: Record<string, string>): void {
    this.#headers = { ...headers };
  }

  async load(): Promise<{ value: string; version: string }> {
    const body = await this.#request('GET');
    const { value, version } = (body ?? {}) as { value?: unknown; version?: unknown };
    if (typeof value !== 'string' || typeof version !== 'string' || !version) throw invalid();
    return { value, version };
  }

  async replace(expectedVersion: string, value: string): Promise<string> {
    const body = await this.#request('PUT', { expected_version: expectedVersion, value });
    const version = (body as { version?: unknown } | null)?.version;
    if (typeof version !== 'string' || !version) throw invalid();
    return version;
  }

  /** 1.58's load with retries: a source that is briefly unavailable is asked three times. */
  async probe(wait: (ms: number) => Promise<void>): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.load();
        return;
      } catch (e) {
        if (!(e instanceof CredentialBindingError) || e.status !== 502 || attempt === 2) throw e;
        await wait(250 * 2 ** attempt);
      }
    }
  }

  async #request(method: 'GET' | 'PUT', json?: unknown): Promise<unknown> {
    let res: Response;
    try {
      res = await fetch(this.url, { method, headers: { ...this.#headers, ...(json ? { 'content-type': 'application/json' } : {}) }, ...(json ? { body: JSON.stringify(json) } : {}), signal: AbortSignal.timeout(TIMEOUT_MS), redirect: 'error' });
    } catch (e) {
      if (e instanceof TypeError && /URL|protocol|scheme/i.test(String((e as { cause?: unknown }).cause ?? e.message))) throw invalid();
      throw unavailable();
    }
    if (res.status === 501) throw unsupported();
    if (res.status === 404 || res.status === 400 || res.status === 422) throw invalid();
    if (res.status === 409) throw conflict();
    if (res.status === 401 || res.status === 403) throw rejected();
    if (!res.ok) throw unavailable();
    try {
      return await res.json();
    } catch {
      throw invalid();
    }
  }
}

const digest = (v: string) => createHash('sha256').update(v).digest('hex');

/**
 * One bound credential file while its ACP server runs: written to a private CODEX_HOME, watched, and
 * written back to the source when it changes. `track` registers each value seen (the file's text and
 * its tokens) for masking, as 1.58 does, so a refreshed token never shows in events either.
 */
export class CodexAuthLifecycle {
  readonly env: Record<string, string>;
  readonly #binding: HttpCredentialBinding;
  readonly #dir: string;
  readonly #path: string;
  readonly #track: (values: string[]) => void;
  #version: string;
  #digest: string;
  #timer: NodeJS.Timeout | undefined;
  #syncing: Promise<void> = Promise.resolve();
  #error: CredentialBindingError | undefined;

  private constructor(binding: HttpCredentialBinding, dir: string, value: string, version: string, track: (values: string[]) => void) {
    this.#binding = binding;
    this.#dir = dir;
    this.#path = join(dir, 'auth.json');
    this.#track = track;
    this.#version = version;
    this.#digest = digest(value);
    this.env = { CODEX_HOME: dir };
  }

  static async materialize(binding: HttpCredentialBinding, track: (values: string[]) => void): Promise<CodexAuthLifecycle> {
    const { value, version } = await binding.load();
    if (!isValidCodexAuth(value)) throw new CredentialBindingError(422, 'ChatGPT authentication is invalid. Please sign in again.');
    const dir = mkdtempSync(join(tmpdir(), 'openhands-codex-'));
    chmodSync(dir, 0o700);
    const lc = new CodexAuthLifecycle(binding, dir, value, version, track);
    lc.#trackValue(value);
    writeFileSync(lc.#path, value, { mode: 0o600 });
    lc.#timer = setInterval(() => void lc.#sync().catch(() => undefined), MONITOR_MS);
    lc.#timer.unref();
    return lc;
  }

  /** Writes a changed file back now (prepare-for-sandbox-pause, close); rejects with the first sync error. */
  async flush(): Promise<void> {
    await this.#sync();
    if (this.#error) throw this.#error;
  }

  /** Stops watching, flushes what the server last wrote, removes the private folder. */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    try {
      await this.flush();
    } finally {
      rmSync(this.#dir, { recursive: true, force: true });
    }
  }

  #sync(): Promise<void> {
    // One sync at a time: the monitor and a flush never race on the expected version.
    this.#syncing = this.#syncing.then(() => this.#syncOnce());
    return this.#syncing;
  }

  async #syncOnce(): Promise<void> {
    if (this.#error) return;
    let value: string;
    try {
      value = readFileSync(this.#path, 'utf8');
    } catch {
      return;
    }
    // A half-written or broken file is not a refresh: it waits for the server to finish writing.
    if (!isValidCodexAuth(value)) return;
    const d = digest(value);
    if (d === this.#digest) return;
    this.#trackValue(value);
    try {
      this.#version = await this.#binding.replace(this.#version, value);
      this.#digest = d;
    } catch (e) {
      if (e instanceof CredentialBindingError && e.status === 409) {
        // Another runtime wrote first: converged if it wrote the same thing.
        const now = await this.#binding.load().catch(() => undefined);
        if (now?.value === value) {
          this.#version = now.version;
          this.#digest = d;
          return;
        }
      }
      const err = e instanceof CredentialBindingError ? e : unavailable();
      // An unavailable source is asked again at the next tick; any other answer is final.
      if (err.status === 502) throw err;
      this.#error = err;
    }
  }

  #trackValue(value: string): void {
    const values = [value];
    try {
      const tokens = (JSON.parse(value) as { tokens?: Record<string, unknown> }).tokens ?? {};
      for (const t of Object.values(tokens)) if (typeof t === 'string' && t) values.push(t);
    } catch {
      // not JSON: the whole value is tracked
    }
    this.#track(values);
  }
}
