// The admin console's License and Support bundle sections in a real headless Chromium (Debian's),
// against real API servers on one pair of real SQLite stores: each server is an installation with
// its own license and support receiver settings, as the chart would configure them. Licenses are
// signed with a vendor key made here (signLicense, as the vendor does) and checked against its
// public key, except the expired one (no vendor key: "unverified"). The support receiver is a
// local HTTPS server with its own CA, trusted through the CA file as an operator would.
// AGENTYARD_SCREENSHOTS=docs/screenshots keeps the screenshots there (for the README).
import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, requireChromiumForWebSuites } from '../../src/testing/chromium.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/controller/clock.ts';
import { SqliteAppStore } from '../../src/facade/db/app-db.ts';
import { startApiServer, type ApiServer } from '../../src/facade/server.ts';
import type { SupportUploadSettings } from '../../src/facade/support-bundle.ts';
import { parseLicense, signLicense, type LicenseBody } from '../../src/license/license.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { createLogger } from '../../src/util/log.ts';
import { makePki, type Pki } from '../kube/certs.ts';

const missing = requireChromiumForWebSuites();
const NS = 'default';
const DAY = 86_400_000;
const UPLOAD_TOKEN = 'upload-token-web-5f3a';
/** The id is also the chart registry password: the page must never show it whole. */
const LICENSE_ID = 'lic-web-registry-password-9c1e';
const poll = <T>(fn: () => T | Promise<T>) => expect.poll(fn, { timeout: 15_000 });

