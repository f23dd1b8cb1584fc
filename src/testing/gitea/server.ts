// A throwaway Gitea (code.gitea.io/gitea, whose REST API Forgejo forked and keeps compatible): the
// real git provider behind the tests of the app API's `forgejo` git routes. The binary
// hack/gitea.sh builds from Go modules into the cache (without the bindata tag: its source copy beside
// it serves as the static root for locales and templates), SQLite in a temp dir, a free loopback
// port, plain HTTP. One site admin user with a password (for basic auth) and an access token (what a
// user gives OpenHands as their forgejo token); seedGitea() adds the repositories the tests search.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { stopGroup } from '../../runtime/process/processes.ts';
import { freePort } from '../ports.ts';
import { requiredForTests } from '../required/required.ts';

const run = promisify(execFile);

/** The cached gitea binary (newest version), or undefined: the suite skips (fails when required). */
export function giteaBinary(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const root = join(env.AGENTYARD_CACHE ?? join(homedir(), '.cache', 'agentyard'), 'gitea');
  const found = existsSync(root)
    ? readdirSync(root)
        .map((v) => join(root, v, 'gitea'))
        .filter((p) => existsSync(p) && existsSync(join(p, '..', 'src', 'options')))
        .sort()
        .at(-1)
    : undefined;
  return requiredForTests(found, `Gitea (${root}/<version>/gitea)`, 'run hack/gitea.sh (make test does)', env);
}

export interface GiteaReply {
  status: number;
  body: any;
  headers: Headers;
}

export interface GiteaServer {
  /** Base URL, e.g. http://127.0.0.1:12345 (API under /api/v1, repositories at /<owner>/<name>.git). */
  url: string;
  /** Its work directory (configuration, SQLite database, repositories), removed by stop(). */
  root: string;
  /** The `gitea web` process. */
  pid: number;
  /** The site admin: login and password (basic auth), and an access token with every scope. */
  user: { login: string; password: string; email: string };
  token: string;
  /** A request to its REST API (path after /api/v1) with the admin's token, or as `auth` says. */
  api(method: string, path: string, body?: unknown, auth?: { token?: string; basic?: [string, string] } | false): Promise<GiteaReply>;
  /** A new access token of the admin user with the scopes given (Gitea's scope names). */
  newToken(name: string, scopes: string[]): Promise<string>;
  stop(): Promise<void>;
  log(): string;
}

const LOGIN = 'agentyard-dev';

function appIni(root: string, staticRoot: string, port: number): string {
  // INTERNAL_TOKEN and SECRET_KEY set here, so Gitea writes nothing back into its configuration.
  return `APP_NAME = agentyard test Gitea
RUN_MODE = prod
RUN_USER = ${userInfo().username}
WORK_PATH = ${root}
I_AM_BEING_UNSAFE_RUNNING_AS_ROOT = true

[database]
DB_TYPE = sqlite3
PATH = ${join(root, 'data', 'gitea.db')}
SQLITE_JOURNAL_MODE = WAL

[repository]
ROOT = ${join(root, 'repos')}
DEFAULT_BRANCH = main

[server]
PROTOCOL = http
HTTP_ADDR = 127.0.0.1
HTTP_PORT = ${port}
DOMAIN = 127.0.0.1
ROOT_URL = http://127.0.0.1:${port}/
DISABLE_SSH = true
START_SSH_SERVER = false
OFFLINE_MODE = true
LFS_START_SERVER = false
APP_DATA_PATH = ${join(root, 'data')}
STATIC_ROOT_PATH = ${staticRoot}

[security]
INSTALL_LOCK = true
SECRET_KEY = ${randomBytes(24).toString('hex')}
INTERNAL_TOKEN = ${randomBytes(48).toString('base64url')}
PASSWORD_HASH_ALGO = pbkdf2_hi

[oauth2]
ENABLED = false

[service]
DISABLE_REGISTRATION = true
REQUIRE_SIGNIN_VIEW = false

[mailer]
ENABLED = false

[cron]
ENABLED = false

[indexer]
ISSUE_INDEXER_TYPE = db
REPO_INDEXER_ENABLED = false

[log]
MODE = console
LEVEL = Warn
ROOT_PATH = ${join(root, 'log')}
`;
}

/**
 * A Gitea on a free port with its database migrated, the admin user and their token. Its port is
 * picked free (ports.ts), but another process may bind it first: it then starts again on a new one.
 */
export async function startGitea(bin: string): Promise<GiteaServer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(bin);
    } catch (err) {
      if (attempt >= 3 || !/address already in use/.test((err as Error).message)) throw err;
    }
  }
}

