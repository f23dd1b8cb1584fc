// POST /api/agentyard/marketplaces/plugins over real HTTP against a real Git smart-HTTP server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGitHttpServer, type GitHttpServer } from '../testing/git-http/server.ts';
import { startTestServer, tempDir, type TestServer } from './test-support.ts';

const TOKEN = 'mkt_token_value_1';
const bearer = `Bearer ${TOKEN}`;
let dir: ReturnType<typeof tempDir>;
let s: TestServer;
let git: GitHttpServer;

beforeAll(async () => {
  dir = tempDir();
  s = await startTestServer(dir.path);
  git = await startGitHttpServer();
  const manifest = {
    name: 'team',
    metadata: { pluginRoot: './plugins' },
    plugins: [
      { name: 'lint', source: './lint' },
      { name: 'remote', source: { source: 'github', repo: 'acme/remote-plugin', ref: 'v1' } },
      { name: 'bad', source: '../../../etc' },
      { nameless: true },
    ],
  };
  git.createRepo('acme/market', { main: { 'catalog/.claude-plugin/marketplace.json': JSON.stringify(manifest), 'catalog/plugins/lint/README.md': 'lint\n' }, v2: { 'README.md': 'v2\n' } }, { token: TOKEN });
});
afterAll(async () => {
  await s?.close();
  await git?.close();
  dir?.remove();
});

const call = (body: Record<string, unknown>) => s.api('/api/agentyard/marketplaces/plugins', { method: 'POST', body });

describe('POST /api/agentyard/marketplaces/plugins', () => {
  it('lists the plugins of a private marketplace as plugin entries', async () => {
    const url = `${git.url}/acme/market.git`;
    const res = await call({ url, path: 'catalog', ref: 'main', authorization: bearer });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'OK',
      detail: null,
      plugins: [
        { name: 'lint', source: url, ref: 'main', repo_path: 'catalog/plugins/lint' },
        { name: 'remote', source: 'github:acme/remote-plugin', ref: 'v1' },
      ],
    });
  });

  it('tells a refused token, a missing manifest and a bad request apart', async () => {
    const url = `${git.url}/acme/market.git`;
    expect((await call({ url, authorization: 'Bearer nope' })).body).toMatchObject({ status: 'AUTH_FAILED', plugins: [] });
    expect((await call({ url, authorization: bearer })).body).toMatchObject({ status: 'NO_MANIFEST' });
    expect((await call({ url, ref: 'missing', authorization: bearer })).body).toMatchObject({ status: 'BRANCH_NOT_FOUND' });
    const bad = await call({ url, path: '../up' });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(['body', 'path']);
  });
});
