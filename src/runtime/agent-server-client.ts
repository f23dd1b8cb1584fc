// A small client for the agent server API, used by the controller (start conversations) and by
// anything else that must reach an agent server. HTTP failures become AgentyardError classes.
import type { ConversationInfo, StartConversationRequest } from '../api/agent-server/conversation.ts';
import { REQUEST_BODY_LIMIT_BYTES } from '../api/agent-server/server.ts';
import { BadGateway, BadRequest, Conflict, Invalid, NotFound, Unavailable, type ValidationIssue } from '../api/errors.ts';

/** A user message as `POST /api/conversations/{id}/events` takes it. */
export interface AgentMessage {
  role: 'user';
  content: unknown[];
  run?: boolean;
}

export interface AgentServerClientOptions {
  timeoutMs?: number;
}

export class AgentServerClient {
  readonly #baseUrl: string;
  readonly #sessionKey: string | undefined;
  readonly #timeoutMs: number;

  constructor(baseUrl: string, sessionKey: string | undefined, opts: AgentServerClientOptions = {}) {
    this.#baseUrl = baseUrl.replace(/\/+$/, '');
    this.#sessionKey = sessionKey;
    this.#timeoutMs = opts.timeoutMs ?? 30_000;
  }

  async health(): Promise<boolean> {
    try {
      const res = await fetch(`${this.#baseUrl}/health`, { signal: AbortSignal.timeout(Math.min(this.#timeoutMs, 5_000)) });
      await res.body?.cancel();
      return res.ok;
    } catch {
      return false;
    }
  }

  /**
   * POST /api/conversations; idempotent on conversation_id (200 when it already exists). The
   * answer is the agent server's ConversationInfo, passed on as it came (not re-validated).
   */
  async createConversation(request: StartConversationRequest | Record<string, unknown>): Promise<ConversationInfo> {
    return (await this.#json('POST', '/api/conversations', request)) as ConversationInfo;
  }

  /** undefined when the agent server does not know the conversation. `includeSkills`: agent.agent_context.skills filled in (1.58 trims them by default). */
  async getConversation(id: string, opts: { includeSkills?: boolean } = {}): Promise<ConversationInfo | undefined> {
    try {
      return (await this.#json('GET', this.#conversationPath(id), undefined, opts.includeSkills ? { include_skills: 'true' } : undefined)) as ConversationInfo;
    } catch (err) {
      if (err instanceof NotFound) return undefined;
      throw err;
    }
  }

  async sendMessage(id: string, message: AgentMessage): Promise<void> {
    await this.#json('POST', `${this.#conversationPath(id)}/events`, message);
  }

  /** Starts the agent on what the conversation holds; Conflict when it is already running. */
  async run(id: string): Promise<void> {
    await this.#json('POST', `${this.#conversationPath(id)}/run`);
  }

  async pause(id: string): Promise<void> {
    await this.#json('POST', `${this.#conversationPath(id)}/pause`);
  }

  async deleteConversation(id: string): Promise<void> {
    await this.#json('DELETE', this.#conversationPath(id));
  }

  /** GET a JSON document (git changes, git diff, ...), errors mapped like every other call. */
  async getJson(path: string, query: Record<string, string> = {}): Promise<unknown> {
    return this.#json('GET', path, undefined, query);
  }

  /** POST a JSON body, read a JSON answer (POST /api/hooks, ...), errors mapped like every other call. */
  async postJson(path: string, body: unknown): Promise<unknown> {
    return this.#json('POST', path, body);
  }

  /** GET a file's bytes as text. */
  async getText(path: string, query: Record<string, string> = {}): Promise<string> {
    const res = await this.request('GET', path, { query });
    if (res.ok) return res.text();
    return this.#fail(res, "GET", path);
  }

  async request(method: string, path: string, opts: { query?: Record<string, string>; body?: unknown } = {}): Promise<Response> {
    const url = new URL(this.#baseUrl + path);
    for (const [k, v] of Object.entries(opts.query ?? {})) url.searchParams.set(k, v);
    const headers: Record<string, string> = {};
    if (this.#sessionKey) headers['x-session-api-key'] = this.#sessionKey;
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    if (body !== undefined && Buffer.byteLength(body) > REQUEST_BODY_LIMIT_BYTES) throw tooLarge(method, path);
    try {
      return await fetch(url, {
        method,
        headers,
        body,
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
    } catch (err) {
      throw new Unavailable(`The agent server at ${this.#baseUrl} could not be reached`, { cause: err });
    }
  }

  #conversationPath(id: string): string {
    return `/api/conversations/${encodeURIComponent(id)}`;
  }

  async #json(method: string, path: string, body?: unknown, query?: Record<string, string>): Promise<unknown> {
    const res = await this.request(method, path, { ...(body === undefined ? {} : { body }), ...(query ? { query } : {}) });
    if (!res.ok) return this.#fail(res, method, path);
    const text = await res.text();
    return text === '' ? undefined : safeJson(text);
  }

  async #fail(res: Response, method: string, path: string): Promise<never> {
    const parsed = safeJson(await res.text());
    const detail = (parsed as { detail?: unknown } | undefined)?.detail;
    if (res.status === 400) throw new BadRequest(typeof detail === 'string' ? detail : `The agent server refused ${method} ${path}`);
    if (res.status === 404) throw new NotFound(typeof detail === 'string' ? detail : `Not found on the agent server: ${path}`);
    if (res.status === 409) throw new Conflict(typeof detail === 'string' ? detail : 'The agent server reported a conflict');
    if (res.status === 422) {
      throw new Invalid(Array.isArray(detail) ? (detail as ValidationIssue[]) : [{ loc: ['body'], msg: typeof detail === 'string' ? detail : 'Invalid request', type: 'value_error' }]);
    }
    if (res.status === 413) throw tooLarge(method, path);
    // Any other refusal of the request itself (405, 414, 415, 431, ...) is as permanent as a 400;
    // only an unauthenticated/forbidden answer (a key being rotated), a timeout and throttling may heal.
    if (res.status >= 400 && res.status < 500 && ![401, 403, 408, 429].includes(res.status)) {
      throw new BadRequest(`The agent server refused ${method} ${path} (${res.status})${typeof detail === 'string' ? `: ${detail}` : ''}`);
    }
    if (res.status === 503) throw new Unavailable('The agent server is not ready');
    throw new BadGateway(`The agent server answered ${res.status} to ${method} ${path}`);
  }
}

function tooLarge(method: string, path: string): Invalid {
  return new Invalid([{ loc: ['body'], msg: `The agent server refused ${method} ${path}: the request body is larger than it takes (413)`, type: 'too_large' }]);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
