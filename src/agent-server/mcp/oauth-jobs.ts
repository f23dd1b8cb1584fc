// Install-time OAuth for an MCP server (OpenHands mcp_router.py /mcp/oauth/*): a job probes the
// server with an interactive OAuth provider; when the server wants consent the job holds the
// authorization URL for the client's browser and waits for the callback URL the browser was sent
// to; it then exchanges the code (PKCE), stores the tokens (token-store.ts), and probes again with
// them. Jobs live in memory for 15 minutes, as OpenHands keeps them.
import { randomUUID } from 'node:crypto';
import type { McpOAuthStatusResponse, McpTestRequest, McpTestResponse } from '../../api/agent-server/mcp.ts';
import { createLogger, type Logger } from '../../util/log.ts';
import { StoreOAuthProvider } from './oauth-provider.ts';
import { probeMcpServer } from './probe.ts';
import type { McpOAuthStore } from './token-store.ts';

const JOB_TTL_MS = 15 * 60_000;
/** How long a job waits for the callback (FastMCP's callback server waits 300 s). */
const CALLBACK_TIMEOUT_MS = 300_000;

export interface OAuthJobDeps {
  store: McpOAuthStore;
  cwd: string;
  now?: () => number;
  log?: Logger;
  callbackTimeoutMs?: number;
}

export class OAuthJob {
  readonly id = randomUUID().replaceAll('-', '');
  readonly createdAt: number;
  status: 'pending' | 'authorizing' | 'succeeded' | 'failed' = 'pending';
  authorizationUrl: string | undefined;
  callbackUrl: string | undefined;
  expectedState: string | undefined;
  result: McpTestResponse | undefined;
  /** Resolves once the authorization URL is known or the job ended without needing one. */
  readonly authorizationReady: Promise<void>;
  readonly done: Promise<void>;
  #ready!: () => void;
  #done!: () => void;
  #code!: (code: string) => void;
  readonly #codeGiven: Promise<string>;

  constructor(now: number) {
    this.createdAt = now;
    this.authorizationReady = new Promise((r) => (this.#ready = r));
    this.done = new Promise((r) => (this.#done = r));
    this.#codeGiven = new Promise((r) => (this.#code = r));
  }

  setAuthorizing(url: string, callbackUrl: string, state: string): void {
    this.authorizationUrl = url;
    this.callbackUrl = callbackUrl;
    this.expectedState = state;
    this.status = 'authorizing';
    this.#ready();
  }

  setResult(result: McpTestResponse): void {
    this.result = result;
    this.status = result.ok ? 'succeeded' : 'failed';
    this.#done();
    this.#ready();
  }

  giveCode(code: string): void {
    this.#code(code);
  }

  waitForCode(timeoutMs: number): Promise<string | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), timeoutMs)));
    return Promise.race([this.#codeGiven, late]).finally(() => clearTimeout(timer));
  }

  status_(): McpOAuthStatusResponse {
    const base = { job_id: this.id, ...(this.authorizationUrl ? { authorization_url: this.authorizationUrl } : {}), callback_ready: this.callbackUrl !== undefined };
    const r = this.result;
    if (r?.ok) return { ok: true, status: 'succeeded', ...base, tools: r.tools, ...(r.tool_result ? { tool_result: r.tool_result } : {}), ...(r.oauth_state ? { oauth_state: r.oauth_state } : {}) };
    if (r && !r.ok) return { ok: false, status: 'failed', ...base, error: r.error, error_kind: r.error_kind };
    return { ok: true, status: this.status, ...base };
  }
}

export class OAuthJobs {
  readonly #jobs = new Map<string, OAuthJob>();
  readonly #d: OAuthJobDeps;
  readonly #log: Logger;

  constructor(d: OAuthJobDeps) {
    this.#d = d;
    this.#log = d.log ?? createLogger('mcp');
  }

  #now(): number {
    return (this.#d.now ?? Date.now)();
  }

  #sweep(): void {
    for (const [id, job] of this.#jobs) if (this.#now() - job.createdAt > JOB_TTL_MS) this.#jobs.delete(id);
  }

  get(id: string): OAuthJob | undefined {
    this.#sweep();
    return this.#jobs.get(id);
  }

  start(req: McpTestRequest): OAuthJob {
    this.#sweep();
    const job = new OAuthJob(this.#now());
    this.#jobs.set(job.id, job);
    void this.#run(job, req).catch((err: unknown) => {
      job.setResult({ ok: false, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err), error_kind: 'unknown' });
    });
    return job;
  }

  async #run(job: OAuthJob, req: McpTestRequest): Promise<void> {
    if (req.server.type === 'stdio' || req.server.auth?.strategy !== 'oauth2') throw new Error('not an OAuth MCP server');
    const { url } = req.server;
    const { authentication, state } = req.server.auth;
    const provider: StoreOAuthProvider = new StoreOAuthProvider({
      store: this.#d.store,
      serverUrl: url,
      ...(authentication ? { authentication } : {}),
      ...(state ? { seed: state } : {}),
      onAuthorizationUrl: (u) => job.setAuthorizing(u.href, provider.redirectUrl, provider.expectedState),
      ...(this.#d.now ? { now: this.#d.now } : {}),
    });
    const first = await probeMcpServer(req, { cwd: this.#d.cwd, oauth: provider });
    if (!('needsAuthorization' in first)) return job.setResult(first);
    this.#log.info({ job: job.id }, 'MCP OAuth authorization URL captured; waiting for the callback');
    const code = await job.waitForCode(this.#d.callbackTimeoutMs ?? CALLBACK_TIMEOUT_MS);
    if (code === undefined) return job.setResult({ ok: false, error: 'Timed out waiting for the OAuth callback', error_kind: 'timeout' });
    try {
      // Loaded here, not at start-up: the MCP SDK stays out of an agent server that never uses it.
      const { auth } = await import('@modelcontextprotocol/sdk/client/auth.js');
      await auth(provider, { serverUrl: url, authorizationCode: code });
    } catch (err) {
      return job.setResult({ ok: false, error: `The authorization code could not be exchanged for tokens: ${err instanceof Error ? err.message : String(err)}`, error_kind: 'connection' });
    }
    // Again with the tokens just stored, and no consent to ask for any more.
    const again = new StoreOAuthProvider({ store: this.#d.store, serverUrl: url, ...(authentication ? { authentication } : {}), ...(this.#d.now ? { now: this.#d.now } : {}) });
    const second = await probeMcpServer(req, { cwd: this.#d.cwd, oauth: again });
    job.setResult('needsAuthorization' in second ? { ok: false, error: 'The MCP server asked for authorization again after the tokens were issued', error_kind: 'connection' } : second);
  }
}
