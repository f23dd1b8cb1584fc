// /api/v1/sandboxes: create, read, search, pause, resume, delete.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SandboxKind } from '../api/sandbox.ts';
import { FINALIZER_RUNTIME } from '../api/meta.ts';
import { makeSandbox, NS, setSandboxPhase, startHarness, type Harness } from './test-support.ts';

describe('sandboxes', () => {
  let h: Harness;
  beforeEach(async () => (h = await startHarness({ capacity: 2, retryAfterSeconds: 3 })));
  afterEach(() => h.close());

  it('creates a STARTING sandbox owned by the caller, and refuses past capacity with 429', async () => {
    const r = await h.call('POST', '/api/v1/sandboxes');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      created_by_user_id: h.alice.user.id,
      sandbox_spec_id: 'default',
      status: 'STARTING',
      status_detail: null,
      session_api_key: null,
      exposed_urls: null,
      created_at: '2026-03-01T10:00:00.000Z',
    });
    const sb = await h.store.get(SandboxKind, NS, r.body.id);
    expect(sb!.spec).toEqual({ owner: h.alice.user.id, paused: false });
    expect((await h.call('POST', '/api/v1/sandboxes', { key: h.bob.key })).status).toBe(200);
    const full = await h.call('POST', '/api/v1/sandboxes');
    expect(full.status).toBe(429);
    expect(full.headers.get('retry-after')).toBe('3');
    expect((await h.call('POST', '/api/v1/sandboxes?sandbox_spec_id=evil/image')).status).toBe(422);
  });

  it('shows the session key and agent server URL only to the owner and only while RUNNING', async () => {
    await makeSandbox(h.store, h.alice.user, 'sb-1', 'RUNNING', { url: 'http://127.0.0.1:8123', key: 'sk-1' });
    const [rec] = (await h.call('GET', '/api/v1/sandboxes?id=sb-1')).body;
    expect(rec).toMatchObject({ status: 'RUNNING', session_api_key: 'sk-1', exposed_urls: [{ name: 'AGENT_SERVER', url: 'http://127.0.0.1:8123', port: 8123 }] });
    expect((await h.call('GET', '/api/v1/sandboxes?id=sb-1', { key: h.bob.key })).body).toEqual([null]);
    await setSandboxPhase(h.store, 'sb-1', 'PAUSED');
    expect((await h.call('GET', '/api/v1/sandboxes?id=sb-1&id=nope')).body).toEqual([
      expect.objectContaining({ status: 'PAUSED', session_api_key: null, exposed_urls: null }),
      null,
    ]);
  });

  it('searches newest first with a stable cursor', async () => {
    for (const n of ['a', 'b', 'c']) {
      await makeSandbox(h.store, h.alice.user, `sb-${n}`, 'RUNNING');
      h.clock.advance(1000);
    }
    await makeSandbox(h.store, h.bob.user, 'sb-bob', 'RUNNING');
    const p1 = await h.call('GET', '/api/v1/sandboxes/search?limit=2');
    expect(p1.body.items.map((s: { id: string }) => s.id)).toEqual(['sb-c', 'sb-b']);
    const p2 = await h.call('GET', `/api/v1/sandboxes/search?limit=2&page_id=${p1.body.next_page_id}`);
    expect(p2.body).toEqual({ items: [expect.objectContaining({ id: 'sb-a' })], next_page_id: null });
  });

  it('pauses and resumes idempotently through spec.paused', async () => {
    await makeSandbox(h.store, h.alice.user, 'sb-1', 'RUNNING');
    const rv = async () => (await h.store.get(SandboxKind, NS, 'sb-1'))!.metadata.resourceVersion;
    expect((await h.call('POST', '/api/v1/sandboxes/sb-1/pause')).body).toEqual({ success: true });
    expect((await h.store.get(SandboxKind, NS, 'sb-1'))!.spec.paused).toBe(true);
    const before = await rv();
    expect((await h.call('POST', '/api/v1/sandboxes/sb-1/pause')).status).toBe(200);
    expect(await rv()).toBe(before);
    await setSandboxPhase(h.store, 'sb-1', 'PAUSED');
    expect((await h.call('POST', '/api/v1/sandboxes/sb-1/resume')).body).toEqual({ success: true });
    expect((await h.store.get(SandboxKind, NS, 'sb-1'))!.spec.paused).toBe(false);
    expect((await h.call('POST', '/api/v1/sandboxes/sb-1/resume')).status).toBe(200);
    expect((await h.call('POST', '/api/v1/sandboxes/sb-1/pause', { key: h.bob.key })).status).toBe(404);
  });

  it('refuses to resume ERROR (409) and deleting (410) sandboxes, and resumes only within capacity', async () => {
    await makeSandbox(h.store, h.alice.user, 'sb-err', 'ERROR');
    const err = await h.call('POST', '/api/v1/sandboxes/sb-err/resume');
    expect(err.status).toBe(409);
    expect(err.body.detail).toMatch(/ERROR/);
    const sb = await makeSandbox(h.store, h.alice.user, 'sb-del', 'RUNNING');
    await h.store.update(SandboxKind, { ...(await h.store.get(SandboxKind, NS, 'sb-del'))!, metadata: { ...sb.metadata, finalizers: [FINALIZER_RUNTIME] } });
    await h.store.delete(SandboxKind, NS, 'sb-del');
    expect((await h.call('POST', '/api/v1/sandboxes/sb-del/resume')).status).toBe(410);
    expect((await h.call('GET', '/api/v1/sandboxes?id=sb-del')).body[0].status).toBe('MISSING');

    await makeSandbox(h.store, h.alice.user, 'sb-p', 'PAUSED');
    await makeSandbox(h.store, h.bob.user, 'sb-b1', 'RUNNING'); // sb-del (deleting) and sb-err do not count
    await makeSandbox(h.store, h.bob.user, 'sb-b2', 'RUNNING');
    expect((await h.call('POST', '/api/v1/sandboxes/sb-p/resume')).status).toBe(429);
  });

  it('deletes by path id, accepts ?sandbox_id= from OpenHands clients, and repeats safely', async () => {
    await makeSandbox(h.store, h.alice.user, 'sb-1', 'RUNNING');
    await makeSandbox(h.store, h.alice.user, 'sb-2', 'RUNNING');
    expect((await h.call('DELETE', '/api/v1/sandboxes/sb-1', { key: h.bob.key })).status).toBe(404);
    expect((await h.call('DELETE', '/api/v1/sandboxes/sb-1?sandbox_id=sb-2')).status).toBe(400);
    expect((await h.call('DELETE', '/api/v1/sandboxes/sb-1')).body).toEqual({ success: true });
    expect(await h.store.get(SandboxKind, NS, 'sb-1')).toBeUndefined();
    expect((await h.call('DELETE', '/api/v1/sandboxes/%7Bid%7D?sandbox_id=sb-2')).body).toEqual({ success: true });

    const sb = await makeSandbox(h.store, h.alice.user, 'sb-3', 'RUNNING');
    await h.store.update(SandboxKind, { ...sb, metadata: { ...sb.metadata, finalizers: [FINALIZER_RUNTIME] } });
    expect((await h.call('DELETE', '/api/v1/sandboxes/sb-3')).status).toBe(200);
    expect((await h.call('DELETE', '/api/v1/sandboxes/sb-3')).status).toBe(200); // still being deleted
  });

  it('answers a repeated DELETE of a sandbox the caller deleted with 200; other ids stay 404', async () => {
    await makeSandbox(h.store, h.alice.user, 'sb-1', 'RUNNING');
    expect((await h.call('DELETE', '/api/v1/sandboxes/sb-1')).body).toEqual({ success: true });
    expect(await h.store.get(SandboxKind, NS, 'sb-1')).toBeUndefined();
    for (let i = 0; i < 2; i++) {
      expect(await h.call('DELETE', '/api/v1/sandboxes/sb-1')).toMatchObject({ status: 200, body: { success: true } });
    }
    expect((await h.call('DELETE', '/api/v1/sandboxes/%7Bid%7D?sandbox_id=sb-1')).body).toEqual({ success: true });
    // Deleted, yet never readable again: only DELETE looks at the tombstone.
    expect((await h.call('GET', '/api/v1/sandboxes?id=sb-1')).body).toEqual([null]);
    // Another user, or an id nobody owned, learns nothing.
    expect(await h.call('DELETE', '/api/v1/sandboxes/sb-1', { key: h.bob.key })).toMatchObject({ status: 404, body: { detail: 'Sandbox sb-1 not found' } });
    expect(await h.call('DELETE', '/api/v1/sandboxes/sb-never')).toMatchObject({ status: 404, body: { detail: 'Sandbox sb-never not found' } });
  });

  it('refuses pause and resume of a deleted sandbox with 410 (404 for anyone else)', async () => {
    const sb = await makeSandbox(h.store, h.alice.user, 'sb-1', 'RUNNING');
    await h.store.update(SandboxKind, { ...sb, metadata: { ...sb.metadata, finalizers: [FINALIZER_RUNTIME] } });
    expect((await h.call('DELETE', '/api/v1/sandboxes/sb-1')).status).toBe(200);
    // Being deleted (the finalizer still holds it), then gone.
    for (const stage of ['deleting', 'gone']) {
      if (stage === 'gone') {
        const cur = (await h.store.get(SandboxKind, NS, 'sb-1'))!;
        await h.store.update(SandboxKind, { ...cur, metadata: { ...cur.metadata, finalizers: [] } });
        expect(await h.store.get(SandboxKind, NS, 'sb-1')).toBeUndefined();
      }
      for (const action of ['pause', 'resume']) {
        const r = await h.call('POST', `/api/v1/sandboxes/sb-1/${action}`);
        expect(r.status, `${action} while ${stage}`).toBe(410);
        expect(r.body.detail).toMatch(new RegExp(`sb-1 .*(deleted|being deleted).*cannot be ${action}d`));
        expect((await h.call('POST', `/api/v1/sandboxes/sb-1/${action}`, { key: h.bob.key })).status).toBe(404);
      }
    }
  });
});
