// The login flags of `agentyard api` and `agentyard up` as a person types them: a setting that cannot
// work stops the command at once with a message naming it (before any cluster or sandbox is touched).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const MAIN = join(import.meta.dirname, 'main.ts');

function agentyard(args: string[]): { code: number | null; err: string } {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME };
  const r = spawnSync(process.execPath, [MAIN, ...args], { env, encoding: 'utf8', timeout: 30_000 });
  return { code: r.status, err: r.stderr };
}

describe('login flags', () => {
  const dir = mkdtempSync(join(tmpdir(), 'login-flags-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('api: an issuer needs a client id and the public URL', () => {
    const noClient = agentyard(['api', '--oidc-issuer', 'https://idp.example.test/realms/r']);
    expect(noClient.code).toBe(1);
    expect(noClient.err).toContain('AGENTYARD_OIDC_CLIENT_ID (--oidc-client-id) is required');
    const noUrl = agentyard(['api', '--oidc-issuer', 'https://idp.example.test/realms/r', '--oidc-client-id', 'agentyard']);
    expect(noUrl.code).toBe(1);
    expect(noUrl.err).toContain('AGENTYARD_PUBLIC_URL (--public-url) is required');
    const http = agentyard(['api', '--oidc-issuer', 'https://idp.example.test', '--oidc-client-id', 'a', '--public-url', 'http://agents.example.test']);
    expect(http.err).toContain('AGENTYARD_PUBLIC_URL must be an https:// URL');
    expect(agentyard(['api', '--oidc-isuer', 'x']).err).toContain("Unknown option '--oidc-isuer'");
  });

  it('up: listening beyond loopback needs the public URL browsers use', () => {
    const r = agentyard(['up', '--data-dir', dir, '--host', '0.0.0.0', '--oidc-issuer', 'https://idp.example.test/realms/r', '--oidc-client-id', 'agentyard']);
    expect(r.code).toBe(1);
    expect(r.err).toContain('--public-url (AGENTYARD_PUBLIC_URL) is required with OpenID Connect login when listening on 0.0.0.0');
  });
});
