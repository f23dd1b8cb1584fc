// POST /api/v1/admin/support-bundle against a local HTTPS receiver (its own CA, trusted through the
// CA file as an operator would): the bundle arrives with the token, holds the installation's
// resources, and none of the secrets this installation has.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makePki, type Pki } from '../../e2e/kube/certs.ts';
import { generateKeyPairSync } from 'node:crypto';
import { parseLicense, signLicense } from '../license/license.ts';
import { setStartTask, startConversationId, startHarness, type Harness } from './test-support.ts';

const run = promisify(execFile);
const UPLOAD_TOKEN = 'upload-token-7c1d9e';
const LICENSE_ID = 'lic-registry-password-4b2e';
const USER_SECRET = 'ghp_userSecretValue0123456789';

describe('the admin support-bundle upload', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bundle-route-'));
  let pki: Pki;
  let receiver: Server;
  let url = '';
  const received: { auth?: string; body: Buffer }[] = [];
  const open: Harness[] = [];

  beforeAll(async () => {
    pki = await makePki(dir);
    receiver = createServer({ cert: readFileSync(pki.serverCert), key: readFileSync(pki.serverKey) }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ ...(req.headers.authorization ? { auth: req.headers.authorization } : {}), body: Buffer.concat(chunks) });
        res.writeHead(req.headers.authorization === `Bearer ${UPLOAD_TOKEN}` ? 201 : 401).end('ticket SUP-42');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    url = `https://localhost:${(receiver.address() as AddressInfo).port}/bundles`;
  });
  afterEach(async () => {
    for (const h of open.splice(0)) await h.close();
  });
  afterAll(async () => {
    await new Promise((r) => receiver.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  async function installation(supportUpload: { url?: string; token?: string; caFile?: string }) {
    const vendor = generateKeyPairSync('ed25519');
    const license = parseLicense(signLicense({ id: LICENSE_ID, email: 'ops@acme.example', customer: 'Acme', issued_at: '2026-01-01T00:00:00Z', expires_at: '2027-01-01T00:00:00Z' }, vendor.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()));
    const h = await startHarness({}, { license, supportUpload });
    open.push(h);
    await h.db.setUserAdmin(h.alice.user.id, true);
    const id = await startConversationId(h, { secrets: { GITHUB_TOKEN: USER_SECRET } });
    await setStartTask(h.store, id, 'READY', 'sb-1');
    return { h, id };
  }

  it('uploads a redacted bundle with the token: resources inside, no secret of the installation', async () => {
    const { h, id } = await installation({ url, token: UPLOAD_TOKEN, caFile: pki.caCert });
    const r = await h.call('POST', '/api/v1/admin/support-bundle');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ uploaded_to: url, status: 201, attempts: 1, receipt: 'ticket SUP-42' });
    expect(r.body.files).toEqual(['conversations.json', 'installation.json', 'sandboxes.json', 'users.json', 'versions.json']);
    const got = received.at(-1)!;
    expect(got.auth).toBe(`Bearer ${UPLOAD_TOKEN}`);
    expect(got.body.length).toBe(r.body.bytes);

    const out = join(dir, `unpacked-${Date.now()}`);
    mkdirSync(out);
    writeFileSync(join(out, 'b.tar.gz'), got.body);
    await run('tar', ['-xzf', 'b.tar.gz'], { cwd: out });
    const root = join(out, 'agentyard-support');
    const text = readdirSync(root).map((f) => readFileSync(join(root, f), 'utf8')).join('\n');
    expect(text).toContain(id); // the conversation is there
    expect(JSON.parse(readFileSync(join(root, 'installation.json'), 'utf8')).license).toMatchObject({ customer: 'Acme', license_id: '…4b2e' });
    for (const secret of [UPLOAD_TOKEN, LICENSE_ID, USER_SECRET, h.alice.key, h.bob.key]) expect(text, 'a secret in the bundle').not.toContain(secret);
    // Nor in the answer the admin console gets.
    expect(JSON.stringify(r.body)).not.toContain(UPLOAD_TOKEN);
  });

  it('says what to configure when there is no receiver or token, and is for administrators only', async () => {
    const { h } = await installation({});
    let r = await h.call('POST', '/api/v1/admin/support-bundle');
    expect(r.status).toBe(409);
    expect(r.body.detail).toMatch(/No support upload URL is configured: set support\.uploadUrl/);
    expect((await h.call('POST', '/api/v1/admin/support-bundle', { key: h.bob.key })).status).toBe(403);
    const again = await installation({ url });
    r = await again.h.call('POST', '/api/v1/admin/support-bundle');
    expect(r.status).toBe(409);
    expect(r.body.detail).toMatch(/No support upload token is configured: create the Secret agentyard-support-upload/);
  });

  it('a receiver that refuses the token or whose certificate is not trusted: 502 saying why, no token in it', async () => {
    const { h } = await installation({ url, token: 'wrong-token-0000', caFile: pki.caCert });
    let r = await h.call('POST', '/api/v1/admin/support-bundle');
    expect(r.status).toBe(502);
    expect(r.body.detail).toMatch(/refused with 401.*upload token was not accepted/);
    expect(r.body.detail).not.toContain('wrong-token-0000');
    const untrusted = await installation({ url, token: UPLOAD_TOKEN });
    r = await untrusted.h.call('POST', '/api/v1/admin/support-bundle');
    expect(r.status).toBe(502);
    expect(r.body.detail).toMatch(/certificate is not trusted/);
  });
});
