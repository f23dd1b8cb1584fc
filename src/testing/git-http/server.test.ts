import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGitHttpServer, type GitHttpServer } from './server.ts';

const run = promisify(execFile);

function authEnv(token: string): Record<string, string> {
  const basic = Buffer.from(`x-access-token:${token}`).toString('base64');
  return { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'http.extraHeader', GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}` };
}

describe('git smart-HTTP test server', () => {
  let srv: GitHttpServer;
  let dir: string;
  beforeAll(async () => {
    srv = await startGitHttpServer();
    srv.createRepo('acme/private', { main: { 'README.md': 'main\n' }, feature: { 'feature.txt': 'f\n' } }, { token: 'tok-123' });
    srv.createRepo('acme/public', { trunk: { 'a.txt': 'a\n' } });
    dir = mkdtempSync(join(tmpdir(), 'git-http-test-'));
  });
  afterAll(async () => {
    await srv?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const clone = (url: string, target: string, env: Record<string, string> = {}, extra: string[] = []) =>
    run('git', ['clone', ...extra, url, join(dir, target)], { env: { ...process.env, GIT_TERMINAL_PROMPT: '0', ...env } });

  it('serves a private repository to the right token, branches included', async () => {
    await clone(`${srv.url}/acme/private.git`, 'p', authEnv('tok-123'), ['--branch', 'feature']);
    expect(readFileSync(join(dir, 'p', 'feature.txt'), 'utf8')).toBe('f\n');
    expect(readFileSync(join(dir, 'p', 'README.md'), 'utf8')).toBe('main\n');
  });

  it('answers 401 to a wrong or missing token', async () => {
    await expect(clone(`${srv.url}/acme/private.git`, 'q', authEnv('wrong'))).rejects.toThrow();
    await expect(clone(`${srv.url}/acme/private.git`, 'r')).rejects.toThrow();
    expect(srv.requests.filter((r) => r.status === 401).length).toBeGreaterThanOrEqual(2);
  });

  it('serves a public repository without a token; an unknown one is 404', async () => {
    await clone(`${srv.url}/acme/public.git`, 'pub');
    expect(readFileSync(join(dir, 'pub', 'a.txt'), 'utf8')).toBe('a\n');
    const res = await fetch(`${srv.url}/acme/nope.git/info/refs?service=git-upload-pack`);
    await res.body?.cancel();
    expect(res.status).toBe(404);
  });
});
