import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { objectStoreConformance } from './conformance.ts';
import { FsObjectStore } from './fs-store.ts';

describe('FsObjectStore', () => {
  let root = '';
  objectStoreConformance(() => {
    root = mkdtempSync(join(tmpdir(), 'objstore-fs-'));
    return new FsObjectStore(join(root, 'objects'));
  });

  it('reads back what an earlier process wrote (a restart), and keeps it to the owner', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'objstore-fs-')), 'objects');
    await new FsObjectStore(dir).put('conversations/c1/files/rec.zip', 'recording');
    const again = new FsObjectStore(dir);
    expect((await again.get('conversations/c1/files/rec.zip'))?.toString()).toBe('recording');
    expect(statSync(join(dir, 'conversations/c1/files/rec.zip')).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'conversations')).mode & 0o777).toBe(0o700);
    expect(readdirSync(join(dir, 'conversations/c1/files'))).toEqual(['rec.zip']); // no temporary left
  });
});
