// The git history routes over HTTP on a real repository in the workspace, whose last commit the real
// agent makes with its terminal (scripted model): GET /api/git/commits, GET /api/git/commits/{sha}/changes
// and GET /api/git/diff?commit=, with their paging, empty answers and refusals.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createAgent } from '../../agent/agent.ts';
import { eventually, useRealAgentServer, userText } from '../test-support.ts';

const t = useRealAgentServer({ createAgent });

function git(cwd: string, args: string[], date?: string): string {
  const env = { ...process.env, ...(date ? { GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date } : {}) };
  return execFileSync('git', args, { cwd, env, encoding: 'utf8' }).trim();
}

/** A repository with two commits by the test; the agent makes the third (a rename) with its terminal. */
async function repository(): Promise<{ repo: string; shas: string[] }> {
  const wd = join(t.dir.path, 'wd');
  const repo = join(wd, 'repo');
  mkdirSync(join(repo, 'sub'), { recursive: true });
  git(repo, ['init', '-q', '-b', 'main']);
  git(repo, ['config', 'user.name', 'Ada Author']);
  git(repo, ['config', 'user.email', 'ada@example.com']);
  writeFileSync(join(repo, 'a.txt'), 'a1\n');
  writeFileSync(join(repo, 'b.txt'), 'b1\n');
  writeFileSync(join(repo, 'sub', 'keep.txt'), 'k\n');
  git(repo, ['add', '.']);
  git(repo, ['commit', '-qm', 'first: add files'], '2026-01-02T03:04:05+00:00');
  writeFileSync(join(repo, 'a.txt'), 'a2\n');
  git(repo, ['rm', '-q', 'b.txt']);
  git(repo, ['commit', '-qam', 'second: change a, drop b'], '2026-01-03T03:04:05+00:00');

  const body = { workspace: { kind: 'LocalWorkspace', working_dir: repo }, agent: { llm: { model: 'openai/scripted' }, tools: [{ name: 'terminal' }] } };
  const id: string = (await t.s.api('/api/conversations', { method: 'POST', body })).body.id;
  t.llm.push({ toolCalls: [{ name: 'terminal', arguments: { command: 'git mv a.txt c.txt && git commit -qm "third: rename a to c"' } }] }, { content: 'Renamed.' });
  await t.s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('rename a.txt to c.txt and commit', true) });
  await eventually(async () => (await t.s.api(`/api/conversations/${id}`)).body.execution_status === 'finished', 15_000);
  return { repo, shas: git(repo, ['log', '--format=%H']).split('\n') };
}

const q = (path: string, extra = '') => `?path=${encodeURIComponent(path)}${extra}`;

