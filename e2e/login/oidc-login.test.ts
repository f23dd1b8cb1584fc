// OpenID Connect login against a REAL identity provider: Keycloak (hack/keycloak.sh, from Maven
// Central) with a realm of two users, alice (in the admin group) and bob, driven by a real headless
// Chromium through Keycloak's own login form. The facade runs in this process over real HTTP with
// real SQLite and a manual clock (session expiry moves the clock, no sleeping). Cases: wrong password
// (Keycloak says so, no session), login (user created with its role, cookie flags), the session
// authenticates the app's API calls and its state-changing ones need the CSRF token, bob cannot reach
// alice's conversation (404) nor an admin-only route (403), idle expiry (the app says the session
// ended), a disabled user cannot log in, logout (the cookie is dead, and the Keycloak session too),
// API keys still work.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { DateTime } from 'luxon';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { chromiumMissing, launchChromium } from '../../src/testing/chromium.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConversationKind } from '../../src/api/conversation.ts';
import { ManualClock } from '../../src/controller/clock.ts';
import { SqliteAppStore } from '../../src/facade/db/app-db.ts';
import type { LoginSettings } from '../../src/facade/login/config.ts';
import { SESSION_COOKIE } from '../../src/facade/login/session.ts';
import { startApiServer, type ApiServer } from '../../src/facade/server.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { createLogger } from '../../src/util/log.ts';
import { startScriptedLlm, type ScriptedLlm } from '../../src/testing/scripted-llm/server.ts';
import { scriptedModelEnv, startService, removeDataDir, type RunningService } from '../embedded/harness.ts';
import { freePort } from '../kube/processes.ts';
import { agentyardRealm, keycloakWrapper, startKeycloak, type Keycloak } from './keycloak.ts';

const required = process.env['AGENTYARD_REQUIRE_CLUSTER_TESTS'] === '1';
const kc = keycloakWrapper();
const missing = !('path' in kc) ? kc.missing : chromiumMissing;
if (missing && required) throw new Error(`the OIDC login suite needs Keycloak and Chromium: ${missing} (make test installs both)`);

const ADMIN_GROUP = 'agentyard-admins';
const PASSWORDS = { alice: randomBytes(9).toString('base64url'), bob: randomBytes(9).toString('base64url') };

