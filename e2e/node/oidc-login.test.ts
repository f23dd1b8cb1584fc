// The web app behind the chart's ingress with OpenID Connect login, on a REAL node (node.ts): the
// chart installed with login.oidc against a real Keycloak (hack/keycloak.sh) that runs on the host,
// and a real Chromium that opens https://app.<domain>, signs in on Keycloak's own form, starts a
// conversation with the scripted model, watches the live transcript over the facade's WebSocket
// relay (wss, the session cookie, its CSRF token), and signs out.
//
// One issuer URL for everyone (chart README, "Login with OpenID Connect"): Keycloak is published
// through the same Traefik as the app, at https://idp.<domain>, with the same wildcard certificate of
// a private CA. The browser resolves *.<domain> to the node (Chromium's host resolver rules), and the
// API Pod does too (CoreDNS's wildcard answer), so discovery, the token call and the browser's
// redirects all name the same host; the API trusts the CA through api.caBundle (installed first
// without it: sign-in then says the provider is not trusted, naming the setting). Keycloak learns
// the public scheme and host from Traefik's X-Forwarded-* headers (--proxy-headers=xforwarded).
// AGENTYARD_SCREENSHOTS=docs/screenshots keeps screenshots of the pages there (for the README).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CoreV1Api, KubernetesObjectApi, type KubernetesObject } from '@kubernetes/client-node';
import type { Browser, BrowserContext, Page, WebSocket as PageSocket } from 'playwright-core';
import { chromiumMissing, launchChromium } from '../../src/testing/chromium.ts';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_COOKIE } from '../../src/facade/login/session.ts';
import { startScriptedLlm, type ScriptedLlm } from '../../src/testing/scripted-llm/server.ts';
import { makePki, makeServingCert } from '../kube/certs.ts';
import { CHART, helm, writeValues } from '../helm/helm.ts';
import { agentyardRealm, keycloakWrapper, startKeycloak, type Keycloak } from '../login/keycloak.ts';
import { TRAEFIK_CLASS } from './addons.ts';
import { NODE_IP } from './host.ts';
import { agentyardImage, realNodeTools, startRealNode, type RealNode } from './node.ts';
import { Steps } from './steps.ts';
import { nodeChartValues } from './release.ts';

const required = process.env['AGENTYARD_REQUIRE_CLUSTER_TESTS'] === '1';
const tools = realNodeTools();
const kc = tools ? keycloakWrapper() : { missing: 'no real node' };
const missing = !tools ? 'no real node' : !('path' in kc) ? kc.missing : chromiumMissing;
if (tools && missing && required) throw new Error(`OIDC login on the real node needs Keycloak and Chromium: ${missing} (make test installs both)`);

const NS = 'agentyard';
const SANDBOXES = 'agentyard-sandboxes';
const IDP_NS = 'identity';
const DOMAIN = 'login.agentyard.test';
const APP = `https://app.${DOMAIN}`;
const IDP = `https://idp.${DOMAIN}`;
const ISSUER = `${IDP}/realms/agentyard`;
const TLS_SECRET = 'wildcard-tls';
const ADMIN_GROUP = 'agentyard-admins';
const API_KEY = `ay_node_oidc_${randomBytes(12).toString('hex')}`;
const CLIENT_SECRET = randomBytes(16).toString('hex');
const PASSWORDS = { alice: randomBytes(9).toString('base64url'), bob: randomBytes(9).toString('base64url') };

