// Unpacking an archive Pod's conversation-files upload: a real tar.gz made by the system's tar from a
// directory a hostile sandbox could have written (links, `..`, another user's conversation, a file
// too large), read into a real filesystem object store.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FsObjectStore } from '../../objstore/fs-store.ts';
import { conversationFilesUploadKey } from '../../objstore/keys.ts';
import { unpackConversationFiles } from './conversation-files.ts';

describe('unpackConversationFiles', () => {
  const dir = mkdtempSync(join(tmpdir(), 'conv-files-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function upload(build: (root: string) => void, extraTarArgs: string[] = []): Buffer {
    const root = mkdtempSync(join(dir, 'conversations-'));
    build(root);
    return execFileSync('tar', ['-czf', '-', '-C', root, ...extraTarArgs, '.']);
  }

  it("stores the regular files of this sandbox's live conversations and deletes the upload; links, other conversations and oversized files are not stored", async () => {
    const objects = new FsObjectStore(join(dir, 'objects'));
    await objects.init();
    const key = conversationFilesUploadKey('sb-1', 'stamp');
    await objects.put(
      key,
      upload((root) => {
        mkdirSync(join(root, 'conv-a', 'browser_recordings'), { recursive: true });
        writeFileSync(join(root, 'conv-a', 'browser_recordings', 'trace 1.zip'), 'PK-recording');
        writeFileSync(join(root, 'conv-a', 'big.bin'), Buffer.alloc(2048));
        symlinkSync('/etc/passwd', join(root, 'conv-a', 'passwd'));
        mkdirSync(join(root, 'conv-of-someone-else'));
        writeFileSync(join(root, 'conv-of-someone-else', 'planted.html'), '<script>');
        writeFileSync(join(root, 'stray.txt'), 'not in a conversation directory');
      }),
    );
    const asked: string[] = [];
    const out = await unpackConversationFiles(objects, key, { keep: async (id) => (asked.push(id), id === 'conv-a'), maxFileBytes: 1024 });
    expect((await objects.list('')).map((o) => o.key)).toEqual(['conversations/conv-a/files/browser_recordings/trace_1.zip']);
    expect((await objects.get('conversations/conv-a/files/browser_recordings/trace_1.zip'))?.toString()).toBe('PK-recording');
    expect(out).toEqual({ stored: 1, skipped: 2 }); // big.bin (too large) and planted.html (not this sandbox's)
    expect(asked.sort()).toEqual(['conv-a', 'conv-of-someone-else']); // once per conversation
    // Again (a retry after the upload is gone): nothing to do.
    expect(await unpackConversationFiles(objects, key, { keep: async () => true })).toEqual({ stored: 0, skipped: 0 });
  });

  it('a member path with `..` is not stored, even under a kept conversation', async () => {
    const objects = new FsObjectStore(join(dir, 'objects-dots'));
    await objects.init();
    const key = conversationFilesUploadKey('sb-2', 'stamp');
    // GNU tar keeps `..` in member names when asked to (--transform rewrites them in).
    await objects.put(
      key,
      upload(
        (root) => {
          mkdirSync(join(root, 'conv-a'));
          writeFileSync(join(root, 'conv-a', 'escape.txt'), 'x');
        },
        ['--transform', 's,conv-a/escape,conv-a/../conv-b/escape,'],
      ),
    );
    const out = await unpackConversationFiles(objects, key, { keep: async () => true });
    expect(out.stored).toBe(0);
    expect(await objects.list('conversations/')).toEqual([]);
  });

  it('a store that fails mid-way throws and keeps the upload for the retry', async () => {
    const objects = new FsObjectStore(join(dir, 'objects-fail'));
    await objects.init();
    const key = conversationFilesUploadKey('sb-3', 'stamp');
    await objects.put(
      key,
      upload((root) => {
        mkdirSync(join(root, 'conv-a'));
        writeFileSync(join(root, 'conv-a', 'one.txt'), '1');
      }),
    );
    const failing = new (class extends FsObjectStore {
      override async put(): Promise<void> {
        throw new Error('store down');
      }
    })(join(dir, 'objects-fail'));
    await expect(unpackConversationFiles(failing, key, { keep: async () => true })).rejects.toThrow('store down');
    expect(await objects.get(key)).toBeDefined();
    expect(await unpackConversationFiles(objects, key, { keep: async () => true })).toEqual({ stored: 1, skipped: 0 });
    expect(await objects.get(key)).toBeUndefined();
  });
});