describe.skipIf(missing !== undefined)(`OpenID Connect login with Keycloak in a browser${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let idp: Keycloak;
  let dir: string;
  let store: SqliteStore;
  let db: SqliteAppStore;
  let server: ApiServer;
  let browser: Browser;
  let adminKey: string;
  let upPort: number;
  let up: RunningService | undefined;
  let llm: ScriptedLlm | undefined;
  const clock = new ManualClock(DateTime.utc());
  const login: LoginSettings = {
    issuer: '', // set once Keycloak listens
    clientId: 'agentyard',
    clientSecret: randomBytes(16).toString('hex'),
    roleClaim: 'groups',
    adminGroup: ADMIN_GROUP,
    scopes: 'openid profile email',
    sessionMaxAgeMs: 8 * 3600_000,
    sessionIdleMs: 3600_000,
  };
  // AGENTYARD_SCREENSHOTS=docs/screenshots keeps a screenshot of each login page there (for the README).
  const shots = process.env['AGENTYARD_SCREENSHOTS'] ? resolve(process.env['AGENTYARD_SCREENSHOTS']) : undefined;
  const shot = async (page: Page, name: string) => {
    if (shots) await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
  };
  const contexts: Record<'alice' | 'bob', { ctx: BrowserContext; page: Page } | undefined> = { alice: undefined, bob: undefined };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'oidc-login-'));
    store = new SqliteStore(join(dir, 'store.db'), { clock });
    db = new SqliteAppStore(join(dir, 'app.db'), { clock });
    await db.createUser('admin', 'admin');
    await db.setUserAdmin('admin', true);
    adminKey = await db.createApiKey('admin');
    idp = await startKeycloak((kc as { path: string }).path);
    login.issuer = `${idp.url}/realms/agentyard`;
    server = await startApiServer({ store, db, clock, namespace: 'default', settings: { capacity: 10 }, log: createLogger('oidc-login-test'), port: 0, host: '127.0.0.1', login });
    login.publicUrl = server.url;
    upPort = await freePort();
    await idp.createRealm(agentyardRealm({ publicUrls: [server.url, `http://127.0.0.1:${upPort}`], clientSecret: login.clientSecret!, passwords: PASSWORDS, adminGroup: ADMIN_GROUP }));
    browser = await launchChromium();
  }, 420_000);

  afterAll(async () => {
    await up?.stop();
    await llm?.close();
    if (up) removeDataDir(up.dataDir);
    await browser?.close();
    await server?.close();
    await idp?.stop();
    store?.close();
    await db?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function pageFor(name: 'alice' | 'bob'): Promise<Page> {
    if (!contexts[name]) {
      const ctx = await browser.newContext({ viewport: { width: 1100, height: 760 } });
      contexts[name] = { ctx, page: await ctx.newPage() };
    }
    return contexts[name].page;
  }

  /** From the app's sign-in card through Keycloak's own login form. */
  async function signIn(page: Page, name: 'alice' | 'bob', password: string): Promise<void> {
    await page.goto(`${server.url}/`);
    await page.waitForSelector('#oidc-login');
    if (name === 'alice') await shot(page, 'login-sign-in');
    await page.click('#oidc-login');
    await page.waitForSelector('#username', { timeout: 60_000 });
    expect(page.url().startsWith(`${idp.url}/realms/agentyard/protocol/openid-connect/auth?`)).toBe(true);
    const params = new URL(page.url()).searchParams;
    expect(params.get('code_challenge_method')).toBe('S256');
    expect(params.get('response_type')).toBe('code');
    await page.fill('#username', name);
    await page.fill('#password', password);
    await page.click('#kc-login');
  }

  const sessionCookie = async (ctx: BrowserContext) => (await ctx.cookies(server.url)).find((c) => c.name === SESSION_COOKIE);
  /** A call from the page, as the app's own code would make it (cookie; CSRF token only if given). */
  const fromPage = (page: Page, method: string, path: string, opts: { body?: unknown; csrf?: string } = {}) =>
    page.evaluate(
      async ({ method, path, body, csrf }) => {
        const res = await fetch(path, {
          method,
          headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(csrf ? { 'x-csrf-token': csrf } : {}) },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        return { status: res.status, body: (await res.json().catch(() => null)) as any };
      },
      { method, path, body: opts.body, csrf: opts.csrf },
    );
  const csrfOf = async (page: Page) => (await fromPage(page, 'GET', '/auth/session')).body.csrf_token as string;

  it('a wrong password: Keycloak says so on its form, and no session is made', async () => {
    const page = await pageFor('alice');
    await signIn(page, 'alice', 'not-the-password');
    await expect.poll(() => page.textContent('body'), { timeout: 30_000 }).toContain('Invalid username or password');
    await shot(page, 'login-keycloak-wrong-password');
    expect(page.url().startsWith(idp.url)).toBe(true);
    expect(await sessionCookie(contexts.alice!.ctx)).toBeUndefined();
    expect(await db.countUsers()).toBe(1);
  });

  it('a good login creates the user with its role from the group claim, and signs the app in with an httpOnly, SameSite=Lax cookie', async () => {
    const page = await pageFor('alice');
    await page.fill('#password', PASSWORDS.alice);
    await page.click('#kc-login');
    await page.waitForURL(`${server.url}/`, { timeout: 60_000 });
    await page.waitForSelector('#message', { timeout: 30_000 });
    await expect.poll(() => page.textContent('header')).toContain('Sign out');

    const users = await db.listUsers();
    const alice = users.find((u) => u.name === 'Alice Tester');
    expect(alice).toMatchObject({ admin: true, disabled_at: null });
    const cookie = (await sessionCookie(contexts.alice!.ctx))!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', secure: false, path: '/' });
    // Not readable by the page's script.
    expect(await page.evaluate("document.cookie")).not.toContain(SESSION_COOKIE);
    // The session authenticates the API the app uses; alice is an administrator.
    expect((await fromPage(page, 'GET', '/api/v1/users/me')).body).toMatchObject({ id: alice!.id });
    expect((await fromPage(page, 'GET', '/api/v1/usage/users')).status).toBe(200);
  });

  it('a state-changing request with the cookie but without the CSRF token is refused (403); the app\'s own request carries it', async () => {
    const page = await pageFor('alice');
    const refused = await fromPage(page, 'POST', '/api/v1/settings', { body: { sandbox_grouping_strategy: 'ADD_TO_ANY' } });
    expect(refused).toEqual({ status: 403, body: { detail: expect.stringContaining('X-CSRF-Token') } });
    expect((await fromPage(page, 'POST', '/api/v1/settings', { body: { sandbox_grouping_strategy: 'ADD_TO_ANY' }, csrf: 'forged' })).status).toBe(403);

    // A new conversation through the app's form: its POST goes out with the token.
    await page.fill('#message', 'Hello from an OIDC session');
    await page.click('form[aria-labelledby=new-title] button[type=submit]');
    await expect.poll(async () => (await store.list(ConversationKind, 'default')).items.length, { timeout: 30_000 }).toBe(1);
  });

  it('bob logs in as a plain user: alice\'s conversation is 404 to him, an admin-only route 403', async () => {
    const page = await pageFor('bob');
    await signIn(page, 'bob', PASSWORDS.bob);
    await page.waitForURL(`${server.url}/`, { timeout: 60_000 });
    await page.waitForSelector('#message', { timeout: 30_000 });
    const bob = (await db.listUsers()).find((u) => u.name === 'Bob Tester');
    expect(bob).toMatchObject({ admin: false });

    const target = (await store.list(ConversationKind, 'default')).items[0]!.metadata.name;
    const csrf = await csrfOf(page);
    expect((await fromPage(page, 'GET', `/api/v1/app-conversations?ids=${target}`)).body).toEqual([null]);
    expect((await fromPage(page, 'GET', `/api/v1/conversation/${target}/events/search`)).status).toBe(404);
    expect((await fromPage(page, 'PATCH', `/api/v1/app-conversations/${target}`, { body: { title: 'mine now' }, csrf })).status).toBe(404);
    const admin = await fromPage(page, 'GET', '/api/v1/usage/users');
    expect(admin.status).toBe(403);
    expect(admin.body.detail).toContain('Only administrators');
  });

  it('logout ends the session here and at Keycloak: the old cookie no longer works', async () => {
    const page = await pageFor('alice');
    await page.goto(`${server.url}/`);
    await page.waitForSelector('#message', { timeout: 30_000 });
    const old = (await sessionCookie(contexts.alice!.ctx))!;
    await page.click('header button:text-is("Sign out")');
    // RP-initiated logout: through Keycloak's end-session endpoint and back to the app.
    await page.waitForURL(`${server.url}/`, { timeout: 60_000 });
    await page.waitForSelector('#oidc-login', { timeout: 30_000 });
    expect(await sessionCookie(contexts.alice!.ctx)).toBeUndefined();
    const replay = await fetch(`${server.url}/api/v1/users/me`, { headers: { cookie: `${SESSION_COOKIE}=${old.value}` } });
    expect(replay.status).toBe(401);
    // Keycloak's own session is gone too: signing in asks for the password again.
    await page.click('#oidc-login');
    await page.waitForSelector('#password', { timeout: 60_000 });
  });

  it('an idle session expires: the API answers 401 and the app asks to sign in again', async () => {
    const page = await pageFor('bob');
    clock.advance(login.sessionIdleMs + 1000);
    expect((await fromPage(page, 'GET', '/api/v1/users/me')).status).toBe(401);
    expect(await sessionCookie(contexts.bob!.ctx)).toBeUndefined();
    // The conversation list refreshes every 2 s: its next call meets the 401.
    await expect.poll(() => page.textContent('#api-key-error').catch(() => null), { timeout: 15_000 }).toContain('session has ended');
    expect(await page.$('#oidc-login')).not.toBeNull();
    await shot(page, 'login-session-ended');
  });

  it('a disabled user cannot log in', async () => {
    const page = await pageFor('bob');
    const bob = (await db.listUsers()).find((u) => u.name === 'Bob Tester')!;
    await db.setUserDisabled(bob.id, true);
    // Keycloak still has bob's session: it sends him straight back, and the callback refuses him.
    await page.click('#oidc-login');
    await expect.poll(() => page.textContent('#error').catch(() => null), { timeout: 60_000 }).toContain('disabled');
    await shot(page, 'login-account-disabled');
    expect(await sessionCookie(contexts.bob!.ctx)).toBeUndefined();
    await db.setUserDisabled(bob.id, false);
  });

  it('agentyard up, configured by its environment, signs alice in through the same Keycloak; her live transcript comes over the relay with the cookie session', async () => {
    llm = await startScriptedLlm();
    up = await startService({
      port: upPort,
      env: { ...scriptedModelEnv(llm), AGENTYARD_OIDC_ISSUER: login.issuer, AGENTYARD_OIDC_CLIENT_ID: login.clientId, AGENTYARD_OIDC_CLIENT_SECRET: login.clientSecret!, AGENTYARD_OIDC_ADMIN_GROUP: ADMIN_GROUP },
    });
    expect(up.url).toBe(`http://127.0.0.1:${upPort}`);
    expect(up.output.join('\n')).toContain(`Sign-in: OpenID Connect at ${login.issuer} (redirect URI ${up.url}/auth/callback), or with an API key`);
    const isolated = up.output.some((l) => l.startsWith('sandbox isolation: on'));
    const ctx = await browser.newContext({ viewport: { width: 1100, height: 760 } });
    try {
      const page = await ctx.newPage();
      await page.goto(`${up.url}/`);
      await page.click('#oidc-login');
      await page.waitForSelector('#username', { timeout: 60_000 });
      await page.fill('#username', 'alice');
      await page.fill('#password', PASSWORDS.alice);
      await page.click('#kc-login');
      if (!isolated) {
        // Without sandbox isolation `up` serves its one user (admin) only: a second is refused, saying why.
        await expect.poll(() => page.textContent('#error').catch(() => null), { timeout: 60_000 }).toContain('serves one user only');
        return;
      }
      await page.waitForSelector('#message', { timeout: 60_000 });
      const { body } = await up.api<{ items: { name: string; admin: boolean }[] }>('GET', '/api/v1/users');
      expect(body.items).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'Alice Tester', admin: true })]));

      // The relay of the conversation's events, as the app opens it: the session cookie goes with
      // the upgrade, the first frame shows the session's CSRF token, and no key is anywhere.
      const sent: string[] = [];
      const received: string[] = [];
      page.on('websocket', (ws) => {
        ws.on('framesent', (f) => sent.push(String(f.payload)));
        ws.on('framereceived', (f) => received.push(String(f.payload)));
      });
      llm.push(
        { content: 'Working in the sandbox.', toolCalls: [{ name: 'terminal', arguments: { command: 'echo hello-over-the-session | tee proof.txt' } }] },
        { toolCalls: [{ name: 'finish', arguments: { message: 'Done.' } }] },
      );
      await page.fill('#message', 'Say hello over the session');
      await page.click('form[aria-labelledby=new-title] button[type=submit]');
      await page.waitForURL(/#\/c\/[0-9a-f]{32}$/, { timeout: 60_000 });
      await expect.poll(() => page.textContent('#feed-state'), { timeout: 120_000 }).toBe('live');
      await expect
        .poll(() => page.locator('.ev.action:has(code.tool:text-is("terminal")) .result.observation').allTextContents(), { timeout: 120_000 })
        .toEqual([expect.stringContaining('hello-over-the-session')]);
      const csrf = await page.evaluate(`fetch('/auth/session').then((r) => r.json()).then((s) => s.csrf_token)`);
      expect(JSON.parse(sent[0]!)).toEqual({ type: 'auth', csrf_token: csrf });
      expect(sent.join('\n')).not.toContain('api_key');
      // A follow-up's events reach the page only over this socket (the history was read before them).
      const before = received.length;
      llm.push({ content: 'Hello again over the session.', toolCalls: [{ name: 'finish', arguments: { message: 'Answered.' } }] });
      await page.fill('#followup', 'Once more');
      await page.click('.followup button[type=submit]');
      await expect.poll(() => page.textContent('#transcript'), { timeout: 60_000 }).toContain('Hello again over the session.');
      expect(received.slice(before).some((f) => f.includes('Hello again over the session.'))).toBe(true);
    } finally {
      await ctx.close();
    }
  }, 300_000);

  it('API keys keep working for the API beside OIDC login', async () => {
    const res = await fetch(`${server.url}/api/v1/users/me`, { headers: { authorization: `Bearer ${adminKey}` } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { id: string }).id).toBe('admin');
  });
});