describe.skipIf(missing !== undefined)(`the web app behind the chart's ingress with OIDC login, on a real node${missing ? ` (skipped: ${missing})` : ''}`, { timeout: 10 * 60_000 }, () => {
  let node: RealNode | undefined;
  let idpStarting: Promise<Keycloak> | undefined;
  let idp: Keycloak | undefined;
  let llm: ScriptedLlm;
  let browser: Browser;
  let ctx: BrowserContext;
  let page: Page;
  let image: { ref: string; archive: string };
  let caPem = '';
  /** fetch through the ingress as a client that trusts the test CA and resolves *.<domain> to the node. */
  let viaIngress: Agent;
  const steps = new Steps();
  const { timings } = steps;
  const dir = mkdtempSync(join(tmpdir(), 'agentyard-node-oidc-'));
  const shots = process.env['AGENTYARD_SCREENSHOTS'] ? resolve(process.env['AGENTYARD_SCREENSHOTS']) : undefined;
  const shot = async (name: string) => {
    if (shots) await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
  };
  const timed = <T>(step: string, fn: () => Promise<T>) => steps.timed(step, fn);
  const get = (url: string, headers: Record<string, string> = {}) => fetch(url, { headers, dispatcher: viaIngress } as RequestInit);

  beforeAll(async () => {
    image = await timed('agentyard image', () => agentyardImage());
    // Keycloak starts (about 100 s) while the node does: it listens on the node's address, which
    // exists from the node's first step on.
    node = await timed('node start', () =>
      startRealNode({
        tools: tools!,
        baseDomain: DOMAIN,
        images: [image],
        onNetwork: () => {
          idpStarting = startKeycloak((kc as { path: string }).path, { host: NODE_IP, args: ['--proxy-headers=xforwarded'], timeoutMs: 600_000 });
          idpStarting.catch(() => undefined); // awaited below; a failure is reported there
        },
      }),
    );
    idp = await timed('Keycloak start (after the node)', () => idpStarting!);
    const cluster = node.cluster;
    const core = cluster.kubeConfig.makeApiClient(CoreV1Api);
    const objects = KubernetesObjectApi.makeApiClient(cluster.kubeConfig);
    const create = async (...list: Record<string, unknown>[]) => {
      for (const body of list) await objects.create(body as KubernetesObject);
    };

    // A private CA and its *.<domain> certificate: Traefik serves it for the app and Keycloak.
    const pki = await makePki(dir);
    const wildcard = await makeServingCert(pki, 'wildcard', [`DNS:*.${DOMAIN}`]);
    caPem = readFileSync(pki.caCert, 'utf8');
    const tls = { 'tls.crt': readFileSync(wildcard.cert, 'utf8'), 'tls.key': readFileSync(wildcard.key, 'utf8') };
    for (const name of [NS, SANDBOXES, IDP_NS]) await core.createNamespace({ body: { metadata: { name } } });
    for (const namespace of [NS, IDP_NS]) await core.createNamespacedSecret({ namespace, body: { metadata: { name: TLS_SECRET }, type: 'kubernetes.io/tls', stringData: tls } });
    await core.createNamespacedConfigMap({ namespace: NS, body: { metadata: { name: 'agentyard-ca' }, data: { 'ca.crt': caPem } } });
    await core.createNamespacedSecret({ namespace: NS, body: { metadata: { name: 'agentyard-api-key' }, stringData: { 'api-key': API_KEY } } });
    await core.createNamespacedSecret({ namespace: NS, body: { metadata: { name: 'agentyard-llm' }, stringData: { 'api-key': 'sk-scripted-node-key' } } });
    await core.createNamespacedSecret({ namespace: NS, body: { metadata: { name: 'agentyard-oidc' }, stringData: { 'client-secret': CLIENT_SECRET } } });

    // Keycloak on the host, published by the ingress: a Service without selector, its endpoint the
    // node's address, and an Ingress with the wildcard certificate.
    await create(
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'keycloak', namespace: IDP_NS }, spec: { ports: [{ name: 'http', port: 80, targetPort: idp.port }] } },
      {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: 'keycloak-host', namespace: IDP_NS, labels: { 'kubernetes.io/service-name': 'keycloak' } },
        addressType: 'IPv4',
        ports: [{ name: 'http', port: idp.port, protocol: 'TCP' }],
        endpoints: [{ addresses: [NODE_IP], conditions: { ready: true } }],
      },
      {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'Ingress',
        metadata: { name: 'keycloak', namespace: IDP_NS },
        spec: {
          ingressClassName: TRAEFIK_CLASS,
          tls: [{ hosts: [`idp.${DOMAIN}`], secretName: TLS_SECRET }],
          rules: [{ host: `idp.${DOMAIN}`, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'keycloak', port: { number: 80 } } } }] } }],
        },
      },
    );
    await idp.createRealm(agentyardRealm({ publicUrls: [APP], clientSecret: CLIENT_SECRET, passwords: PASSWORDS, adminGroup: ADMIN_GROUP }));
    llm = await startScriptedLlm([], { host: NODE_IP });
    viaIngress = new Agent({
      connect: {
        ca: caPem,
        lookup: ((_host: string, opts: { all?: boolean }, cb: (...a: unknown[]) => void) => (opts.all ? cb(null, [{ address: NODE_IP, family: 4 }]) : cb(null, NODE_IP, 4))) as never,
      },
    });
    browser = await launchChromium([`--host-resolver-rules=MAP *.${DOMAIN} ${NODE_IP}`]);
    // The browser does not know the test CA; this process checks the chain (viaIngress trusts only that CA).
    ctx = await browser.newContext({ viewport: { width: 1100, height: 760 }, ignoreHTTPSErrors: true });
    page = await ctx.newPage();
  }, 30 * 60_000);

  afterAll(async () => {
    await browser?.close();
    await llm?.close();
    await viaIngress?.close();
    await (idp ?? (await idpStarting?.catch(() => undefined)))?.stop();
    const t = Date.now();
    await node?.stop(steps.failed);
    timings['node stop'] = Date.now() - t;
    rmSync(dir, { recursive: true, force: true });
    console.log(steps.report('OIDC login', node?.timings));
  }, 5 * 60_000);

  const values = (opts: { trustCa: boolean }) => {
    return writeValues(
      dir,
      `values-${opts.trustCa}.yaml`,
      JSON.stringify({
        ...nodeChartValues(DOMAIN, image.ref, llm.url),
        ingress: { className: TRAEFIK_CLASS, tlsSecret: TLS_SECRET },
        controller: { replicas: 1 },
        ...(opts.trustCa ? { api: { caBundle: { name: 'agentyard-ca', key: 'ca.crt' } } } : {}),
        login: { oidc: { enabled: true, issuerUrl: ISSUER, clientId: 'agentyard', clientSecret: { name: 'agentyard-oidc', key: 'client-secret' }, adminGroup: ADMIN_GROUP } },
      }),
    );
  };
  const kube = (args: string[]) => helm([...args, '--kubeconfig', node!.kubeconfigPath]);

  it('helm install with login.oidc and TLS at the ingress; without the private CA, sign-in says the provider is not trusted and names api.caBundle', async () => {
    const installed = await timed('helm install', () => kube(['install', 'agentyard', CHART, '-n', NS, '-f', values({ trustCa: false }), '--wait', '--timeout', '5m']));
    if (!installed.ok) steps.failed = true;
    expect(installed.ok, installed.out).toBe(true);
    // Both hosts answer over https with the wildcard certificate of the private CA.
    const discovery = await get(`${ISSUER}/.well-known/openid-configuration`);
    expect(discovery.status).toBe(200);
    expect(((await discovery.json()) as { issuer: string }).issuer).toBe(ISSUER);
    expect(await (await get(`${APP}/auth/session`)).json()).toEqual({ oidc: true, user: null });
    // The API Pod reaches the issuer's host, but does not trust its certificate.
    await page.goto(`${APP}/`);
    await page.click('#oidc-login', { timeout: 30_000 });
    await expect.poll(() => page.textContent('#error').catch(() => null), { timeout: 30_000 }).toMatch(new RegExp(`^The identity provider at ${ISSUER} is not trusted: its TLS certificate could not be verified \\([A-Z_]+\\)\\. .*api\\.caBundle`));
    await shot('login-ingress-provider-untrusted');
    expect(await node!.kubectl('logs', '-n', NS, 'deploy/agentyard-api')).toContain('OpenID provider discovery failed');
  });

  it('helm upgrade with api.caBundle: the API trusts the CA', async () => {
    const upgraded = await timed('helm upgrade (api.caBundle)', () => kube(['upgrade', 'agentyard', CHART, '-n', NS, '-f', values({ trustCa: true }), '--wait', '--timeout', '5m']));
    if (!upgraded.ok) steps.failed = true;
    expect(upgraded.ok, upgraded.out).toBe(true);
    const env = await node!.kubectl('get', 'deploy/agentyard-api', '-n', NS, '-o', 'jsonpath={.spec.template.spec.containers[0].env[?(@.name=="NODE_EXTRA_CA_CERTS")].value}');
    expect(env).toBe('/etc/agentyard/ca/ca.crt');
    // helm's --wait can return before the old API Pod is gone: the sign-in must meet a new one.
    await timed('API rollout', () => node!.kubectl('rollout', 'status', 'deploy/agentyard-api', '-n', NS, '--timeout=180s'));
  });

  it('alice signs in on Keycloak\'s form through the ingress; the session cookie is Secure and httpOnly', async () => {
    await timed('sign-in', async () => {
      // The ingress may still route to the old Pod's address for a moment after the rollout: load
      // the app again until its sign-in button is there.
      await expect
        .poll(async () => {
          await page.goto(`${APP}/`);
          return page.locator('#oidc-login').waitFor({ state: 'visible', timeout: 10_000 }).then(() => true, () => false);
        }, { timeout: 90_000, interval: 1_000 })
        .toBe(true);
      await page.click('#oidc-login', { timeout: 30_000 });
      await page.waitForSelector('#username', { timeout: 60_000 });
      // The browser is at the issuer's public host, with the redirect URI of the app's public host.
      expect(page.url().startsWith(`${ISSUER}/protocol/openid-connect/auth?`)).toBe(true);
      expect(new URL(page.url()).searchParams.get('redirect_uri')).toBe(`${APP}/auth/callback`);
      await page.fill('#username', 'alice');
      await page.fill('#password', PASSWORDS.alice);
      await page.click('#kc-login');
      await page.waitForURL(`${APP}/`, { timeout: 60_000 });
      await page.waitForSelector('#message', { timeout: 30_000 });
    });
    const cookie = (await ctx.cookies(APP)).find((c) => c.name === SESSION_COOKIE);
    expect(cookie).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Lax', path: '/', domain: `app.${DOMAIN}` });
    const me = await page.evaluate(`fetch('/api/v1/users/me').then((r) => r.json())`);
    expect(me).toMatchObject({ name: 'Alice Tester' });
  });

  it('a conversation started in the app runs; the live transcript arrives over the wss relay with the cookie session', async () => {
    const sockets: PageSocket[] = [];
    const frames: string[] = [];
    page.on('websocket', (ws) => {
      sockets.push(ws);
      ws.on('framereceived', (f) => frames.push(String(f.payload)));
    });
    llm.push(
      { content: 'Looking at the node.', toolCalls: [{ name: 'terminal', arguments: { command: 'echo hello-through-the-ingress | tee proof.txt' } }] },
      { toolCalls: [{ name: 'finish', arguments: { message: 'Done on the node.' } }] },
    );
    await page.fill('#message', 'Say hello through the ingress');
    await page.click('form[aria-labelledby=new-title] button[type=submit]');
    await page.waitForURL(/#\/c\/[0-9a-f]{32}$/, { timeout: 60_000 });
    const id = /#\/c\/([0-9a-f]{32})$/.exec(page.url())![1]!;
    const transcript = page.locator('#transcript');
    await timed('first run shown', async () => {
      await expect.poll(() => page.textContent('#feed-state'), { timeout: 240_000, interval: 1000 }).toBe('live');
      await expect
        .poll(() => page.locator('.ev.action:has(code.tool:text-is("terminal")) .result.observation').allTextContents(), { timeout: 120_000 })
        .toEqual([expect.stringContaining('hello-through-the-ingress')]);
    });
    // The relay: same origin, over TLS, and it carried events.
    expect(sockets.map((s) => new URL(s.url()).origin + new URL(s.url()).pathname)).toContain(`wss://app.${DOMAIN}/api/v1/conversation/${id}/events/socket`);

    // A follow-up's events come only over the socket (the history was read before them).
    const before = frames.length;
    llm.push({ content: 'Hello again from the node.', toolCalls: [{ name: 'finish', arguments: { message: 'Answered.' } }] });
    await page.fill('#followup', 'Once more, please');
    await page.click('.followup button[type=submit]');
    await expect.poll(() => transcript.textContent(), { timeout: 120_000 }).toContain('Hello again from the node.');
    expect(frames.slice(before).some((f) => f.includes('Hello again from the node.'))).toBe(true);
    await expect.poll(() => page.textContent('#execution-status'), { timeout: 60_000 }).toBe('finished');
    await shot('login-ingress-conversation');
  });

  it('logout ends the session here and at Keycloak, and comes back to the app through the ingress', async () => {
    const old = (await ctx.cookies(APP)).find((c) => c.name === SESSION_COOKIE)!;
    await page.click('header button:text-is("Sign out")');
    await page.waitForURL(`${APP}/`, { timeout: 60_000 });
    await page.waitForSelector('#oidc-login', { timeout: 30_000 });
    expect((await ctx.cookies(APP)).find((c) => c.name === SESSION_COOKIE)).toBeUndefined();
    expect((await get(`${APP}/api/v1/users/me`, { cookie: `${SESSION_COOKIE}=${old.value}` })).status).toBe(401);
    // Keycloak's session is gone too: signing in asks for the password again.
    await page.click('#oidc-login');
    await page.waitForSelector('#password', { timeout: 60_000 });
    // API keys keep working beside the login.
    expect((await get(`${APP}/api/v1/users/me`, { authorization: `Bearer ${API_KEY}` })).status).toBe(200);
  });
});
