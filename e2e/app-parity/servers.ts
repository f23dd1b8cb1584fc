// The two application servers of the side-by-side suite, each with its own scripted model (the same
// script is pushed to both): the real OpenHands app server (Python, openhands-ai installed and patched
// by hack/openhands-app-server.sh into a cached virtualenv; OSS mode, process sandboxes) and
// `agentyard up`, both on loopback. Each is spoken to as its own clients do: the OpenHands OSS app
// with X-Session-API-Key, ours with Authorization: Bearer (spec part 5; a listed difference).
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { stopGroup } from '../../src/runtime/process/processes.ts';
import { startScriptedLlm, type ScriptedLlm, type ScriptedReply } from '../../src/testing/scripted-llm/server.ts';
import { requiredForTests } from '../../src/testing/required/required.ts';
import { removeDataDir, scriptedModelEnv, startService } from '../embedded/harness.ts';
import { freePort } from '../../src/testing/ports.ts';
import { giteaBinary, seedGitea, startGitea, type GiteaServer } from '../../src/testing/gitea/server.ts';
import { startGitLabStandIn, type GitLabProject, type GitLabStandIn } from '../../src/testing/gitlab/server.ts';
import { startGitHubStandIn, type GitHubStandIn } from '../../src/testing/github/server.ts';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

export const OPENHANDS_AI_VERSION = '1.11.0';

/**
 * The Gitea both servers search as their forgejo host, seeded (src/testing/gitea), or undefined when
 * it is not built (the git flow then compares nothing and says so; a failure when required).
 * OpenHands takes the host from the token (ProviderToken.host) and keeps an http:// scheme, so plain
 * HTTP on loopback serves both: no TLS is needed. agentyard takes it from AGENTYARD_GIT_HOSTS.
 */
export async function startParityGitea(): Promise<{ gitea: GiteaServer; env: Record<string, string> } | undefined> {
  const bin = giteaBinary();
  if (!bin) {
    console.warn('app-parity: the git_search flow compares nothing: no Gitea binary (run hack/gitea.sh; make test does)');
    return undefined;
  }
  const gitea = await startGitea(bin);
  try {
    await seedGitea(gitea);
  } catch (err) {
    await gitea.stop();
    throw err;
  }
  return { gitea, env: { AGENTYARD_GIT_HOSTS: JSON.stringify({ forgejo: gitea.url }) } };
}
/**
 * The GitHub stand-in (src/testing/github) both servers search as their github host, over HTTPS:
 * OpenHands 1.11 builds https://<host>/api/v3 from the host a token is saved with, so a self-signed
 * certificate for 127.0.0.1 (openssl) is given to it through SSL_CERT_FILE (Python's default SSL
 * context) and to agentyard through NODE_EXTRA_CA_CERTS. Seeded with what the github_search flow
 * reads: a user with a GitHub App token, organizations, repositories, branches, pull requests, issues.
 * Undefined without openssl (the flow then compares nothing and says so).
 */