describe('git history', () => {
  it('lists commits newest first with paging, the files each commit changed, and a file before and after a commit', async () => {
    const { repo, shas } = await repository();
    expect(shas).toHaveLength(3);

    const all = await t.s.api(`/api/git/commits${q(repo)}`);
    expect(all.status).toBe(200);
    expect(all.body.has_more).toBe(false);
    expect(all.body.commits.map((c: any) => c.subject)).toEqual(['third: rename a to c', 'second: change a, drop b', 'first: add files']);
    expect(all.body.commits[2]).toEqual({ sha: shas[2], short_sha: shas[2]!.slice(0, all.body.commits[2].short_sha.length), subject: 'first: add files', author: 'Ada Author', timestamp: '2026-01-02T03:04:05+00:00' });
    expect(all.body.commits[1].timestamp).toBe('2026-01-03T03:04:05+00:00');
    expect(all.body.commits.map((c: any) => c.sha)).toEqual(shas);
    expect((await t.s.api(`/api/git/commits${q(repo, '&limit=2')}`)).body).toMatchObject({ has_more: true, commits: [{ sha: shas[0] }, { sha: shas[1] }] });
    // A directory inside the repository reads the same history.
    expect((await t.s.api(`/api/git/commits${q(join(repo, 'sub'))}`)).body.commits).toHaveLength(3);

    const changes = async (sha: string) => (await t.s.api(`/api/git/commits/${sha}/changes${q(repo)}`)).body;
    expect(await changes(shas[2]!)).toEqual([
      { status: 'ADDED', path: 'a.txt' },
      { status: 'ADDED', path: 'b.txt' },
      { status: 'ADDED', path: 'sub/keep.txt' },
    ]);
    expect(await changes(shas[1]!.slice(0, 8))).toEqual([
      { status: 'UPDATED', path: 'a.txt' },
      { status: 'DELETED', path: 'b.txt' },
    ]);
    expect(await changes(shas[0]!)).toEqual([
      { status: 'DELETED', path: 'a.txt' },
      { status: 'ADDED', path: 'c.txt' },
    ]);

    // From git objects: b.txt is long gone from the disk, a.txt too.
    const diff = async (file: string, sha: string) => (await t.s.api(`/api/git/diff${q(join(repo, file), `&commit=${sha}`)}`)).body;
    expect(await diff('b.txt', shas[1]!)).toEqual({ original: 'b1\n', modified: '' });
    expect(await diff('a.txt', shas[2]!)).toEqual({ original: '', modified: 'a1\n' });
    expect(await diff('a.txt', shas[1]!)).toEqual({ original: 'a1\n', modified: 'a2\n' });
    // Without commit the diff is still the working tree against HEAD.
    expect((await t.s.api(`/api/git/diff${q(join(repo, 'c.txt'))}`)).body).toEqual({ original: 'a2\n', modified: 'a2\n' });
  });

  it('answers empty for a path with no history, 400 for a git error or a relative path, 422 for bad input', async () => {
    const { repo } = await repository();
    const plain = join(t.dir.path, 'plain');
    mkdirSync(plain);
    const unborn = join(t.dir.path, 'unborn');
    mkdirSync(unborn);
    git(unborn, ['init', '-q']);
    for (const path of [plain, unborn, join(t.dir.path, 'missing')]) {
      expect((await t.s.api(`/api/git/commits${q(path)}`)).body, path).toEqual({ commits: [], has_more: false });
    }
    expect((await t.s.api(`/api/git/commits/abcd1234/changes${q(plain)}`)).body).toEqual([]);
    expect((await t.s.api(`/api/git/diff${q(join(plain, 'x.txt'), '&commit=abcd1234')}`)).body).toEqual({ original: null, modified: null });

    const unknown = await t.s.api(`/api/git/commits/deadbeef/changes${q(repo)}`);
    expect(unknown.status).toBe(400);
    expect(unknown.body.detail).toContain('git rev-parse failed');
    expect((await t.s.api(`/api/git/diff${q(join(repo, 'c.txt'), '&commit=deadbeef')}`)).status).toBe(400);
    expect((await t.s.api(`/api/git/diff${q(join(repo, 'c.txt'), '&commit=abcd&ref=HEAD')}`)).status).toBe(400);
    expect((await t.s.api('/api/git/commits?path=relative')).status).toBe(400);

    expect((await t.s.api('/api/git/commits')).body.detail).toEqual([{ loc: ['query', 'path'], msg: 'Field required', type: 'missing' }]);
    for (const limit of ['0', '201', 'many']) {
      const r = await t.s.api(`/api/git/commits${q(repo, `&limit=${limit}`)}`);
      expect({ limit, status: r.status, loc: r.body.detail[0].loc }).toEqual({ limit, status: 422, loc: ['query', 'limit'] });
    }
    const badSha = await t.s.api(`/api/git/commits/${encodeURIComponent('--all')}/changes${q(repo)}`);
    expect(badSha.status).toBe(422);
    expect(badSha.body.detail[0].loc).toEqual(['path', 'sha']);
    expect((await t.s.api(`/api/git/commits/abcd/changes`)).body.detail[0].loc).toEqual(['query', 'path']);
    expect((await t.s.api(`/api/git/diff${q(join(repo, 'c.txt'), '&commit=HEAD~1')}`)).body.detail[0].loc).toEqual(['query', 'commit']);
  });
});
