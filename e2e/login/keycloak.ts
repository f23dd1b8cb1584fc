// A real Keycloak (hack/keycloak.sh: keycloak-quarkus-dist from Maven Central, cached outside the
// clone) in dev mode with an in-memory database, on a free port (loopback unless told otherwise), for
// one test file. The test's realm is created through Keycloak's admin REST API from its JSON
// representation (agentyardRealm; not --import-realm: its import folder is inside the shared cached server).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { freePort } from '../kube/processes.ts';
import { stopGroup } from '../../src/runtime/process/processes.ts';

const repoRoot = join(import.meta.dirname, '..', '..');

/** The cached Keycloak wrapper, fetched on first use; or why there is none. */
export function keycloakWrapper(): { path: string } | { missing: string } {
  const r = spawnSync(join(repoRoot, 'hack/keycloak.sh'), { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 600_000 });
  const path = r.stdout?.trim().split('\n').pop();
  if (r.status !== 0 || !path) return { missing: `hack/keycloak.sh failed: ${(r.stderr ?? '').trim().split('\n').slice(-3).join(' / ') || r.error?.message}` };
  return { path };
}

export interface Keycloak {
  url: string;
  port: number;
  output: string[];
  /** Creates a realm from its JSON representation (users, groups, clients included). */
  createRealm(realm: object): Promise<void>;
  stop(): Promise<void>;
}

export interface KeycloakOptions {
  /** The address it listens on: loopback unless a cluster must reach it (e2e/node: the node's address). */
  host?: string;
  /** More `kc.sh start-dev` options, e.g. `--proxy-headers=xforwarded` behind an ingress. */
  args?: string[];
  timeoutMs?: number;
}

export async function startKeycloak(wrapper: string, opts: KeycloakOptions = {}): Promise<Keycloak> {
  const { host = '127.0.0.1', args = [], timeoutMs = 300_000 } = opts;
  const port = await freePort();
  const adminPassword = randomBytes(12).toString('hex');
  // One Keycloak at a time on this machine: dev mode rebuilds the cached server's configuration
  // at start, which two servers starting together from the same folder would race on.
  const lock = join(dirname(wrapper), '.run-lock');
  const child: ChildProcess = spawn('flock', ['-w', String(Math.ceil(timeoutMs / 1000)), lock, wrapper, 'start-dev', '--db=dev-mem', `--http-host=${host}`, `--http-port=${port}`, ...args], {
    env: { ...process.env, KC_BOOTSTRAP_ADMIN_USERNAME: 'admin', KC_BOOTSTRAP_ADMIN_PASSWORD: adminPassword },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group: stop() ends Keycloak's JVM with the wrapper
  });
  const output: string[] = [];
  child.stdout!.on('data', (c: Buffer) => output.push(c.toString()));
  child.stderr!.on('data', (c: Buffer) => output.push(c.toString()));
  const url = `http://${host}:${port}`;
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    await stopGroup(child.pid!, 15_000);
  };

  // Ready when the master realm's discovery document answers.
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`Keycloak exited with ${child.exitCode}:\n${output.join('').slice(-3000)}`);
    const ok = await fetch(`${url}/realms/master/.well-known/openid-configuration`).then((r) => r.ok, () => false);
    if (ok) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`Keycloak did not start within ${timeoutMs / 1000} s:\n${output.join('').slice(-3000)}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }

  const createRealm = async (realm: object) => {
    const token = await fetch(`${url}/realms/master/protocol/openid-connect/token`, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'password', client_id: 'admin-cli', username: 'admin', password: adminPassword }),
    });
    if (!token.ok) throw new Error(`Keycloak admin token: ${token.status} ${await token.text()}`);
    const { access_token } = (await token.json()) as { access_token: string };
    const res = await fetch(`${url}/admin/realms`, { method: 'POST', headers: { authorization: `Bearer ${access_token}`, 'content-type': 'application/json' }, body: JSON.stringify(realm) });
    if (res.status !== 201) throw new Error(`Keycloak realm import: ${res.status} ${await res.text()}`);
  };
  return { url, port, output, createRealm, stop };
}

/**
 * The test realm "agentyard": the agentyard client (confidential, PKCE S256, groups in the ID token,
 * the given app URLs as redirect and post-logout URIs) and two users, alice (in the admin group) and bob.
 */
export function agentyardRealm(o: { publicUrls: string[]; clientSecret: string; passwords: Record<'alice' | 'bob', string>; adminGroup: string }): object {
  const user = (name: 'alice' | 'bob', groups: string[]) => ({
    username: name,
    enabled: true,
    email: `${name}@example.test`,
    emailVerified: true,
    firstName: name === 'alice' ? 'Alice' : 'Bob',
    lastName: 'Tester',
    credentials: [{ type: 'password', value: o.passwords[name], temporary: false }],
    groups,
  });
  return {
    realm: 'agentyard',
    enabled: true,
    groups: [{ name: o.adminGroup }],
    clients: [
      {
        clientId: 'agentyard',
        enabled: true,
        protocol: 'openid-connect',
        publicClient: false,
        secret: o.clientSecret,
        standardFlowEnabled: true,
        directAccessGrantsEnabled: false,
        redirectUris: o.publicUrls.map((u) => `${u}/auth/callback`),
        attributes: { 'pkce.code.challenge.method': 'S256', 'post.logout.redirect.uris': o.publicUrls.map((u) => `${u}/`).join('##') },
        protocolMappers: [
          {
            name: 'groups',
            protocol: 'openid-connect',
            protocolMapper: 'oidc-group-membership-mapper',
            // Keycloak's full group path ("/agentyard-admins"): the admin group matches it too.
            config: { 'claim.name': 'groups', 'full.path': 'true', 'id.token.claim': 'true', 'access.token.claim': 'true', 'userinfo.token.claim': 'true' },
          },
        ],
      },
    ],
    users: [user('alice', [`/${o.adminGroup}`]), user('bob', [])],
  };
}
