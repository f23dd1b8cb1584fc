// One behaviour for every ObjectStore: the same cases run against FsObjectStore (fs-store.test.ts)
// and S3ObjectStore on a real SeaweedFS (s3-store.test.ts).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { text } from 'node:stream/consumers';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { Invalid } from '../api/errors.ts';
import type { ObjectStore } from './types.ts';

export function objectStoreConformance(store: () => ObjectStore): void {
  it('stores bytes and strings and reads them back; a missing key is undefined', async () => {
    const s = store();
    const bytes = randomBytes(4096);
    await s.put('conversations/c1/files/a.bin', bytes);
    await s.put('conversations/c1/files/b.txt', 'hello');
    expect(await s.get('conversations/c1/files/a.bin')).toEqual(bytes);
    expect((await s.get('conversations/c1/files/b.txt'))?.toString()).toBe('hello');
    expect(await s.get('conversations/c1/files/none')).toBeUndefined();
    expect(await s.open('conversations/c1/files/none')).toBeUndefined();
    expect(await text((await s.open('conversations/c1/files/b.txt'))!)).toBe('hello');
    await s.put('conversations/c1/files/b.txt', 'replaced');
    expect((await s.get('conversations/c1/files/b.txt'))?.toString()).toBe('replaced');
  });

  it('streams a file in (several MiB) and out unchanged', async () => {
    const s = store();
    const path = join(mkdtempSync(join(tmpdir(), 'objstore-')), 'big.tar.gz');
    const bytes = randomBytes(5 * 1024 * 1024 + 17);
    writeFileSync(path, bytes);
    await s.putFile('internal/workspace-archives/sb1-stamp.tar.gz', path);
    expect((await s.get('internal/workspace-archives/sb1-stamp.tar.gz'))!.equals(bytes)).toBe(true);
    expect(await s.list('internal/workspace-archives/')).toEqual([{ key: 'internal/workspace-archives/sb1-stamp.tar.gz', size: bytes.length }]);
  });

  it('lists by prefix in key order, and deletes a prefix without touching a longer id beside it', async () => {
    const s = store();
    await s.put('conversations/d1/files/z', 'z');
    await s.put('conversations/d1/files/sub/a', 'a');
    await s.put('conversations/d10/files/a', 'other conversation');
    expect((await s.list('conversations/d1/')).map((o) => o.key)).toEqual(['conversations/d1/files/sub/a', 'conversations/d1/files/z']);
    expect(await s.deletePrefix('conversations/d1/')).toBe(2);
    expect(await s.list('conversations/d1/')).toEqual([]);
    expect(await s.get('conversations/d1/files/z')).toBeUndefined();
    expect((await s.get('conversations/d10/files/a'))?.toString()).toBe('other conversation');
    expect(await s.deletePrefix('conversations/d1/')).toBe(0); // again: nothing, no error
  });

  it('deletes one key, idempotently', async () => {
    const s = store();
    await s.put('conversations/e1/files/x', 'x');
    await s.delete('conversations/e1/files/x');
    await s.delete('conversations/e1/files/x');
    expect(await s.get('conversations/e1/files/x')).toBeUndefined();
  });

  it('refuses keys that could escape or mean two things', async () => {
    const s = store();
    for (const key of ['../etc/passwd', 'a/../b', '/abs', 'a//b', 'a/', '', 'a/.hidden', 'a b']) {
      await expect(s.put(key, 'x'), key).rejects.toBeInstanceOf(Invalid);
    }
    await expect(s.deletePrefix('conversations/no-slash')).rejects.toBeInstanceOf(Invalid);
  });
}
