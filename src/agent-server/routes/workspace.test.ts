// The file and git API against a real git repository.
import { execFileSync } from 'node:child_process';
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, tempDir, TEST_KEY, type TestServer } from '../test-support.ts';

describe('file and git API', () => {
  let dir: ReturnType<typeof tempDir>;
  let s: TestServer;
  let repo: string;
  beforeEach(async () => {
    dir = tempDir();
    s = await startTestServer(dir.path);
    repo = join(dir.path, 'workspace', 'project');
    mkdirSync(repo, { recursive: true });
    const g = (...args: string[]) => execFileSync('git', ['-C', repo, '-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args]);
    g('init', '-q');
    writeFileSync(join(repo, 'kept.txt'), 'one\n');
    writeFileSync(join(repo, 'edited.txt'), 'before\n');
    writeFileSync(join(repo, 'removed.txt'), 'x\n');
    writeFileSync(join(repo, 'moved.txt'), 'a file that is moved, long enough to be detected as a rename\n');
    g('add', '.');
    g('commit', '-qm', 'initial');
    writeFileSync(join(repo, 'edited.txt'), 'after\n');
    rmSync(join(repo, 'removed.txt'));
    renameSync(join(repo, 'moved.txt'), join(repo, 'renamed.txt'));
    g('add', '-A');
    writeFileSync(join(repo, 'new.txt'), 'new\n');
  });
  afterEach(async () => {
    await s.close();
    dir.remove();
  });

  it('lists changes against HEAD, untracked files included', async () => {
    const r = await s.api(`/api/git/changes?path=${encodeURIComponent(repo)}`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual([
      { status: 'UPDATED', path: 'edited.txt' },
      { status: 'ADDED', path: 'new.txt' },
      { status: 'DELETED', path: 'removed.txt' },
      { status: 'MOVED', path: 'renamed.txt' },
    ]);
    expect((await s.api(`/api/git/changes?path=${encodeURIComponent(join(dir.path, 'data'))}`)).body).toEqual([]); // not a repository
  });

  it('gives the whole file before and after', async () => {
    expect((await s.api(`/api/git/diff?path=${encodeURIComponent(join(repo, 'edited.txt'))}`)).body).toEqual({ original: 'before\n', modified: 'after\n' });
    expect((await s.api(`/api/git/diff?path=${encodeURIComponent(join(repo, 'new.txt'))}`)).body).toEqual({ original: null, modified: 'new\n' });
    expect((await s.api(`/api/git/diff?path=${encodeURIComponent(join(repo, 'nope.txt'))}`)).status).toBe(404);
  });

  it('downloads files by absolute path, with clear errors', async () => {
    const res = await fetch(`${s.url}/api/file/download?path=${encodeURIComponent(join(repo, 'kept.txt'))}`, { headers: { 'x-session-api-key': TEST_KEY } });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('one\n');
    expect((await s.api('/api/file/download?path=relative.txt')).status).toBe(400);
    expect((await s.api(`/api/file/download?path=${encodeURIComponent(join(repo, 'missing'))}`)).status).toBe(404);
    expect((await s.api(`/api/file/download?path=${encodeURIComponent(join(repo, 'kept.txt'))}`, { key: null })).status).toBe(401);
  });

  it('serves the path-style forms older clients call, with the same answers', async () => {
    const res = await fetch(`${s.url}/api/file/download${join(repo, 'kept.txt')}`, { headers: { 'x-session-api-key': TEST_KEY } });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('one\n');
    // Doubled slash (the path appended to a trailing slash) and an encoded path both work.
    expect((await s.api(`/api/file/download/${join(repo, 'kept.txt')}`)).body).toBe('one\n');
    expect((await s.api(`/api/file/download/${encodeURIComponent(join(repo, 'kept.txt'))}`)).body).toBe('one\n');
    expect((await s.api(`/api/file/download${join(repo, 'missing')}`)).status).toBe(404);
    expect((await s.api(`/api/git/changes${repo}`)).body).toEqual((await s.api(`/api/git/changes?path=${encodeURIComponent(repo)}`)).body);
    expect((await s.api(`/api/git/changes${repo}`)).body).toHaveLength(4);
    expect((await s.api(`/api/git/diff${join(repo, 'edited.txt')}`)).body).toEqual({ original: 'before\n', modified: 'after\n' });
    expect((await s.api(`/api/git/diff${join(repo, 'edited.txt')}?ref=HEAD`)).body).toEqual({ original: 'before\n', modified: 'after\n' });
    expect((await s.api(`/api/git/diff${join(repo, 'kept.txt')}`, { key: null })).status).toBe(401);
  });
});