async function startOnce(bin: string): Promise<GiteaServer> {
  const root = mkdtempSync(join(tmpdir(), 'agentyard-gitea-'));
  for (const d of ['data', 'repos', 'log', 'custom/conf', 'home']) mkdirSync(join(root, d), { recursive: true });
  const port = await freePort();
  const config = join(root, 'custom', 'conf', 'app.ini');
  writeFileSync(config, appIni(root, join(bin, '..', 'src'), port));
  // Its git commands run with this HOME (Gitea writes a .gitconfig there), not the tester's.
  const env = { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: join(root, 'home'), GITEA_WORK_DIR: root, GITEA_CUSTOM: join(root, 'custom'), USER: userInfo().username };
  const cli = (...args: string[]) => run(bin, [...args, '--config', config, '--work-path', root], { env, cwd: root, maxBuffer: 1 << 20 });
  const user = { login: LOGIN, password: `pw-${randomBytes(12).toString('hex')}`, email: `${LOGIN}@example.invalid` };
  let child: ChildProcess | undefined;
  let output = '';
  const stop = async () => {
    if (child?.pid && child.exitCode === null && child.signalCode === null) await stopGroup(child.pid, 5_000);
    rmSync(root, { recursive: true, force: true });
  };
  try {
    await cli('migrate');
    await cli('admin', 'user', 'create', '--username', user.login, '--password', user.password, '--email', user.email, '--admin', '--must-change-password=false');
    // Its log (the warning about running as root, here) goes to stdout too: the token is the line of 40 hex digits.
    const printed = (await cli('admin', 'user', 'generate-access-token', '--username', user.login, '--token-name', 'agentyard-tests', '--scopes', 'all', '--raw')).stdout;
    const token = printed.split('\n').map((l) => l.trim()).find((l) => /^[0-9a-f]{40}$/.test(l));
    if (!token) throw new Error('gitea admin user generate-access-token printed no token');

    child = spawn(bin, ['web', '--config', config, '--work-path', root, '--port', String(port)], { env, cwd: root, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const keep = (d: Buffer) => {
      output = (output + d.toString()).slice(-20_000);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    const url = `http://127.0.0.1:${port}`;
    const api: GiteaServer['api'] = async (method, path, body, auth = { token }) => {
      const headers: Record<string, string> = { accept: 'application/json' };
      if (auth && auth.basic) headers['authorization'] = `Basic ${Buffer.from(auth.basic.join(':')).toString('base64')}`;
      else if (auth && auth.token) headers['authorization'] = `token ${auth.token}`;
      if (body !== undefined) headers['content-type'] = 'application/json';
      const res = await fetch(`${url}/api/v1${path}`, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        // not JSON: keep the text
      }
      return { status: res.status, body: parsed, headers: res.headers };
    };
    const until = Date.now() + 60_000;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`gitea web exited (${child.exitCode ?? child.signalCode}) while starting:\n${output.slice(-4000)}`);
      const up = await api('GET', '/version', undefined, false).catch(() => undefined);
      if (up?.status === 200) break;
      if (Date.now() > until) throw new Error(`gitea web was not up within 60 s:\n${output.slice(-4000)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    return {
      url,
      root,
      pid: child.pid!,
      user,
      token,
      api,
      async newToken(name, scopes) {
        const r = await api('POST', `/users/${user.login}/tokens`, { name, scopes }, { basic: [user.login, user.password] });
        if (r.status !== 201) throw new Error(`gitea: creating token ${name} answered ${r.status} ${JSON.stringify(r.body)}`);
        return r.body.sha1 as string;
      },
      stop,
      log: () => output,
    };
  } catch (err) {
    await stop();
    const e = err as Error & { stderr?: string };
    throw new Error(`${e.message}${e.stderr ? `\n${e.stderr.slice(-4000)}` : ''}`);
  }
}

/** What seedGitea() made: repository full names, and each one's branches (default first). */
export interface GiteaSeed {
  org: string;
  repos: { fullName: string; private: boolean; branches: string[] }[];
}

/**
 * The owner and repositories the git-route tests search: the admin's own public and private
 * repositories and an organization (what Forgejo has instead of a GitHub App installation) with
 * one repository of many branches (enough for several pages at small limits).
 */
export async function seedGitea(g: GiteaServer): Promise<GiteaSeed> {
  const ok = (r: GiteaReply, what: string) => {
    if (r.status >= 300) throw new Error(`gitea: ${what} answered ${r.status} ${JSON.stringify(r.body)}`);
    return r;
  };
  const org = 'acme';
  ok(await g.api('POST', '/orgs', { username: org, visibility: 'public' }), `creating org ${org}`);
  const plan: { owner: string; name: string; private: boolean; branches: string[] }[] = [
    { owner: g.user.login, name: 'alpha', private: false, branches: ['feature/login', 'fix/typo'] },
    { owner: g.user.login, name: 'secret-plans', private: true, branches: [] },
    { owner: org, name: 'widgets', private: false, branches: ['release/1.0', 'release/1.1', 'feature/a', 'feature/b', 'feature/c', 'hotfix'] },
    { owner: org, name: 'gadgets', private: true, branches: ['develop'] },
  ];
  const repos: GiteaSeed['repos'] = [];
  for (const p of plan) {
    const path = p.owner === g.user.login ? '/user/repos' : `/orgs/${p.owner}/repos`;
    ok(await g.api('POST', path, { name: p.name, private: p.private, auto_init: true, default_branch: 'main', readme: 'Default', description: `${p.name} test repository` }), `creating ${p.owner}/${p.name}`);
    for (const b of p.branches) ok(await g.api('POST', `/repos/${p.owner}/${p.name}/branches`, { new_branch_name: b, old_branch_name: 'main' }), `creating branch ${b} of ${p.owner}/${p.name}`);
    repos.push({ fullName: `${p.owner}/${p.name}`, private: p.private, branches: ['main', ...p.branches] });
  }
  return { org, repos };
}
