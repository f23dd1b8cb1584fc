// Workspace reads through the facade against a real agent server: the file listing, and the read
// rules every workspace read shares (agentFor): a paused sandbox resumed by the read, ERROR
// read-only, a foreign id unknown.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SandboxKind } from '../api/sandbox.ts';
import { eventually, NS, setSandboxPhase, startWorkspaceHarness, type WorkspaceHarness } from './test-support.ts';

describe('workspace reads', () => {
  let h: WorkspaceHarness;
  beforeEach(async () => {
    h = await startWorkspaceHarness({ resumeWaitSeconds: 2 });
    for (const d of ['proj/src', 'proj/node_modules/x', 'other']) mkdirSync(join(h.workspace, d), { recursive: true });
    writeFileSync(join(h.workspace, 'proj', 'README.md'), '#');
    writeFileSync(join(h.workspace, 'proj', 'src', 'main.ts'), '');
    writeFileSync(join(h.workspace, 'proj', 'node_modules', 'x', 'index.js'), '');
    writeFileSync(join(h.workspace, 'other', 'notes.txt'), '');
  });
  afterEach(() => h.close());

  async function pause(): Promise<void> {
    await h.store.update(SandboxKind, { ...(await h.store.get(SandboxKind, NS, 'sb-1'))!, spec: { owner: h.alice.user.id, paused: true } });
    await setSandboxPhase(h.store, 'sb-1', 'PAUSED');
  }

  it("files: the working directory's files by default, or those of a given directory", async () => {
    const id = await h.conversation('proj');
    expect(await h.call('GET', `/api/v1/app-conversations/${id}/files`)).toMatchObject({ status: 200, body: ['README.md', 'src/main.ts'] });
    expect((await h.call('GET', `/api/v1/app-conversations/${id}/files?path=${encodeURIComponent(join(h.workspace, 'other'))}`)).body).toEqual(['notes.txt']);
  });

  it('file and git: a relative path is taken inside the working directory, relative or absolute', async () => {
    for (const dir of [join(h.workspace, 'proj'), 'proj']) {
      const id = await h.conversation(dir);
      expect(await h.call('GET', `/api/v1/app-conversations/${id}/file?file_path=README.md`)).toMatchObject({ status: 200, body: '#' });
      expect(await h.call('GET', `/api/v1/app-conversations/${id}/file?file_path=src%2Fmain.ts`)).toMatchObject({ status: 200, body: '' });
      expect(await h.call('GET', `/api/v1/app-conversations/${id}/git/changes?path=.`)).toMatchObject({ status: 200, body: [] }); // not a repository
    }
    const id = await h.conversation('proj');
    const empty = await h.call('GET', `/api/v1/app-conversations/${id}/file?file_path=`);
    expect([empty.status, empty.body.detail[0].loc]).toEqual([422, ['query', 'file_path']]);
  });

  it('files: a missing directory is 404, an empty path 422 at its field, a foreign id 404', async () => {
    const id = await h.conversation('proj');
    const missing = await h.call('GET', `/api/v1/app-conversations/${id}/files?path=${encodeURIComponent(join(h.workspace, 'nope'))}`);
    expect(missing.status).toBe(404);
    expect(missing.body.detail).toMatch(/does not exist/);
    const empty = await h.call('GET', `/api/v1/app-conversations/${id}/files?path=`);
    expect(empty.status).toBe(422);
    expect(empty.body.detail[0].loc).toEqual(['query', 'path']);
    expect((await h.call('GET', `/api/v1/app-conversations/${id}/files`, { key: h.bob.key })).status).toBe(404);
  });

  it('a paused sandbox is resumed by the read, which answers once it runs again', async () => {
    const id = await h.conversation('proj');
    await pause();
    const read = h.call('GET', `/api/v1/app-conversations/${id}/files`);
    // Playing the controller: the read asked for a resume; bring the sandbox back.
    await eventually(async () => (await h.store.get(SandboxKind, NS, 'sb-1'))!.spec.paused === false, 'the read to ask for a resume');
    await setSandboxPhase(h.store, 'sb-1', 'RUNNING');
    expect(await read).toMatchObject({ status: 200, body: ['README.md', 'src/main.ts'] });
  });

  it('a read of a paused sandbox that does not come back in time answers 503 with Retry-After', async () => {
    const id = await h.conversation('proj');
    await pause();
    const res = await h.call('GET', `/api/v1/app-conversations/${id}/hooks`);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(res.body.detail).toMatch(/resuming/);
    expect((await h.store.get(SandboxKind, NS, 'sb-1'))!.spec.paused).toBe(false);
  });

  it('a sandbox in ERROR keeps the conversation read-only (409)', async () => {
    const id = await h.conversation('proj');
    await setSandboxPhase(h.store, 'sb-1', 'ERROR');
    for (const read of ['files', 'hooks', 'skills', `file?file_path=${encodeURIComponent(join(h.workspace, 'proj', 'README.md'))}`]) {
      const res = await h.call('GET', `/api/v1/app-conversations/${id}/${read}`);
      expect(res.status, read).toBe(409);
      expect(res.body.detail).toMatch(/read-only/);
    }
  });
});
