// /api/v1/warm-pools over HTTP against the running API on a SQLite store, and capacity admission
// with warm-pool members: they count as sandboxes, and a start that a ready member can serve is
// admitted even at capacity (its claim takes no new slot).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { API_VERSION } from '../api/meta.ts';
import { SandboxKind } from '../api/sandbox.ts';
import { LABEL_WARM_POOL, SandboxWarmPoolKind } from '../api/warm-pool.ts';
import { startHarness, type Harness } from './test-support.ts';

describe('warm pools through the API', () => {
  let h: Harness;
  beforeEach(async () => (h = await startHarness({ capacity: 2 })));
  afterEach(() => h.close());

  it('only administrators manage warm pools', async () => {
    expect(await h.call('GET', '/api/v1/warm-pools')).toMatchObject({ status: 403, body: { detail: 'Only administrators manage warm pools' } });
    expect((await h.call('POST', '/api/v1/warm-pools', { body: { name: 'p', replicas: 1 } })).status).toBe(403);
    expect((await h.call('DELETE', '/api/v1/warm-pools/p')).status).toBe(403);
    expect((await h.store.list(SandboxWarmPoolKind, 'default')).items).toEqual([]);
  });

  it('creates, lists, changes and deletes a pool: the same SandboxWarmPool resource kubectl shows', async () => {
    await h.db.setUserAdmin(h.alice.user.id, true);
    const created = await h.call('POST', '/api/v1/warm-pools', { body: { name: 'py', replicas: 2, template: { resources: { cpu: '2' } } } });
    expect(created).toMatchObject({ status: 201, body: { name: 'py', replicas: 2, template: { resources: { cpu: '2' } }, ready: 0, status: 'PENDING' } });
    const stored = (await h.store.get(SandboxWarmPoolKind, 'default', 'py'))!;
    expect(stored.spec).toEqual({ replicas: 2, template: { resources: { cpu: '2' } } });
    expect((await h.call('POST', '/api/v1/warm-pools', { body: { name: 'py', replicas: 1 } })).status).toBe(409);

    // What the controller reports shows through.
    await h.store.updateStatus(SandboxWarmPoolKind, { ...stored, status: { observedGeneration: 1, replicas: 2, readyReplicas: 2, claimed: 3, conditions: [{ type: 'Ready', status: 'True', reason: 'PoolFilled', message: '2 of 2 members ready', lastTransitionTime: '2026-03-01T10:00:00Z', observedGeneration: 1 }] } });
    expect((await h.call('GET', '/api/v1/warm-pools')).body.items).toEqual([expect.objectContaining({ name: 'py', ready: 2, members: 2, claimed: 3, status: 'FILLED', message: '2 of 2 members ready' })]);

    const patched = await h.call('PATCH', '/api/v1/warm-pools/py', { body: { replicas: 5 } });
    expect(patched).toMatchObject({ status: 200, body: { replicas: 5, template: { resources: { cpu: '2' } }, status: 'PENDING' } });
    expect((await h.call('PATCH', '/api/v1/warm-pools/nope', { body: { replicas: 1 } })).status).toBe(404);

    expect(await h.call('DELETE', '/api/v1/warm-pools/py')).toMatchObject({ status: 200, body: { success: true } });
    expect(await h.store.get(SandboxWarmPoolKind, 'default', 'py')).toBeUndefined();
    expect((await h.call('GET', '/api/v1/warm-pools/py')).status).toBe(404);
  });

  it('answers 422 with field paths for bad input', async () => {
    await h.db.setUserAdmin(h.alice.user.id, true);
    const bad = await h.call('POST', '/api/v1/warm-pools', { body: { name: 'Not_A_Name', replicas: 1000, template: { image: 'has space', gpu: 1 } } });
    expect(bad.status).toBe(422);
    const locs = (bad.body.detail as { loc: (string | number)[] }[]).map((i) => i.loc.join('.'));
    expect(locs).toEqual(expect.arrayContaining(['body.name', 'body.replicas', 'body.template.image']));
    expect((await h.call('PATCH', '/api/v1/warm-pools/py', { body: { replicas: -1 } })).body.detail[0].loc).toEqual(['body', 'replicas']);
  });

  it('counts members against capacity, and admits a start that a ready member can serve', async () => {
    const pool = await h.store.create(SandboxWarmPoolKind, { apiVersion: API_VERSION, kind: 'SandboxWarmPool', metadata: { name: 'p', namespace: 'default' }, spec: { replicas: 2 } });
    const members = [];
    for (const name of ['p-a', 'p-b']) {
      const sb = await h.store.create(SandboxKind, { apiVersion: API_VERSION, kind: 'Sandbox', metadata: { name, namespace: 'default', labels: { [LABEL_WARM_POOL]: 'p' }, ownerReferences: [{ apiVersion: API_VERSION, kind: 'SandboxWarmPool', name: 'p', uid: pool.metadata.uid! }] }, spec: { paused: false } });
      members.push(sb);
    }
    // Both slots held by starting members: a sandbox of one's own is refused, and so is a start nobody can serve yet.
    expect((await h.call('POST', '/api/v1/sandboxes')).status).toBe(429);
    expect((await h.call('POST', '/api/v1/app-conversations', { body: {} })).status).toBe(429);
    await h.store.updateStatus(SandboxKind, { ...members[0]!, status: { phase: 'RUNNING', url: 'http://127.0.0.1:1' } });
    expect((await h.call('POST', '/api/v1/app-conversations', { body: {} })).status).toBe(200);
    expect((await h.call('POST', '/api/v1/sandboxes')).status).toBe(429);
  });
});