export async function startParityGitHub(): Promise<{ gh: GitHubStandIn; host: string; token: string; openhandsEnv: Record<string, string>; agentyardEnv: Record<string, string>; close(): Promise<void> } | undefined> {
  const dir = mkdtempSync(join(tmpdir(), 'app-parity-github-'));
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    console.warn(`app-parity: the github_search flow compares nothing: no certificate for the GitHub stand-in (openssl: ${(err as Error).message})`);
    return undefined;
  }
  const gh = await startGitHubStandIn({ tls: { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') } });
  const token = 'ghu_app_parity_token_0001';
  gh.users.push({ login: 'octo', id: 101, token, tokenKind: 'app', orgs: ['acme'], installations: [{ id: 11, account: 'octo', accountType: 'User', repositories: ['octo/alpha'] }, { id: 12, account: 'acme', accountType: 'Organization', repositories: ['acme/widgets'] }] });
  const at = (d: number) => `2026-02-${String(d).padStart(2, '0')}T10:00:00Z`;
  gh.repos.push(
    { owner: 'octo', name: 'alpha', private: true, stars: 5, pushedAt: at(20) },
    { owner: 'octo', name: 'widget-notes', stars: 1, pushedAt: at(11) },
    { owner: 'acme', ownerType: 'Organization', name: 'widgets', stars: 50, pushedAt: at(15), defaultBranch: 'trunk', branches: ['trunk', 'feature/a', 'feature/b', 'fix/1'].map((name, i) => ({ name, sha: String(i).repeat(40), protected: name === 'trunk', committedDate: at(i + 1) })) },
    { owner: 'acme', ownerType: 'Organization', name: 'gadgets', stars: 7, pushedAt: at(9) },
  );
  gh.pulls.push(
    { repo: 'acme/widgets', number: 1, title: 'Conflicting', author: 'octo', mergeable: 'CONFLICTING', updatedAt: at(20) },
    { repo: 'octo/alpha', number: 2, title: 'Red checks', author: 'octo', checks: 'FAILURE', updatedAt: at(19) },
    { repo: 'octo/alpha', number: 3, title: 'All green', author: 'octo', checks: 'SUCCESS', updatedAt: at(18) },
  );
  gh.issues.push({ repo: 'acme/gadgets', number: 4, title: 'Assigned', assignees: ['octo'], updatedAt: at(10) });
  return {
    gh,
    host: new URL(gh.url).host,
    token,
    openhandsEnv: { SSL_CERT_FILE: join(dir, 'cert.pem') },
    agentyardEnv: { NODE_EXTRA_CA_CERTS: join(dir, 'cert.pem') },
    async close() {
      await gh.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A stand-in GitLab (src/testing/gitlab: gitlab.com cannot be reached here, and no GitLab runs
 * here) both servers search as their gitlab host: OpenHands takes it from the token's host and keeps
 * its http:// scheme (GitLabService builds <host>/api/v4), agentyard from AGENTYARD_GIT_HOSTS.
 */
export async function startParityGitLab(): Promise<{ gitlab: GitLabStandIn; token: string }> {
  const token = 'glpat-parity-0123456789';
  const project = (id: number, path: string, o: Partial<GitLabProject> = {}): GitLabProject => ({
    id,
    path,
    group: !path.startsWith('pat/'),
    visibility: 'private',
    stars: (id * 7) % 5,
    lastActivity: `2026-01-${String(20 - id).padStart(2, '0')}T10:00:00Z`,
    createdAt: '2025-06-01T10:00:00Z',
    defaultBranch: 'main',
    members: ['pat'],
    branches: ['main', 'dev', 'feature/a', 'feature/b', 'release'].map((name, i) => ({ name, sha: `${id}${i}`.padEnd(40, '0'), protected: name === 'main', committedDate: `2026-02-0${i + 1}T00:00:00Z` })),
    ...o,
  });
  const gitlab = await startGitLabStandIn({
    users: [{ id: 7, username: 'pat', name: 'Pat' }],
    projects: [project(1, 'acme/platform/api'), project(2, 'acme/widgets', { visibility: 'public' }), project(3, 'pat/notes'), project(4, 'acme/gadgets'), project(5, 'pat/dotfiles')],
    issues: [1, 2, 3].map((i) => ({ project: 'acme/widgets', iid: i, title: `Issue ${i}`, assignees: ['pat'], state: 'opened' as const })),
    mergeRequests: [
      { project: 'acme/platform/api', iid: 9, title: 'Conflicts', author: 'pat', state: 'opened', updatedAt: '2026-03-02T00:00:00Z', conflicts: true, discussions: [] },
      { project: 'acme/widgets', iid: 8, title: 'Red', author: 'pat', state: 'opened', updatedAt: '2026-03-01T00:00:00Z', conflicts: false, pipeline: 'FAILED', discussions: [] },
    ],
    tokens: { [token]: { user: 'pat', scopes: ['api'] } },
  });
  return { gitlab, token };
}

export const MODEL = 'openai/scripted';
const KEY = 'app-parity-session-key';

/** The patched virtualenv's python, or undefined (the suite skips unless the cluster suites are required). */
export function appServerPython(): string | undefined {
  const cache = process.env['AGENTYARD_CACHE'] ?? join(homedir(), '.cache/agentyard');
  const venv = join(cache, 'venv', `openhands-ai-${OPENHANDS_AI_VERSION}`);
  const ready = existsSync(join(venv, '.agentyard-patched')) ? join(venv, 'bin', 'python') : undefined;
  return requiredForTests(ready, `the OpenHands app server ${OPENHANDS_AI_VERSION} (${venv})`, 'run hack/openhands-app-server.sh (make test does)');
}

export interface Reply {
  status: number;
  body: any;
  /** The body's text as sent (streamed answers are compared on it). */
  text: string;
}

export interface AppSide {
  name: 'openhands' | 'agentyard';
  url: string;
  llm: ScriptedLlm;
  /** Answers for the agent's model calls (those offering tools), in order. */
  script(...steps: ScriptedReply[]): void;
  /** Agent answers not used yet. */
  scriptLeft(): number;
  /** Model calls without tools: OpenHands asks its model for a title at the first message. */
  titleCalls(): number;
  /** The credentials that server's clients send. */
  authHeaders: Record<string, string>;
  /** The key in them (to send it the other server's way). */
  key: string;
  /** A request as that server's clients send it; `auth: false` sends no credentials. */
  api(method: string, path: string, body?: unknown, opts?: { auth?: boolean; rawBody?: string }): Promise<Reply>;
  close(): Promise<void>;
}

/**
 * A scripted model whose agent calls take the pushed answers in order, while a call without tools
 * (a title request, which OpenHands makes beside the agent's first call, in either order) is answered
 * with a title and takes none: so the same script serves both sides.
 */
async function dispatchingLlm(): Promise<Pick<AppSide, 'llm' | 'script' | 'scriptLeft' | 'titleCalls'>> {
  const agent: ScriptedReply[] = [];
  let titles = 0;
  const llm = await startScriptedLlm();
  const dispatch = () => (req: { tools?: unknown[] }): ScriptedReply => {
    llm.push(dispatch()); // never runs dry: the agent queue is what a flow counts
    if (!req.tools?.length) {
      titles++;
      return { content: 'A title' };
    }
    return agent.shift() ?? { status: 500, errorMessage: 'The scripted model has no more responses' };
  };
  llm.push(dispatch());
  return { llm, script: (...steps) => void agent.push(...steps), scriptLeft: () => agent.length, titleCalls: () => titles };
}


/**
 * Requests as a client sends them. A 429 is waited out (its Retry-After) and tried again, as a client
 * does: the OSS OpenHands app limits each address to 10 requests a second, its agent servers' webhook
 * calls included, so a flow's quick reads can meet it; what it limits is not what is compared.
 */
function apiOf(url: string, auth: Record<string, string>): AppSide['api'] {
  return async (method, path, body, opts = {}) => {
    const raw = body !== undefined ? JSON.stringify(body) : opts.rawBody;
    let res: Response;
    for (let tries = 0; ; tries++) {
      res = await fetch(url + path, {
        method,
        headers: { ...(opts.auth === false ? {} : auth), ...(raw !== undefined ? { 'content-type': 'application/json' } : {}) },
        body: raw,
      });
      if (res.status !== 429 || tries >= 10) break;
      await res.arrayBuffer();
      await new Promise((r) => setTimeout(r, 1000 * Number(res.headers.get('retry-after') ?? 1)));
    }
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, body: parsed, text };
  };
}

/**
 * The real OpenHands app server, in a throwaway directory (its database, file store, and the
 * sandboxes' working directories under TMPDIR). Starting takes 30-60 s: its imports are heavy.
 * Its agent servers get the webhook base URL through OH_AGENT_SERVER_ENV, else their events never
 * reach its app-side store; the model is set through its settings API, as its users do.
 */
export async function startOpenHandsApp(python: string, extraEnv: Record<string, string> = {}): Promise<AppSide> {
  const dir = mkdtempSync(join(tmpdir(), 'app-parity-openhands-'));
  mkdirSync(join(dir, 'tmp'));
  const model = await dispatchingLlm();
  const llm = model.llm;
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let out = '';
  const child = spawn(python, ['-m', 'uvicorn', 'openhands.app_server.app:app', '--host', '127.0.0.1', '--port', String(port)], {
    cwd: dir,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      HOME: dir,
      TMPDIR: join(dir, 'tmp'),
      RUNTIME: 'process',
      SESSION_API_KEY: KEY,
      OH_PERSISTENCE_DIR: join(dir, 'data'),
      OH_AGENT_SERVER_ENV: JSON.stringify({ OH_WEBHOOKS_0_BASE_URL: `${url}/api/v1/webhooks`, OH_ENABLE_BROWSER: 'false', OH_PRELOAD_TOOLS: 'false' }),
      // No telemetry and no model-catalogue fetches from a test.
      OH_TELEMETRY__EXPORTER: 'none',
      LITELLM_LOCAL_MODEL_COST_MAP: 'True',
      PYTHONUNBUFFERED: '1',
      ...extraEnv,
    },
  });
  // APP_PARITY_OPENHANDS_LOG=<file>: its whole output there too (while working on the suite).
  const logFile = process.env['APP_PARITY_OPENHANDS_LOG'];
  const keep = (d: Buffer) => {
    out = (out + d.toString()).slice(-20_000);
    if (logFile) appendFileSync(logFile, d);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const authHeaders = { 'x-session-api-key': KEY };
  const api = apiOf(url, authHeaders);
  const close = async () => {
    // The group: its process sandboxes (agent servers) are its children.
    if (child.exitCode === null && child.pid) await stopGroup(child.pid, 10_000);
    await llm.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const until = Date.now() + 240_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the OpenHands app server exited (${child.exitCode}) while starting:\n${out.slice(-4000)}`);
      if ((await api('GET', '/alive', undefined, { auth: false }).catch(() => ({ status: 0 }))).status === 200) break;
      if (Date.now() > until) throw new Error(`the OpenHands app server was not up within 240 s:\n${out.slice(-4000)}`);
      await new Promise((r) => setTimeout(r, 500));
    }
    const set = await api('POST', '/api/v1/settings', { agent_settings_diff: { llm: { model: MODEL, base_url: llm.url, api_key: 'sk-app-parity' } } });
    if (set.status !== 200) throw new Error(`the OpenHands app server refused its settings: ${set.status} ${set.text}`);
  } catch (err) {
    await close();
    throw err;
  }
  return { name: 'openhands', url, ...model, authHeaders, key: KEY, api, close };
}

/** `agentyard up` as a child process, its model the scripted one; `env` adds to its environment. */
export async function startAgentyardUp(env: Record<string, string> = {}): Promise<AppSide> {
  const model = await dispatchingLlm();
  const llm = model.llm;
  const svc = await startService({ env: { ...scriptedModelEnv(llm), ...env } }).catch(async (err: unknown) => {
    await llm.close();
    throw err;
  });
  return {
    name: 'agentyard',
    url: svc.url,
    ...model,
    authHeaders: { authorization: `Bearer ${svc.apiKey}` },
    key: svc.apiKey,
    api: apiOf(svc.url, { authorization: `Bearer ${svc.apiKey}` }),
    async close() {
      await svc.stop();
      await llm.close();
      removeDataDir(svc.dataDir);
    },
  };
}
