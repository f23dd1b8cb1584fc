// A local Git smart-HTTP server for tests: real bare repositories served by `git http-backend`
// (CGI over node:http) on 127.0.0.1, with token checking (HTTP basic with the token as password,
// or a bearer token). It stands in for a Git host (GitHub and the like) in repository-cloning tests.
import { execFileSync, spawn } from 'node:child_process';
import { timingSafeEqual } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export interface GitRepoFiles {
  /** Branch name → files (path → content) committed on that branch; the first branch is the default. */
  [branch: string]: Record<string, string>;
}

export interface GitHttpServer {
  /** Base URL, e.g. http://127.0.0.1:12345 (repositories at `<url>/<owner>/<name>.git`). */
  url: string;
  root: string;
  /** Requests seen, with the Authorization header reduced to its scheme (never the token). */
  requests: { method: string; path: string; auth: string | undefined; status: number }[];
  /** Creates `<owner>/<name>.git` with the branches and files given; private repos need `token`. */
  createRepo(fullName: string, branches: GitRepoFiles, opts?: { token?: string }): void;
  close(): Promise<void>;
}

const GIT_ENV = { GIT_AUTHOR_NAME: 'Test', GIT_AUTHOR_EMAIL: 'test@example.invalid', GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 'test@example.invalid' };

function git(args: string[], cwd: string): string {
  return execFileSync('git', args, { cwd, env: { ...process.env, ...GIT_ENV, GIT_CONFIG_NOSYSTEM: '1', HOME: cwd }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** The token a request carries: the password of basic auth, or a bearer token. */
function tokenOf(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const [scheme, value] = header.split(' ', 2);
  if (!value) return undefined;
  if (scheme?.toLowerCase() === 'bearer') return value;
  if (scheme?.toLowerCase() !== 'basic') return undefined;
  const decoded = Buffer.from(value, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? undefined : decoded.slice(colon + 1);
}

function sameToken(a: string | undefined, b: string): boolean {
  if (a === undefined) return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export async function startGitHttpServer(): Promise<GitHttpServer> {
  const root = mkdtempSync(join(tmpdir(), 'git-http-'));
  const tokens = new Map<string, string>(); // repo path (owner/name.git) → token
  const requests: GitHttpServer['requests'] = [];

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const match = /^\/([^/]+\/[^/]+\.git)(\/.*)?$/.exec(url.pathname);
    const auth = req.headers.authorization;
    const record = (status: number) => requests.push({ method: req.method ?? 'GET', path: url.pathname, auth: auth?.split(' ')[0], status });
    const repo = match?.[1];
    if (!repo) {
      record(404);
      res.writeHead(404).end('Repository not found\n');
      return;
    }
    const token = tokens.get(repo);
    if (token !== undefined && !sameToken(tokenOf(auth), token)) {
      record(401);
      res.writeHead(401, { 'www-authenticate': 'Basic realm="git"' }).end('Authentication required\n');
      return;
    }
    const cgi = spawn('git', ['http-backend'], {
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: '1',
        GIT_CONFIG_NOSYSTEM: '1',
        HOME: root,
        PATH_INFO: url.pathname,
        QUERY_STRING: url.search.slice(1),
        REQUEST_METHOD: req.method ?? 'GET',
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        ...(req.headers['content-length'] ? { CONTENT_LENGTH: req.headers['content-length'] } : {}),
        ...(req.headers['content-encoding'] ? { HTTP_CONTENT_ENCODING: req.headers['content-encoding'] } : {}),
        ...(req.headers['git-protocol'] ? { GIT_PROTOCOL: String(req.headers['git-protocol']) } : {}),
        REMOTE_ADDR: '127.0.0.1',
        REMOTE_USER: 'git',
      },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    req.pipe(cgi.stdin);
    cgi.stdin.on('error', () => undefined);
    let head = Buffer.alloc(0);
    let sentHead = false;
    cgi.stdout.on('data', (chunk: Buffer) => {
      if (sentHead) {
        res.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      const endLf = head.indexOf('\n\n');
      const cut = end >= 0 ? { at: end, len: 4 } : endLf >= 0 ? { at: endLf, len: 2 } : undefined;
      if (!cut) return;
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of head.subarray(0, cut.at).toString('latin1').split(/\r?\n/)) {
        const i = line.indexOf(':');
        if (i < 0) continue;
        const name = line.slice(0, i).trim();
        const value = line.slice(i + 1).trim();
        if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10) || 200;
        else headers[name] = value;
      }
      sentHead = true;
      record(status);
      res.writeHead(status, headers);
      res.write(head.subarray(cut.at + cut.len));
    });
    cgi.on('close', () => {
      if (!sentHead) {
        record(500);
        res.writeHead(500);
      }
      res.end();
    });
  };

  const server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}`,
    root,
    requests,
    createRepo(fullName, branches, opts = {}) {
      const repo = `${fullName}.git`;
      const bare = join(root, repo);
      mkdirSync(dirname(bare), { recursive: true });
      const work = mkdtempSync(join(tmpdir(), 'git-http-work-'));
      try {
        const names = Object.keys(branches);
        git(['init', '-q', '-b', names[0] ?? 'main', '.'], work);
        for (const [i, branch] of names.entries()) {
          if (i > 0) git(['checkout', '-q', '-b', branch, names[0]!], work);
          for (const [path, content] of Object.entries(branches[branch]!)) {
            mkdirSync(dirname(join(work, path)), { recursive: true });
            writeFileSync(join(work, path), content);
          }
          git(['add', '-A'], work);
          git(['commit', '-q', '--allow-empty', '-m', `${branch} files`], work);
        }
        git(['clone', '-q', '--bare', work, bare], root);
        git(['symbolic-ref', 'HEAD', `refs/heads/${names[0] ?? 'main'}`], bare);
      } finally {
        rmSync(work, { recursive: true, force: true });
      }
      if (opts.token !== undefined) tokens.set(repo, opts.token);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(root, { recursive: true, force: true });
    },
  };
}
