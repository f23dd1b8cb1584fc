// /api/mcp (OpenHands mcp_router.py): test a candidate MCP server configuration, and authorize an
// OAuth MCP server (start a job, poll it, hand in the callback URL from the browser).
import Router from '@koa/router';
import { BadRequest, Conflict, NotFound } from '../../api/errors.ts';
import { parseBody } from '../../api/agent-server/index.ts';
import { McpOAuthCallbackRequest, type McpOAuthStartResponse, type McpOAuthStatusResponse, type McpTestResponse } from '../../api/agent-server/mcp.ts';
import { OAuthJobs, type OAuthJob } from '../mcp/oauth-jobs.ts';
import { StoreOAuthProvider } from '../mcp/oauth-provider.ts';
import { isOAuth, parseMcpTestRequest, probeMcpServer } from '../mcp/probe.ts';
import { McpOAuthStore } from '../mcp/token-store.ts';

export interface McpRouteDeps {
  /** Where a stdio server without `cwd` starts. */
  cwd: string;
  store: McpOAuthStore;
  now?: () => number;
  /** Tests: how long an OAuth job waits for its callback. */
  callbackTimeoutMs?: number;
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

function jobOf(jobs: OAuthJobs, id: string): OAuthJob {
  const job = jobs.get(id);
  if (!job) throw new NotFound('MCP OAuth job not found');
  return job;
}

/**
 * The code in the URL the browser was redirected to. OpenHands fetches that URL (FastMCP's loopback
 * callback server reads it); nothing listens here, so it is read directly: the agent server makes
 * no request to a URL a client gave it. The same checks first: a loopback http URL with the
 * job's port and path (400), once the job has one (409).
 */
function callbackCode(job: OAuthJob, raw: string): { code: string } | { refused: number } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new BadRequest('Invalid OAuth callback URL');
  }
  if (url.protocol !== 'http:' || !LOOPBACK.has(url.hostname)) throw new BadRequest('Invalid OAuth callback URL');
  if (!job.callbackUrl) throw new Conflict('OAuth callback is not ready');
  const expected = new URL(job.callbackUrl);
  if (url.port !== expected.port || url.pathname !== expected.pathname) throw new BadRequest('Unexpected OAuth callback URL');
  const code = url.searchParams.get('code');
  // FastMCP's callback server answers 400 to an error redirect, a missing code or a foreign state.
  if (url.searchParams.has('error') || !code || url.searchParams.get('state') !== job.expectedState) return { refused: 400 };
  return { code };
}

export function mcpRoutes(d: McpRouteDeps): Router {
  const router = new Router();
  const jobs = new OAuthJobs({ store: d.store, cwd: d.cwd, ...(d.now ? { now: d.now } : {}), ...(d.callbackTimeoutMs !== undefined ? { callbackTimeoutMs: d.callbackTimeoutMs } : {}) });

  router.post('/mcp/test', async (ctx) => {
    const req = parseMcpTestRequest(ctx.request.body);
    let oauth: StoreOAuthProvider | undefined;
    if (req.server.type !== 'stdio' && req.server.auth?.strategy === 'oauth2') {
      // Stored tokens only (refreshed when expired): consent is what /mcp/oauth/start is for.
      const { authentication, state } = req.server.auth;
      oauth = new StoreOAuthProvider({ store: d.store, serverUrl: req.server.url, ...(authentication ? { authentication } : {}), ...(state ? { seed: state } : {}), ...(d.now ? { now: d.now } : {}) });
    }
    const result = await probeMcpServer(req, { cwd: d.cwd, ...(oauth ? { oauth } : {}) });
    const body: McpTestResponse = 'needsAuthorization' in result ? { ok: false, error: 'The MCP server must be authorized', error_kind: 'connection' } : result;
    ctx.body = body;
  });

  router.post('/mcp/oauth/start', async (ctx) => {
    const req = parseMcpTestRequest(ctx.request.body);
    if (!isOAuth(req)) throw new BadRequest("MCP OAuth start requires auth.strategy='oauth2'");
    const job = jobs.start(req);
    const waitMs = Math.min(Math.max(req.timeout ?? 15, 1), 30) * 1000;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([job.authorizationReady, new Promise<void>((r) => (timer = setTimeout(r, waitMs)))]).finally(() => clearTimeout(timer));
    let body: McpOAuthStartResponse;
    if (job.authorizationUrl) body = { ok: true, job_id: job.id, authorization_url: job.authorizationUrl };
    // No consent needed (stored tokens valid or refreshed): the outcome is read from the status route.
    else if (job.result?.ok) body = { ok: true, job_id: job.id };
    else if (job.result) body = { ok: false, job_id: job.id, error: job.result.error, error_kind: job.result.error_kind };
    else body = { ok: false, job_id: job.id, error: 'Timed out waiting for OAuth authorization URL', error_kind: 'timeout' };
    ctx.body = body;
  });

  router.get('/mcp/oauth/status/:job_id', async (ctx) => {
    const body: McpOAuthStatusResponse = jobOf(jobs, ctx.params['job_id']!).status_();
    ctx.body = body;
  });

  router.post('/mcp/oauth/callback/:job_id', async (ctx) => {
    const { callback_url } = parseBody(McpOAuthCallbackRequest, ctx.request.body);
    const job = jobOf(jobs, ctx.params['job_id']!);
    const got = callbackCode(job, callback_url);
    if ('refused' in got) {
      const body: McpOAuthStatusResponse = { ok: false, status: 'failed', job_id: job.id, ...(job.authorizationUrl ? { authorization_url: job.authorizationUrl } : {}), callback_ready: true, error: `OAuth callback returned HTTP ${got.refused}`, error_kind: 'connection' };
      ctx.body = body;
      return;
    }
    job.giveCode(got.code);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([job.done, new Promise<void>((r) => (timer = setTimeout(r, 5000)))]).finally(() => clearTimeout(timer));
    ctx.body = job.status_();
  });
  return router;
}