describe.skipIf(missing !== undefined)(`the admin console's license and support bundle in a browser${missing ? ` (skipped: ${missing})` : ''}`, () => {
  const dir = mkdtempSync(join(tmpdir(), 'web-license-'));
  const shots = process.env['AGENTYARD_SCREENSHOTS'] ? resolve(process.env['AGENTYARD_SCREENSHOTS']) : join(dir, 'shots');
  const vendor = generateKeyPairSync('ed25519');
  const vendorPrivate = vendor.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const vendorPublic = vendor.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  let store: SqliteStore;
  let db: SqliteAppStore;
  let pki: Pki;
  let receiver: Server;
  let receiverUrl = '';
  const received: { auth?: string; bytes: number }[] = [];
  const servers: ApiServer[] = [];
  let browser: Browser;
  let alice: { id: string; key: string };
  const pageErrors: string[] = [];

  const license = (over: Partial<LicenseBody>): LicenseBody => ({
    id: LICENSE_ID,
    email: 'ops@acme.example',
    customer: 'Acme Corp',
    issued_at: new Date(Date.now() - 100 * DAY).toISOString(),
    expires_at: new Date(Date.now() + 200 * DAY).toISOString(),
    ...over,
  });

  /** An installation: an API server on the shared stores with this license and support receiver. */
  async function installation(body: LicenseBody | undefined, supportUpload: SupportUploadSettings, opts: { verified?: boolean } = {}): Promise<ApiServer> {
    const verified = opts.verified ?? true;
    const installed = body ? parseLicense(signLicense(body, vendorPrivate), verified ? vendorPublic : undefined) : undefined;
    const server = await startApiServer({
      store,
      db,
      clock: systemClock,
      namespace: NS,
      settings: { capacity: 20, idleTimeMs: 1_800_000, deletionTimeMs: 604_800_000 },
      log: createLogger('web-license', 'silent'),
      port: 0,
      host: '127.0.0.1',
      ...(installed ? { license: installed } : {}),
      supportUpload,
    });
    servers.push(server);
    return server;
  }

  async function openConsole(server: ApiServer): Promise<Page> {
    const ctx = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    const page = await ctx.newPage();
    page.on('pageerror', (e) => pageErrors.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error' && /Content Security Policy/.test(m.text())) pageErrors.push(m.text());
    });
    await page.goto(`${server.url}/`);
    await page.fill('#api-key', alice.key);
    await page.click('button[type=submit]');
    await page.waitForSelector('#message');
    await page.goto(`${server.url}/#/admin`);
    await page.waitForSelector('#license-state');
    return page;
  }

  beforeAll(async () => {
    mkdirSync(shots, { recursive: true });
    store = new SqliteStore(join(dir, 'store.db'), { clock: systemClock });
    db = new SqliteAppStore(join(dir, 'app.db'), { clock: systemClock });
    const mk = async (name: string) => {
      const u = await db.createUser(name);
      return { id: u.id, key: await db.createApiKey(u.id) };
    };
    alice = await mk('alice');
    await mk('bob');
    await db.setUserAdmin(alice.id, true);
    pki = await makePki(dir);
    receiver = createServer({ cert: readFileSync(pki.serverCert), key: readFileSync(pki.serverKey) }, (req, res) => {
      let bytes = 0;
      req.on('data', (c: Buffer) => (bytes += c.length));
      req.on('end', () => {
        received.push({ ...(req.headers.authorization ? { auth: req.headers.authorization } : {}), bytes });
        res.writeHead(req.headers.authorization === `Bearer ${UPLOAD_TOKEN}` ? 201 : 401).end('ticket SUP-77');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    receiverUrl = `https://localhost:${(receiver.address() as AddressInfo).port}/bundles`;
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    for (const s of servers) await s.close();
    await new Promise((r) => receiver?.close(r));
    store?.close();
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a valid, verified license: licensee, seats in use, expiry, the id only masked; the bundle goes to the HTTPS receiver and the page says where', async () => {
    const server = await installation(license({ seats: 5 }), { url: receiverUrl, token: UPLOAD_TOKEN, caFile: pki.caCert });
    const page = await openConsole(server);
    expect(await page.textContent('#license-state')).toBe('Valid');
    expect(await page.textContent('#license-signature')).toBe('Signature verified');
    expect(await page.textContent('#license-details .licensee')).toBe('Acme Corp (ops@acme.example)');
    expect(await page.textContent('#license-details .license-id')).toBe('…9c1e');
    expect(await page.textContent('#license-details .seats')).toBe('2 of 5 in use');
    expect(await page.textContent('#license-details .expires')).toMatch(/\(199 days left\)|\(200 days left\)/);
    expect(await page.$('#license-expired')).toBeNull();
    expect(await page.content()).not.toContain(LICENSE_ID);

    const before = received.length;
    await page.click('#upload-bundle');
    await page.waitForSelector('#bundle-result');
    const text = (await page.textContent('#bundle-result'))!;
    expect(received).toHaveLength(before + 1);
    const got = received.at(-1)!;
    expect(got.auth).toBe(`Bearer ${UPLOAD_TOKEN}`);
    expect(text).toContain(`Uploaded to ${receiverUrl}`);
    expect(text).toContain(`(${got.bytes} bytes), 5 files; the receiver answered 201`);
    expect(text).toContain('ticket SUP-77');
    expect(await page.content()).not.toContain(UPLOAD_TOKEN);
    await page.screenshot({ path: join(shots, 'admin-license.png'), fullPage: true, clip: await sectionsBox(page) });
    expect(pageErrors).toEqual([]);
    await page.context().close();
  });

  it('an expired, unverified license is a clear warning (new conversations refused, data kept); with no receiver configured the button shows the 409 saying what to set', async () => {
    const server = await installation(license({ issued_at: new Date(Date.now() - 400 * DAY).toISOString(), expires_at: new Date(Date.now() - 3 * DAY).toISOString() }), {}, { verified: false });
    const page = await openConsole(server);
    expect(await page.textContent('#license-state')).toBe('Expired');
    expect(await page.textContent('#license-signature')).toBe('Unverified');
    const warning = (await page.textContent('#license-expired'))!;
    expect(warning).toMatch(/New conversations and sandboxes are refused/);
    expect(warning).toMatch(/Nothing is deleted: existing conversations, transcripts and downloads are kept/);
    expect(await page.textContent('#license-details .seats')).toBe('2 users enabled (no seat limit)');
    // The API refuses a new sandbox as the warning says.
    const refused = await fetch(`${server.url}/api/v1/sandboxes`, { method: 'POST', headers: { authorization: `Bearer ${alice.key}` } });
    expect(refused.status).toBe(403);
    expect(await refused.text()).toMatch(/expired/);

    const before = received.length;
    await page.click('#upload-bundle');
    await page.waitForSelector('#bundle-error');
    expect(await page.getAttribute('#bundle-error', 'data-status')).toBe('409');
    expect(await page.textContent('#bundle-error')).toMatch(/Support upload is not configured\..*No support upload URL is configured: set support\.uploadUrl/);
    expect(received).toHaveLength(before);
    expect(await page.content()).not.toContain(LICENSE_ID);
    await page.screenshot({ path: join(shots, 'admin-license-expired.png'), fullPage: true, clip: await sectionsBox(page) });
    expect(pageErrors).toEqual([]);
    await page.context().close();
  });

  it('a license about to end is "expiring soon", seats over the limit are marked; a receiver refusing the token is the 502 shown as refused', async () => {
    const server = await installation(license({ expires_at: new Date(Date.now() + 10 * DAY + 3_600_000).toISOString(), seats: 1 }), { url: receiverUrl, token: 'wrong-token-0000', caFile: pki.caCert });
    const page = await openConsole(server);
    expect(await page.textContent('#license-state')).toBe('Expiring soon');
    expect(await page.textContent('#license-details .seats')).toBe('2 of 1 in use over the limit');
    await page.click('#upload-bundle');
    await page.waitForSelector('#bundle-error');
    expect(await page.getAttribute('#bundle-error', 'data-status')).toBe('502');
    const text = (await page.textContent('#bundle-error'))!;
    expect(text).toMatch(/The support receiver refused the upload\..*401/);
    expect(text).not.toContain('wrong-token-0000');
    expect(pageErrors).toEqual([]);
    await page.context().close();
  });
});

/** The License and Support bundle cards together, for a screenshot of just them. */
async function sectionsBox(page: Page): Promise<{ x: number; y: number; width: number; height: number }> {
  const a = (await page.locator('#license').boundingBox())!;
  const b = (await page.locator('#support-bundle').boundingBox())!;
  const pad = 12;
  return { x: Math.max(0, a.x - pad), y: Math.max(0, a.y - pad), width: a.width + 2 * pad, height: b.y + b.height - a.y + 2 * pad };
}
