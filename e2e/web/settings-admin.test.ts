// Settings, Settings > Skills and the admin console in a real headless Chromium (Debian's), against
// the real API server on real SQLite stores, with the controller running (its runtime a fake: no
// agent runs here, sandboxes only need to reach RUNNING). Two users: alice, an administrator, and
// bob, who is not. Every form's 422 is shown beside its field; bob gets the 403 page.
// AGENTYARD_SCREENSHOTS=docs/screenshots keeps a screenshot of each page there (for the README).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, requireChromiumForWebSuites } from '../../src/testing/chromium.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SandboxKind } from '../../src/api/sandbox.ts';
import { SANDBOX_CONFIGURATION_NAME, SandboxConfigurationKind } from '../../src/api/sandbox-configuration.ts';
import { systemClock } from '../../src/controller/clock.ts';
import { createController } from '../../src/controller/embedded.ts';
import type { Controller } from '../../src/controller/manager.ts';
import { FakeRuntime } from '../../src/controller/testing/fake-runtime.ts';
import { SqliteAppStore } from '../../src/facade/db/app-db.ts';
import { startApiServer, type ApiServer } from '../../src/facade/server.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { startGitHttpServer, type GitHttpServer } from '../../src/testing/git-http/server.ts';
import { createLogger } from '../../src/util/log.ts';

const missing = requireChromiumForWebSuites();
const NS = 'default';
/** expect.poll with room for a loaded machine (its default is one second; listing a marketplace clones it). */
const poll = <T>(fn: () => T | Promise<T>, opts: { timeout?: number } = {}) => expect.poll(fn, { timeout: 15_000, ...opts });

