// SqliteStore on a real full filesystem (a small tmpfs, filled and freed): a write that cannot be
// made fails with a storage fault (the API answers 507) and changes nothing; what was committed
// stays readable and watchable; once space returns writes go on with the next resourceVersion.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mountSmallFs, type SmallFs } from '../../testing/full-disk.ts';
import { storageFaultOf } from '../../util/storage-fault.ts';
import { SandboxKind } from '../../api/sandbox.ts';
import { collect, sandbox, watching } from '../conformance/fixtures.ts';
import { SqliteStore } from './sqlite-store.ts';

const fs = mountSmallFs(8);
const skip = 'skip' in fs ? fs.skip : undefined;
if (skip) console.warn(`full-disk.test.ts (SqliteStore) skipped: ${skip}`);

describe.skipIf(skip !== undefined)('SqliteStore on a full disk', () => {
  const disk = fs as SmallFs;
  afterAll(() => {
    disk.free();
    disk.unmount();
  });

  it('refuses writes with a storage fault, keeps what was committed, and recovers when space returns', async () => {
    const store = new SqliteStore(join(disk.path, 'store.db'));
    try {
      const first = await store.create(SandboxKind, sandbox('before', { namespace: 'ns' }));
      const watch = watching(store, SandboxKind, 'ns', { resourceVersion: first.metadata.resourceVersion });
      disk.fill();
      // Big labels so that the write needs pages the WAL cannot reuse.
      let failure: unknown;
      let created = 1;
      for (let i = 0; i < 2000 && failure === undefined; i++) {
        try {
          await store.create(SandboxKind, sandbox(`full-${i}`, { namespace: 'ns', annotations: { pad: 'x'.repeat(60_000) } }));
          created++;
        } catch (err) {
          failure = err;
        }
      }
      expect(storageFaultOf(failure)).toMatchObject({ kind: 'full' });
      const during = await store.list(SandboxKind, 'ns');
      expect(during.items).toHaveLength(created);

      disk.free();
      const after = await store.create(SandboxKind, sandbox('after', { namespace: 'ns' }));
      expect(Number(after.metadata.resourceVersion)).toBe(Number(during.resourceVersion) + 1);
      const names = (await store.list(SandboxKind, 'ns')).items.map((s) => s.metadata.name);
      expect(names).toHaveLength(created + 1);
      expect(names).toContain('after');
      // The watch saw every committed write, in order, and nothing of the refused one.
      const seen = await collect(watch.it, created);
      expect(seen.map((e) => e.object.metadata.name)).toEqual([...names.filter((n) => n.startsWith('full-')).sort((a, b) => Number(a.slice(5)) - Number(b.slice(5))), 'after']);
      watch.stop();
    } finally {
      store.close();
    }
  }, 60_000);
});
