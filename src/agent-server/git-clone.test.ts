// POST /api/agentyard/git/clone over real HTTP against a real Git smart-HTTP server: the clone
// lands in the workspace on the right branch, the token never reaches .git/config or the answer,
// and refused tokens, unknown repositories and unknown branches come back as distinct statuses.
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGitHttpServer, type GitHttpServer } from '../testing/git-http/server.ts';
import { startTestServer, tempDir, type TestServer } from './test-support.ts';

const TOKEN = 'ghp_secretTokenValue123';
const basic = (token: string) => `Basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`;

let dir: ReturnType<typeof tempDir>;
let s: TestServer;
let git: GitHttpServer;

beforeAll(async () => {
  dir = tempDir();
  s = await startTestServer(dir.path);
  git = await startGitHttpServer();
  git.createRepo('acme/private', { main: { 'README.md': '# main\n' }, 'feature/x': { 'src/feature.ts': 'export {};\n' } }, { token: TOKEN });
});
afterAll(async () => {
  await s?.close();
  await git?.close();
  dir?.remove();
});

const clone = (body: Record<string, unknown>) => s.api('/api/agentyard/git/clone', { method: 'POST', body });
const ws = () => join(dir.path, 'workspace');

describe('POST /api/agentyard/git/clone', () => {
  it('clones a private repository on the selected branch, with the author set and no credential stored', async () => {
    const res = await clone({ url: `${git.url}/acme/private.git`, directory: 'private', branch: 'feature/x', authorization: basic(TOKEN), author_name: 'Ada Lovelace', author_email: 'ada@example.com' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'CLONED', branch: 'feature/x', detail: null, path: join(ws(), 'private') });
    expect(readFileSync(join(ws(), 'private', 'src', 'feature.ts'), 'utf8')).toBe('export {};\n');
    const config = readFileSync(join(ws(), 'private', '.git', 'config'), 'utf8');
    expect(config).toContain(`url = ${git.url}/acme/private.git`);
    expect(config).toContain('name = Ada Lovelace');
    expect(config).toContain('email = ada@example.com');
    expect(config).not.toContain(TOKEN);
    expect(config.toLowerCase()).not.toContain('extraheader');
    const grep = (() => {
      try {
        return execFileSync('grep', ['-r', '-l', TOKEN, ws()], { encoding: 'utf8' });
      } catch {
        return '';
      }
    })();
    expect(grep).toBe('');
    expect(readdirSync(ws()).filter((n) => n.startsWith('.agentyard-clone-'))).toEqual([]);
    expect(JSON.stringify(res.body)).not.toContain(TOKEN);
  });

  it('a repeated request for the same clone answers EXISTS; another branch of it is refused, not switched', async () => {
    const res = await clone({ url: `${git.url}/acme/private.git`, directory: 'private', authorization: basic(TOKEN) });
    expect(res.body).toMatchObject({ status: 'EXISTS', branch: 'feature/x' });
    const other = await clone({ url: `${git.url}/acme/private.git`, directory: 'private', branch: 'main', authorization: basic(TOKEN) });
    expect(other.body).toMatchObject({ status: 'DIRECTORY_TAKEN', branch: 'feature/x', detail: 'private is already cloned in this sandbox on branch feature/x, not main' });
  });

  it('two concurrent clones into one directory both succeed, one of them as EXISTS', async () => {
    const body = { url: `${git.url}/acme/private.git`, directory: 'twice', authorization: basic(TOKEN) };
    const results = await Promise.all([clone(body), clone(body)]);
    expect(results.map((r) => r.body.status).sort()).toEqual(['CLONED', 'EXISTS']);
    expect(readdirSync(ws()).filter((n) => n.startsWith('.agentyard-clone-'))).toEqual([]);
  });

  it('a wrong or missing token, an unknown repository and an unknown branch are told apart', async () => {
    expect((await clone({ url: `${git.url}/acme/private.git`, directory: 'a', authorization: basic('wrong') })).body).toMatchObject({ status: 'AUTH_FAILED', detail: 'The Git host refused the token' });
    expect((await clone({ url: `${git.url}/acme/private.git`, directory: 'b' })).body).toMatchObject({ status: 'AUTH_FAILED' });
    expect((await clone({ url: `${git.url}/acme/missing.git`, directory: 'c', authorization: basic(TOKEN) })).body).toMatchObject({ status: 'REPOSITORY_NOT_FOUND' });
    expect((await clone({ url: `${git.url}/acme/private.git`, directory: 'd', branch: 'nope', authorization: `Bearer ${TOKEN}` })).body).toMatchObject({ status: 'BRANCH_NOT_FOUND', detail: 'The repository has no branch nope' });
    for (const name of ['a', 'b', 'c', 'd']) expect(readdirSync(ws())).not.toContain(name);
  });

  it('refuses to clone over a directory that is something else', async () => {
    mkdirSync(join(ws(), 'taken'), { recursive: true });
    expect((await clone({ url: `${git.url}/acme/private.git`, directory: 'taken', authorization: basic(TOKEN) })).body).toMatchObject({ status: 'DIRECTORY_TAKEN' });
  });

  it('validates the request (422 with field paths)', async () => {
    const res = await clone({ url: 'https://user:pw@example.com/a/b.git', directory: '../escape' });
    expect(res.status).toBe(422);
    const locs = (res.body.detail as { loc: string[] }[]).map((d) => d.loc.join('.'));
    expect(locs).toEqual(expect.arrayContaining(['body.url', 'body.directory']));
  });
});