describe.skipIf(missing !== undefined)(`Settings and the admin console in a browser${missing ? ` (skipped: ${missing})` : ''}`, () => {
  const dir = mkdtempSync(join(tmpdir(), 'web-settings-'));
  const shots = process.env['AGENTYARD_SCREENSHOTS'] ? resolve(process.env['AGENTYARD_SCREENSHOTS']) : join(dir, 'shots');
  let store: SqliteStore;
  let db: SqliteAppStore;
  let server: ApiServer;
  let controller: Controller;
  let git: GitHttpServer;
  let browser: Browser;
  let page: Page;
  let alice: { id: string; key: string };
  let bob: { id: string; key: string };
  const pageErrors: string[] = [];
  const shot = (p: Page, name: string) => p.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
  const call = async (key: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${server.url}/api/v1${path}`, { method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}) });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  async function signIn(p: Page, key: string): Promise<void> {
    await p.goto(`${server.url}/`);
    await p.fill('#api-key', key);
    await p.click('button[type=submit]');
    await p.waitForSelector('#message');
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
    bob = await mk('bob');
    await db.setUserAdmin(alice.id, true);
    const settings = { idleTimeMs: 1_800_000, deletionTimeMs: 604_800_000, capacity: 20 };
    server = await startApiServer({ store, db, clock: systemClock, namespace: NS, settings: { capacity: settings.capacity, idleTimeMs: settings.idleTimeMs, deletionTimeMs: settings.deletionTimeMs, marketplaceListing: 'any-host' }, log: createLogger('web-settings', 'silent'), port: 0, host: '127.0.0.1' });
    const runtime = new FakeRuntime();
    runtime.startResult = (name) => ({ phase: 'running', runtimeId: name, url: `http://127.0.0.1:9/${name}` });
    controller = createController({ store, runtime, clock: systemClock, settings, namespace: NS });
    await controller.start();
    git = await startGitHttpServer();
    const manifest = { name: 'team', plugins: [{ name: 'changelog', source: './plugins/changelog' }, { name: 'reviewer', source: { source: 'github', repo: 'acme/reviewer', ref: 'v2' } }] };
    git.createRepo('acme/marketplace', { main: { '.claude-plugin/marketplace.json': JSON.stringify(manifest), 'plugins/changelog/README.md': 'changelog\n' } });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1100, height: 760 } });
    page.on('pageerror', (e) => pageErrors.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error' && /Content Security Policy/.test(m.text())) pageErrors.push(m.text());
    });
    page.on('dialog', (d) => void d.accept());
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await controller?.stop();
    await server?.close();
    await git?.close();
    store?.close();
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('Settings: Save Changes keeps the grouping and Git login; a bad login is refused beside its field; the token becomes a stored secret never shown', async () => {
    await signIn(page, alice.key);
    await page.click('header >> text=Settings');
    await page.waitForSelector('#settings-form');
    await page.selectOption('#grouping', 'GROUP_BY_NEWEST');
    await page.fill('#git-login', 'not a login!');
    await page.click('#save-settings');
    await poll(() => page.textContent('#git-login-error').catch(() => null)).toMatch(/pattern|match/i);
    expect(await page.getAttribute('#git-login', 'aria-invalid')).toBe('true');
    expect(await page.$('#grouping-error')).toBeNull();
    await shot(page, 'settings-422');
    // Nothing was saved.
    expect((await call(alice.key, 'GET', '/settings')).body).toMatchObject({ sandbox_grouping_strategy: 'NO_GROUPING', git_login: null });

    await page.fill('#git-login', 'alice-gh');
    await page.fill('#git-token', 'ghp_web_token_value_123');
    await page.click('#save-settings');
    await page.waitForSelector('.saved');
    // (The agent and conversation settings beside them are OpenHands' and stay as they were: llm-settings.test.ts.)
    expect((await call(alice.key, 'GET', '/settings')).body).toMatchObject({ sandbox_grouping_strategy: 'GROUP_BY_NEWEST', git_login: 'alice-gh', git_login_provider: 'github', agent_settings: { llm: { model: null, api_key: null } } });
    await poll(() => page.locator('#secrets tr[data-name="GITHUB_TOKEN"]').count()).toBe(1);
    expect(await page.inputValue('#git-token')).toBe('');
    expect(await page.content()).not.toContain('ghp_web_token_value_123');
    // After a reload the saved values are what the page shows.
    await page.reload();
    await page.waitForSelector('#settings-form');
    expect(await page.inputValue('#grouping')).toBe('GROUP_BY_NEWEST');
    expect(await page.inputValue('#git-login')).toBe('alice-gh');
  });

  it('Settings: stored secrets are added (422 beside the name), replaced and deleted; values never come back', async () => {
    await page.fill('#secret-name', 'not valid!');
    await page.fill('#secret-value', 'v1');
    await page.click('#secret-form button[type=submit]');
    await poll(() => page.textContent('#secret-name-error').catch(() => null)).toMatch(/pattern|match/i);
    await page.fill('#secret-name', 'DEPLOY_KEY');
    await page.fill('#secret-value', 'first-value-abc');
    await page.fill('#secret-description', 'Deploys the docs');
    await page.click('#secret-form button[type=submit]');
    const row = page.locator('#secrets tr[data-name="DEPLOY_KEY"]');
    await poll(() => row.textContent()).toContain('Deploys the docs');
    await row.locator('button:text-is("Replace")').click();
    await page.fill('#replace-DEPLOY_KEY', 'second-value-xyz');
    await row.locator('button:text-is("Save value")').click();
    await poll(() => row.locator('button:text-is("Replace")').count()).toBe(1);
    const values = await store.get((await import('../../src/api/secret.ts')).SecretKind, NS, (await import('../../src/api/secret.ts')).userSecretsName(alice.id));
    expect(Buffer.from(values!.data!['DEPLOY_KEY']!, 'base64').toString()).toBe('second-value-xyz');
    expect(await page.content()).not.toContain('second-value-xyz');
    await shot(page, 'settings');
    await row.locator('button:text-is("Delete")').click();
    await poll(() => page.locator('#secrets tr[data-name="DEPLOY_KEY"]').count()).toBe(0);
  });

  it('Settings: an API key is created and shown once, listed by prefix, works, and is revoked', async () => {
    await page.click('#create-key');
    const key = (await page.locator('#new-key-value').textContent())!.trim();
    expect(key.length).toBeGreaterThan(20);
    expect((await call(key, 'GET', '/users/me')).body).toMatchObject({ id: alice.id, admin: true });
    const prefix = key.slice(0, 9);
    const row = page.locator(`#api-keys tr[data-prefix="${prefix}"]`);
    await poll(() => row.textContent()).toContain('active');
    await shot(page, 'settings-api-key');
    await page.click('#new-key button:text-is("Done")');
    expect(await page.$('#new-key-value')).toBeNull();
    await row.locator('button:text-is("Revoke")').click();
    await poll(() => row.textContent()).toContain('revoked');
    expect((await call(key, 'GET', '/users/me')).status).toBe(401);
  });

  it("Settings > Skills: a marketplace's plugins are listed; organization ones are the administrators'", async () => {
    await page.click('.tabs >> text=Skills');
    await page.waitForSelector('#marketplace-form');
    await page.fill('#mp-name', 'team');
    await page.fill('#mp-url', 'https://user:secret@github.com/acme/marketplace');
    await page.click('#marketplace-form button[type=submit]');
    await poll(() => page.textContent('#mp-url-error').catch(() => null)).toMatch(/pattern|match/i);
    await shot(page, 'settings-skills-422');
    await page.fill('#mp-url', `${git.url}/acme/marketplace.git`);
    await page.click('#marketplace-form button[type=submit]');
    const personal = page.locator('#marketplaces tr[data-name="team"]');
    await poll(() => personal.textContent()).toContain('Personal');
    await personal.locator('button:text-is("Show plugins")').click();
    await poll(() => personal.locator('ul.plugins li').allTextContents()).toEqual([expect.stringContaining('changelog'), expect.stringContaining('reviewer')]);

    await page.fill('#mp-name', 'acme-skills');
    await page.fill('#mp-url', `${git.url}/acme/marketplace.git`);
    await page.selectOption('#mp-scope', 'organization');
    await page.fill('#mp-organization', 'acme');
    await page.check('#mp-auto-load');
    await page.click('#marketplace-form button[type=submit]');
    const org = page.locator('#marketplaces tr[data-name="acme-skills"]');
    await poll(() => org.textContent()).toContain('Organization acme');
    expect(await org.locator('input[type=checkbox]').isChecked()).toBe(true);
    await shot(page, 'settings-skills');
  });

  it('Admin console: a bad Idle Time is refused beside its field; a good one is saved, audited and reaches the controller at once', async () => {
    // Sandboxes of both users, made RUNNING by the controller.
    expect((await call(alice.key, 'POST', '/sandboxes')).status).toBe(200);
    expect((await call(bob.key, 'POST', '/sandboxes')).status).toBe(200);
    await page.click('header >> text=Admin');
    await page.waitForSelector('#sandbox-configuration');
    // No license installed here (evaluation): the License section says so (e2e/web/admin-license.test.ts has the rest).
    await poll(() => page.textContent('#license-state').catch(() => null)).toBe('None installed');
    expect(await page.textContent('#license-message')).toMatch(/No license is installed \(evaluation\): nothing is refused/);
    expect(await page.isVisible('#upload-bundle')).toBe(true);
    expect(await page.inputValue('#cfg-idle_time_seconds')).toBe('1800');
    await page.fill('#cfg-idle_time_seconds', '0');
    await page.fill('#cfg-sandbox_capacity', 'lots');
    await page.click('#save-config');
    await poll(() => page.textContent('#cfg-idle_time_seconds-error').catch(() => null)).toMatch(/greater|minimum|>=/i);
    await poll(() => page.textContent('#cfg-sandbox_capacity-error').catch(() => null)).toBeTruthy();
    expect(await page.$('#cfg-deletion_time_seconds-error')).toBeNull();
    await shot(page, 'admin-422');
    expect(await store.get(SandboxConfigurationKind, NS, SANDBOX_CONFIGURATION_NAME)).toBeUndefined();

    await page.fill('#cfg-idle_time_seconds', '600');
    await page.fill('#cfg-sandbox_capacity', '8');
    await page.click('#save-config');
    await page.waitForSelector('.saved');
    await poll(() => page.locator('#config-changes tbody tr').count()).toBe(2);
    expect(await page.locator('#config-changes').textContent()).toContain('alice');
    expect((await store.get(SandboxConfigurationKind, NS, SANDBOX_CONFIGURATION_NAME))?.spec).toMatchObject({ idleTimeSeconds: 600, sandboxCapacity: 8 });
    expect((await call(alice.key, 'GET', '/admin/sandbox-configuration')).body).toMatchObject({ idle_time_seconds: 600, sandbox_capacity: 8, deletion_time_seconds: 604800 });

    // A write around the API (the resource itself, as kubectl would): the controller records it, and the console says who is not known.
    const cfg = (await store.get(SandboxConfigurationKind, NS, SANDBOX_CONFIGURATION_NAME))!;
    await store.update(SandboxConfigurationKind, { ...cfg, spec: { ...cfg.spec, idleTimeSeconds: 900 } });
    await poll(async () => ((await call(alice.key, 'GET', '/admin/sandbox-configuration')).body['changes'] as unknown[]).length).toBe(3);
    await page.reload();
    await page.waitForSelector('#config-changes');
    expect(await page.locator('#config-changes tbody tr').first().textContent()).toContain('outside the API (unknown writer; user not known)');
    await shot(page, 'admin-outside-api-change');

    // Every user's sandboxes, with owner and status.
    await poll(() => page.locator('#all-sandboxes tbody tr').count(), { timeout: 15_000 }).toBe(2);
    await poll(() => page.locator('#all-sandboxes td.owner').allTextContents()).toEqual(expect.arrayContaining(['alice', 'bob']));
    await poll(() => page.locator('#all-sandboxes .badge').allTextContents(), { timeout: 15_000 }).toEqual(['RUNNING', 'RUNNING']);
    expect((await store.list(SandboxKind, NS)).items).toHaveLength(2);
  });

  it('Admin console: an administrator grants and revokes the role, and disables and enables a user', async () => {
    const row = page.locator('#users tr[data-user="bob"]');
    await row.locator('button:text-is("Make admin")').click();
    await poll(() => row.locator('.role').textContent()).toBe('administrator');
    expect((await call(bob.key, 'GET', '/users/me')).body).toMatchObject({ admin: true });
    await row.locator('button:text-is("Revoke admin")').click();
    await poll(() => row.locator('.role').textContent()).toBe('user');
    await row.locator('button:text-is("Disable")').click();
    await poll(() => row.locator('.state').textContent()).toBe('disabled');
    expect((await call(bob.key, 'GET', '/users/me')).status).toBe(401);
    await row.locator('button:text-is("Enable")').click();
    await poll(() => row.locator('.state').textContent()).toBe('active');
    // Alice cannot act on herself here.
    expect(await page.locator('#users tr[data-user="alice"] button').count()).toBe(0);
    await shot(page, 'admin');
    expect(pageErrors).toEqual([]);
  });

  it('a user who is not an administrator has no Admin link and gets the 403 page; organization marketplaces are visible but not theirs to change', async () => {
    const ctx = await browser.newContext({ viewport: { width: 1100, height: 600 } });
    const other = await ctx.newPage();
    await signIn(other, bob.key);
    expect(await other.locator('header >> text=Admin').count()).toBe(0);
    await other.goto(`${server.url}/#/admin`);
    await other.waitForSelector('#forbidden');
    expect(await other.textContent('#forbidden')).toContain('Only administrators use the admin console');
    expect(await other.$('#sandbox-configuration')).toBeNull();
    await shot(other, 'admin-forbidden');

    await other.goto(`${server.url}/#/settings/skills`);
    const org = other.locator('#marketplaces tr[data-name="acme-skills"]');
    await poll(() => org.textContent()).toContain('Managed by administrators');
    expect(await org.locator('input[type=checkbox]').isDisabled()).toBe(true);
    expect(await other.locator('#marketplaces tr[data-name="team"]').count()).toBe(0);
    expect(await other.locator('#mp-scope option[value="organization"]').isDisabled()).toBe(true);
    await ctx.close();
  });
});
