import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BadRequest, Gone, Unavailable } from '../../api/errors.ts';
import { SandboxKind, type Sandbox } from '../../api/sandbox.ts';
import { ConversationKind } from '../../api/conversation.ts';
import { SecretKind } from '../../api/secret.ts';
import { ManualClock } from '../../controller/clock.ts';
import { describeResourceStoreConformance } from '../conformance.ts';
import { matchesLabelSelector, parseLabelSelector } from '../label-selector.ts';
import { b64, collect, conversation, rejection, sandbox, secret, summary, watching } from '../conformance/fixtures.ts';
import { SqliteStore } from './sqlite-store.ts';

describeResourceStoreConformance(
  'SqliteStore',
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentyard-store-'));
    const store = new SqliteStore(join(dir, 'store.db'));
    return {
      store,
      namespace: 'conformance',
      otherNamespace: 'conformance-other',
      cleanup: async () => {
        store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
  { canForceCompaction: async (store) => void (store as SqliteStore).compact(0) },
);

describe('SqliteStore', () => {
  let dir: string;
  let path: string;
  const open: SqliteStore[] = [];
  const make = (opts: ConstructorParameters<typeof SqliteStore>[1] = {}, at: string = path): SqliteStore => {
    const store = new SqliteStore(at, opts);
    open.push(store);
    return store;
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'agentyard-store-'));
    path = join(dir, 'store.db');
  });
  afterEach(() => {
    for (const s of open.splice(0)) s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('counts resourceVersions as one increasing integer across kinds', async () => {
    const store = make();
    const a = await store.create(SandboxKind, sandbox('a', { namespace: 'ns' }));
    const c = await store.create(ConversationKind, conversation('c', { namespace: 'ns' }));
    const a2 = await store.update(SandboxKind, { ...a, spec: { paused: true } });
    expect([a, c, a2].map((o) => o.metadata.resourceVersion)).toEqual(['1', '2', '3']);
    expect(store.resourceVersion).toBe('3');
    expect((await store.list(ConversationKind, 'ns')).resourceVersion).toBe('3');
  });

  it('takes timestamps from the clock, in whole seconds, and defaults the namespace', async () => {
    const clock = new ManualClock('2026-03-04T05:06:07.890Z');
    const store = make({ clock });
    const input = sandbox('a', { namespace: 'x', finalizers: ['f'] });
    delete input.metadata.namespace;
    const created = await store.create(SandboxKind, input);
    expect(created.metadata.creationTimestamp).toBe('2026-03-04T05:06:07Z');
    expect(created.metadata.namespace).toBe('default');
    clock.advance(61_000);
    await store.delete(SandboxKind, 'default', 'a');
    expect((await store.get(SandboxKind, 'default', 'a'))?.metadata.deletionTimestamp).toBe('2026-03-04T05:07:08Z');
  });

  it('keeps objects and the change log across a reopen, and continues the resourceVersion', async () => {
    const first = make();
    const a = await first.create(SandboxKind, sandbox('a', { namespace: 'ns' }));
    const a2 = await first.update(SandboxKind, { ...a, spec: { paused: true } });
    first.close();

    const second = make();
    expect(await second.get(SandboxKind, 'ns', 'a')).toEqual(a2);
    const b = await second.create(SandboxKind, sandbox('b', { namespace: 'ns' }));
    expect(Number(b.metadata.resourceVersion)).toBe(Number(a2.metadata.resourceVersion) + 1);
    const w = watching<Sandbox>(second, SandboxKind, 'ns', { resourceVersion: '0' });
    try {
      expect(summary(await collect(w.it, 3))).toEqual(['ADDED a', 'MODIFIED a', 'ADDED b']);
    } finally {
      w.stop();
    }
  });

  it('compacts the change log past the retention; older watches get Gone', async () => {
    const store = make({ eventRetention: 10 });
    let obj = await store.create(SandboxKind, sandbox('a', { namespace: 'ns' }));
    const early = obj.metadata.resourceVersion!;
    for (let i = 0; i < 100; i++) obj = await store.update(SandboxKind, { ...obj, metadata: { ...obj.metadata, labels: { i: String(i) } } });
    const db = new Database(path, { readonly: true });
    const kept = db.prepare('SELECT COUNT(*) FROM changes').pluck().get() as number;
    db.close();
    expect(kept).toBeGreaterThanOrEqual(10);
    expect(kept).toBeLessThan(101);
    const stale = watching<Sandbox>(store, SandboxKind, 'ns', { resourceVersion: early });
    await rejection(stale.it.next(), Gone).finally(() => stale.stop());
    const recent = watching<Sandbox>(store, SandboxKind, 'ns', { resourceVersion: String(Number(obj.metadata.resourceVersion) - 5) });
    try {
      expect(await collect(recent.it, 5)).toHaveLength(5);
    } finally {
      recent.stop();
    }
  });

  it('gives Gone to a watch that falls behind compaction while it runs', async () => {
    const store = make();
    const start = store.resourceVersion;
    let obj = await store.create(SandboxKind, sandbox('a', { namespace: 'ns' }));
    const w = watching<Sandbox>(store, SandboxKind, 'ns', { resourceVersion: start });
    try {
      expect(summary(await collect(w.it, 1))).toEqual(['ADDED a']);
      for (let i = 0; i < 3; i++) obj = await store.update(SandboxKind, { ...obj, spec: { paused: i % 2 === 0 } });
      store.compact(0);
      await rejection(w.it.next(), Gone);
    } finally {
      w.stop();
    }
  });

  it('reads the change log once per commit for the watches that stand at one position', async () => {
    const executed: string[] = [];
    const db = new Database(path, { verbose: (sql) => executed.push(String(sql)) });
    const store = new SqliteStore(db);
    try {
      const start = store.resourceVersion;
      const watches = [0, 1, 2].map(() => watching<Sandbox>(store, SandboxKind, 'ns', { resourceVersion: start }));
      try {
        await store.create(SandboxKind, sandbox('a', { namespace: 'ns' }));
        executed.length = 0;
        for (const w of watches) expect(summary(await collect(w.it, 1))).toEqual(['ADDED a']);
        expect(executed.filter((sql) => sql.includes('FROM changes')).length).toBe(1);
      } finally {
        for (const w of watches) w.stop();
      }
    } finally {
      store.close();
      db.close();
    }
  });

  it('gives Gone to a watch behind a compaction made after another watch read the same position', async () => {
    const store = make();
    const start = store.resourceVersion;
    await store.create(SandboxKind, sandbox('a', { namespace: 'ns' }));
    const first = watching<Sandbox>(store, SandboxKind, 'ns', { resourceVersion: start });
    const second = watching<Sandbox>(store, SandboxKind, 'ns', { resourceVersion: start });
    try {
      expect(summary(await collect(first.it, 1))).toEqual(['ADDED a']);
      store.compact(0);
      await rejection(second.it.next(), Gone); // not the rows read before the compaction
    } finally {
      first.stop();
      second.stop();
    }
  });

  it('does not expire a watch on a quiet kind because other kinds were compacted', async () => {
    const store = make({ eventRetention: 5 });
    const start = store.resourceVersion;
    for (let i = 0; i < 100; i++) await store.create(SandboxKind, sandbox(`s${i}`, { namespace: 'ns' }));
    const w = watching(store, ConversationKind, 'ns', { resourceVersion: start });
    try {
      await store.create(ConversationKind, conversation('c', { namespace: 'ns' }));
      expect(summary(await collect(w.it, 1))).toEqual(['ADDED c']);
    } finally {
      w.stop();
    }
  });

  it('encrypts Secret data at rest, in the objects table and the change log', async () => {
    const plaintext = 'hunter2-plaintext-canary';
    const store = make();
    const created = await store.create(SecretKind, secret('creds', { namespace: 'ns', data: { token: b64(plaintext) } }));
    await store.update(SecretKind, { ...created, data: { token: b64(`${plaintext}-2`) } });
    store.close();

    const files = readdirSync(dir).filter((f) => f.startsWith('store.db') && !f.endsWith('.key'));
    expect(files).toContain('store.db');
    for (const f of files) {
      const bytes = readFileSync(join(dir, f)).toString('latin1');
      expect(bytes).not.toContain(plaintext);
      expect(bytes).not.toContain(b64(plaintext));
      expect(bytes).not.toContain(b64(`${plaintext}-2`));
    }
    expect(statSync(`${path}.key`).mode & 0o777).toBe(0o600);

    const reopened = make();
    expect((await reopened.get(SecretKind, 'ns', 'creds'))?.data).toEqual({ token: b64(`${plaintext}-2`) });
  });

  it('refuses to read Secrets with the wrong key, and never prints the ciphertext', async () => {
    const store = make({ secretKey: Buffer.alloc(32, 1) });
    await store.create(SecretKind, secret('creds', { namespace: 'ns', data: { token: b64('x') } }));
    store.close();
    const wrong = make({ secretKey: Buffer.alloc(32, 2) });
    const err = await rejection(wrong.get(SecretKind, 'ns', 'creds'), Error);
    expect(err.message).toMatch(/cannot decrypt Secret ns\/creds/);
    expect(err.message).not.toMatch(/aes-256-gcm:v1:/);
    expect(() => make({ secretKey: Buffer.alloc(16) })).toThrow(/32 bytes/);
  });

  it('works in memory with an ephemeral key and writes no key file', async () => {
    const store = make({}, ':memory:');
    const s = await store.create(SecretKind, secret('creds', { namespace: 'ns', data: { token: b64('x') } }));
    expect((await store.get(SecretKind, 'ns', 'creds'))?.data).toEqual(s.data);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('accepts an open better-sqlite3 Database and leaves closing it to the caller', async () => {
    const db = new Database(path);
    const store = make({}, db as never);
    await store.create(SandboxKind, sandbox('a', { namespace: 'ns' }));
    store.close();
    expect(db.open).toBe(true);
    db.close();
  });

  it('refuses a malformed watch resourceVersion with BadRequest', async () => {
    const store = make();
    const w = watching(store, SandboxKind, 'ns', { resourceVersion: 'abc' });
    await rejection(w.it.next(), BadRequest).finally(() => w.stop());
  });

  it('ends open watches on close and refuses further calls', async () => {
    const store = make();
    const it = store.watch(SandboxKind, undefined)[Symbol.asyncIterator]();
    const waiting = it.next();
    store.close();
    expect((await waiting).done).toBe(true);
    await rejection(store.get(SandboxKind, 'ns', 'a'), Unavailable);
  });

  it('shares frozen list items between shared lists until the next write, of any kind', async () => {
    const store = make();
    await store.create(SandboxKind, sandbox('a', { namespace: 'ns', labels: { owner: 'u' } }));
    const b = await store.create(SandboxKind, sandbox('b', { namespace: 'ns', labels: { owner: 'u' } }));
    const shared = () => store.list(SandboxKind, 'ns', { labelSelector: 'owner=u', shared: true });
    const first = await shared();
    const again = await shared();
    expect(again.items[0]).toBe(first.items[0]);
    expect(again.items).not.toBe(first.items); // the array is the caller's: sorting it harms no one
    expect(Object.isFrozen(first.items[0]!.metadata.labels)).toBe(true);
    expect(() => {
      first.items[0]!.spec.paused = true;
    }).toThrow(TypeError);
    // A list without `shared` returns the caller's own objects.
    const own = (await store.list(SandboxKind, 'ns', { labelSelector: 'owner=u' })).items[0]!;
    expect(own).not.toBe(first.items[0]);
    own.spec.paused = true;
    expect((await shared()).items[0]!.spec.paused).toBe(false);

    const names = async () => (await shared()).items.map((o) => `${o.metadata.name}:${o.spec.paused}@${o.metadata.resourceVersion}`);
    const updated = await store.update(SandboxKind, { ...b, spec: { paused: true } });
    expect(await names()).toEqual(['a:false@1', `b:true@${updated.metadata.resourceVersion}`]);
    const running = await store.updateStatus(SandboxKind, { ...updated, status: { phase: 'RUNNING' } });
    expect((await shared()).items[1]!.status?.phase).toBe('RUNNING');
    await store.delete(SandboxKind, 'ns', 'a');
    expect(await names()).toEqual([`b:true@${running.metadata.resourceVersion}`]);
    // A write to another kind moves the one resourceVersion: the kept list is read again, and the same.
    const before = (await shared()).items[0];
    await store.create(ConversationKind, conversation('c', { namespace: 'ns', labels: { owner: 'u' } }));
    const after = await shared();
    expect(after.items[0]).not.toBe(before);
    expect(after.items[0]).toEqual(before);
    expect(after.resourceVersion).toBe(store.resourceVersion);
    // Relabelled out of the selection.
    await store.update(SandboxKind, { ...(await store.get(SandboxKind, 'ns', 'b'))!, metadata: { ...after.items[0]!.metadata, labels: { owner: 'v' } } });
    expect(await names()).toEqual([]);
  });

  describe('label index', () => {
    // Lists by label read object_labels; the reference is a list of everything filtered here.
    const selectors = ['owner=a', 'owner=b', 'owner in (a,c)', 'owner', 'owner=a,tier!=db', 'tier,owner notin (b)', '!owner', 'owner=', 'tier=web,owner=a'];
    async function expectIndexAgreesWithScan(store: SqliteStore): Promise<void> {
      for (const ns of ['ns', 'other', undefined]) {
        const all = (await store.list(SandboxKind, ns)).items;
        for (const sel of selectors) {
          const want = all.filter((o) => matchesLabelSelector(parseLabelSelector(sel), o.metadata.labels)).map((o) => `${o.metadata.namespace}/${o.metadata.name}@${o.metadata.resourceVersion}`);
          const got = (await store.list(SandboxKind, ns, { labelSelector: sel })).items.map((o) => `${o.metadata.namespace}/${o.metadata.name}@${o.metadata.resourceVersion}`);
          expect(got, `${ns ?? '(all)'} ${sel}`).toEqual(want);
          // A shared list (kept between writes) answers the same, twice.
          for (let i = 0; i < 2; i++) {
            const shared = (await store.list(SandboxKind, ns, { labelSelector: sel, shared: true })).items.map((o) => `${o.metadata.namespace}/${o.metadata.name}@${o.metadata.resourceVersion}`);
            expect(shared, `shared ${ns ?? '(all)'} ${sel}`).toEqual(want);
          }
        }
      }
    }

    it('answers like a full scan through creates, relabels, deletes, finalizers and garbage collection', async () => {
      const store = make();
      let seed = 7;
      const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
      const labelsOf = (): Record<string, string> => {
        const l: Record<string, string> = {};
        const owner = ['a', 'b', 'c', '', undefined][rand(5)];
        if (owner !== undefined) l['owner'] = owner;
        if (rand(2) === 0) l['tier'] = ['web', 'db'][rand(2)]!;
        return l;
      };
      const names = Array.from({ length: 12 }, (_, i) => `s${i}`);
      for (let step = 0; step < 300; step++) {
        const ns = rand(3) === 0 ? 'other' : 'ns';
        const name = names[rand(names.length)]!;
        const cur = await store.get(SandboxKind, ns, name);
        const op = rand(4);
        if (!cur) await store.create(SandboxKind, sandbox(name, { namespace: ns, labels: labelsOf(), ...(rand(3) === 0 ? { finalizers: ['x/y'] } : {}) }));
        else if (op === 0) await store.update(SandboxKind, { ...cur, metadata: { ...cur.metadata, labels: labelsOf() } });
        else if (op === 1) await store.update(SandboxKind, { ...cur, spec: { paused: !cur.spec.paused } }); // labels unchanged
        else if (op === 2) await store.delete(SandboxKind, ns, name);
        else if (cur.metadata.finalizers?.length) await store.update(SandboxKind, { ...cur, metadata: { ...cur.metadata, finalizers: [] } });
        if (step % 50 === 49) await expectIndexAgreesWithScan(store);
      }
      // A dependent removed by the garbage collector leaves the index too.
      const owner = await store.create(SandboxKind, sandbox('owner-sb', { namespace: 'ns', labels: { owner: 'z' } }));
      const dep = conversation('dep', { namespace: 'ns', labels: { owner: 'z' } });
      dep.metadata.ownerReferences = [{ apiVersion: owner.apiVersion, kind: owner.kind, name: owner.metadata.name, uid: owner.metadata.uid! }];
      await store.create(ConversationKind, dep);
      expect((await store.list(ConversationKind, 'ns', { labelSelector: 'owner=z' })).items).toHaveLength(1);
      await store.delete(SandboxKind, 'ns', 'owner-sb');
      expect((await store.list(ConversationKind, 'ns', { labelSelector: 'owner=z' })).items).toEqual([]);
      await expectIndexAgreesWithScan(store);
    });

    it('is built from the objects when a version-1 file is opened, and a newer file is refused', async () => {
      const store = make();
      await store.create(SandboxKind, sandbox('a', { namespace: 'ns', labels: { owner: 'a', tier: 'web' } }));
      await store.create(SandboxKind, sandbox('b', { namespace: 'other', labels: { owner: 'b' } }));
      await store.create(SandboxKind, sandbox('c', { namespace: 'ns' }));
      store.close();
      const raw = new Database(path);
      raw.exec(`DROP TABLE object_labels; UPDATE meta SET value = 1 WHERE key = 'schema_version'`);
      raw.close();
      const reopened = make();
      expect((await reopened.list(SandboxKind, undefined, { labelSelector: 'owner' })).items.map((o) => o.metadata.name)).toEqual(['a', 'b']);
      await expectIndexAgreesWithScan(reopened);
      reopened.close();
      const check = new Database(path);
      expect(check.prepare(`SELECT value FROM meta WHERE key = 'schema_version'`).pluck().get()).toBe(2);
      check.exec(`UPDATE meta SET value = 3 WHERE key = 'schema_version'`);
      check.close();
      expect(() => make()).toThrow(/schema version 3 is newer than this build understands \(2\)/);
    });
  });
});
