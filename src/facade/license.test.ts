// The installed license through the API: administrators read it; an expired one refuses new
// conversations and sandboxes with a message, and nothing else — existing data stays readable.
import { generateKeyPairSync } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { parseLicense, signLicense } from '../license/license.ts';
import { setStartTask, startConversationId, startHarness, type Harness } from './test-support.ts';

const vendor = generateKeyPairSync('ed25519');
const license = parseLicense(
  signLicense({ id: 'lic-registry-password-9f3a', email: 'ops@acme.example', customer: 'Acme', issued_at: '2026-01-01T00:00:00Z', expires_at: '2026-03-02T10:00:00Z', seats: 5 }, vendor.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()),
  vendor.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
);

describe('the license in the API', () => {
  let h: Harness;
  afterEach(() => h.close());

  it('GET /api/v1/admin/license shows it to administrators only, never the whole id', async () => {
    h = await startHarness({}, { license });
    await h.db.setUserAdmin(h.alice.user.id, true);
    const r = await h.call('GET', '/api/v1/admin/license');
    expect(r.status).toBe(200);
    // The harness clock stands at 2026-03-01T10:00Z: one day left; alice and bob are the users.
    expect(r.body).toMatchObject({ status: 'valid', customer: 'Acme', email: 'ops@acme.example', license_id: '…9f3a', days_left: 1, seats: 5, seats_used: 2, seats_exceeded: false, signature: 'verified' });
    expect(JSON.stringify(r.body)).not.toContain('lic-registry-password');
    expect((await h.call('GET', '/api/v1/admin/license', { key: h.bob.key })).status).toBe(403);
  });

  it('expired: new conversations and sandboxes are refused with the reason; what exists stays readable and deletable', async () => {
    h = await startHarness({}, { license });
    await h.db.setUserAdmin(h.alice.user.id, true);
    const id = await startConversationId(h);
    await setStartTask(h.store, id, 'READY', 'sb-1');
    h.clock.advance(2 * 86_400_000); // past expires_at
    for (const [path, body] of [['/api/v1/app-conversations', {}], ['/api/v1/app-conversations/stream-start', {}], ['/api/v1/sandboxes', undefined]] as const) {
      const r = await h.call('POST', path, body === undefined ? {} : { body });
      expect(r.status, path).toBe(403);
      expect(r.body.detail).toMatch(/^The agentyard license of Acme \(…9f3a\) expired on 2026-03-02T10:00:00Z: new conversations and sandboxes cannot be started\. Existing conversations, transcripts and downloads stay available/);
    }
    expect((await h.call('GET', `/api/v1/app-conversations?ids=${id}`)).body[0]).toMatchObject({ id });
    expect((await h.call('GET', `/api/v1/app-conversations/${id}/download`)).status).toBe(200);
    expect((await h.call('GET', '/api/v1/admin/license')).body).toMatchObject({ status: 'expired', days_left: -1 });
    expect((await h.call('DELETE', `/api/v1/app-conversations/${id}`)).status).toBe(200);
  });

  it('unlicensed (no license installed): nothing is refused', async () => {
    h = await startHarness();
    await h.db.setUserAdmin(h.alice.user.id, true);
    expect((await h.call('GET', '/api/v1/admin/license')).body).toMatchObject({ status: 'unlicensed', seats_exceeded: false });
    expect((await h.call('POST', '/api/v1/app-conversations', { body: {} })).status).toBe(200);
  });
});
