// A deleted process sandbox's data goes into the object store before its directory goes; with the
// store down the delete fails and keeps everything, and the next attempt stores it all.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { API_VERSION } from '../../api/meta.ts';
import type { Sandbox } from '../../api/sandbox.ts';
import { Unavailable } from '../../api/errors.ts';
import { FsObjectStore } from '../../objstore/fs-store.ts';
import { ProcessRuntime } from './process-runtime.ts';

class FlakyStore extends FsObjectStore {
  down = false;
  override async putFile(key: string, path: string): Promise<void> {
    if (this.down) throw new Unavailable(`storing ${key}: the object store did not answer`);
    return super.putFile(key, path);
  }
}

function sandboxDir(dataDir: string, name: string): string {
  const dir = join(dataDir, 'sandboxes', name);
  mkdirSync(join(dir, 'workspace'), { recursive: true });
  writeFileSync(join(dir, 'workspace', 'notes.txt'), 'user work');
  for (const conv of ['c-live', 'c-gone']) {
    mkdirSync(join(dir, 'state', 'conversations', conv, 'browser_recordings'), { recursive: true });
    writeFileSync(join(dir, 'state', 'conversations', conv, 'browser_recordings', 'browser-recording-1.zip'), `trace of ${conv}`);
  }
  writeFileSync(join(dir, 'state', 'conversations', 'c-live', 'odd name.txt'), 'spaces');
  return dir;
}

describe('ProcessRuntime.delete keeps what outlives the sandbox in the object store', () => {
  it('archives the workspace (internal/) and the files of conversations that still exist (conversations/<id>/files/)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'preserve-'));
    const dir = sandboxDir(dataDir, 'sb1');
    const objects = new FsObjectStore(join(dataDir, 'objects'));
    const rt = new ProcessRuntime({ dataDir, objects, keepConversation: async (id) => id === 'c-live' });
    await rt.delete({ apiVersion: API_VERSION, kind: 'Sandbox', metadata: { name: 'sb1', namespace: 'default' }, spec: { paused: false } });
    expect(existsSync(dir)).toBe(false);
    const [archive, ...more] = await objects.list('internal/workspace-archives/');
    expect(more).toEqual([]);
    expect(archive!.key).toMatch(/^internal\/workspace-archives\/sb1-.*\.tar\.gz$/);
    const listing = execFileSync('tar', ['-tzf', '-'], { input: (await objects.get(archive!.key))! }).toString();
    expect(listing).toContain('workspace/notes.txt');
    expect((await objects.list('conversations/')).map((o) => o.key)).toEqual(['conversations/c-live/files/browser_recordings/browser-recording-1.zip', 'conversations/c-live/files/odd_name.txt']);
    expect((await objects.get('conversations/c-live/files/browser_recordings/browser-recording-1.zip'))?.toString()).toBe('trace of c-live');
  });

  it('with the store down the delete throws and keeps the directory; the retry stores everything', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'preserve-'));
    const dir = sandboxDir(dataDir, 'sb2');
    const objects = new FlakyStore(join(dataDir, 'objects'));
    const rt = new ProcessRuntime({ dataDir, objects });
    const sb: Sandbox = { apiVersion: API_VERSION, kind: 'Sandbox', metadata: { name: 'sb2', namespace: 'default' }, spec: { paused: false } };
    objects.down = true;
    await expect(rt.delete(sb)).rejects.toBeInstanceOf(Unavailable);
    expect(existsSync(join(dir, 'workspace', 'notes.txt'))).toBe(true);
    expect(existsSync(join(dir, '.workspace-archive.tar.gz'))).toBe(false); // no leftover
    objects.down = false;
    await rt.delete(sb);
    expect(existsSync(dir)).toBe(false);
    expect(await objects.list('internal/workspace-archives/')).toHaveLength(1);
    expect(await objects.list('conversations/')).toHaveLength(3);
  });
});
