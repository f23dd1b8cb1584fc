import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loginSettings } from './config.ts';
import { identityOf } from './oidc.ts';

describe('loginSettings', () => {
  const dir = mkdtempSync(join(tmpdir(), 'login-config-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const base = { AGENTYARD_OIDC_ISSUER: 'https://idp.example.test/realms/r', AGENTYARD_OIDC_CLIENT_ID: 'agentyard' };

  it('is off without an issuer, and needs a client id with one', () => {
    expect(loginSettings({})).toBeUndefined();
    expect(() => loginSettings({ AGENTYARD_OIDC_ISSUER: 'https://idp.example.test' })).toThrow(/AGENTYARD_OIDC_CLIENT_ID/);
  });

  it('takes defaults, the secret from a file, and flags over variables', () => {
    const file = join(dir, 'secret');
    writeFileSync(file, 's3cret\n');
    const s = loginSettings({ ...base, AGENTYARD_OIDC_CLIENT_SECRET: 'from-env', AGENTYARD_OIDC_ADMIN_GROUP: 'env-admins', AGENTYARD_PUBLIC_URL: 'https://ay.example.test/' }, { 'oidc-client-secret-file': file, 'oidc-admin-group': 'flag-admins' });
    expect(s).toEqual({
      issuer: 'https://idp.example.test/realms/r',
      clientId: 'agentyard',
      clientSecret: 's3cret',
      publicUrl: 'https://ay.example.test',
      roleClaim: 'groups',
      adminGroup: 'flag-admins',
      scopes: 'openid profile email',
      sessionMaxAgeMs: 12 * 3600_000,
      sessionIdleMs: 3600_000,
    });
    expect(loginSettings(base)?.clientSecret).toBeUndefined();
  });

  it('refuses plain http off loopback, unreadable or empty secret files, and bad durations', () => {
    expect(() => loginSettings({ ...base, AGENTYARD_OIDC_ISSUER: 'http://idp.example.test' })).toThrow(/https/);
    expect(() => loginSettings({ ...base, AGENTYARD_PUBLIC_URL: 'http://10.0.0.1:3000' })).toThrow(/AGENTYARD_PUBLIC_URL must be an https/);
    expect(loginSettings({ ...base, AGENTYARD_OIDC_ISSUER: 'http://127.0.0.1:8080/realms/r', AGENTYARD_PUBLIC_URL: 'http://localhost:3000' })?.publicUrl).toBe('http://localhost:3000');
    expect(() => loginSettings({ ...base, AGENTYARD_OIDC_CLIENT_SECRET_FILE: join(dir, 'missing') })).toThrow(/cannot read .*ENOENT/);
    writeFileSync(join(dir, 'empty'), '\n');
    expect(() => loginSettings({ ...base, AGENTYARD_OIDC_CLIENT_SECRET_FILE: join(dir, 'empty') })).toThrow(/is empty/);
    expect(() => loginSettings({ ...base, AGENTYARD_SESSION_IDLE_SECONDS: '-1' })).toThrow(/AGENTYARD_SESSION_IDLE_SECONDS/);
    // The idle timeout cannot outlast the session.
    expect(loginSettings({ ...base, AGENTYARD_SESSION_MAX_AGE_SECONDS: '60', AGENTYARD_SESSION_IDLE_SECONDS: '600' })?.sessionIdleMs).toBe(60_000);
  });
});

describe('identityOf', () => {
  const s = { issuer: 'https://idp.example.test', roleClaim: 'groups', adminGroup: 'agentyard-admins' };

  it('names the user by name, else preferred_username, else email, else subject', () => {
    expect(identityOf({ iss: 'https://idp.example.test', sub: 's1', name: 'Alice A', email: 'a@x.test' }, s)).toMatchObject({ issuer: 'https://idp.example.test', subject: 's1', name: 'Alice A', email: 'a@x.test' });
    expect(identityOf({ sub: 's1', preferred_username: 'alice' }, s)).toMatchObject({ name: 'alice', email: null });
    expect(identityOf({ sub: 's1', email: 'a@x.test' }, s).name).toBe('a@x.test');
    expect(identityOf({ sub: 's1' }, s).name).toBe('s1');
  });

  it('maps the admin role from a list, a single string, a Keycloak group path or a nested claim', () => {
    expect(identityOf({ sub: 's', groups: ['dev', 'agentyard-admins'] }, s).admin).toBe(true);
    expect(identityOf({ sub: 's', groups: ['/agentyard-admins'] }, s).admin).toBe(true);
    expect(identityOf({ sub: 's', groups: 'agentyard-admins' }, s).admin).toBe(true);
    expect(identityOf({ sub: 's', groups: ['agentyard-admins-not', '/x/agentyard-admins'] }, s).admin).toBe(false);
    expect(identityOf({ sub: 's' }, s).admin).toBe(false);
    expect(identityOf({ sub: 's', realm_access: { roles: ['agentyard-admins'] } }, { ...s, roleClaim: 'realm_access.roles' }).admin).toBe(true);
    // Without an admin group the provider does not decide roles.
    expect(identityOf({ sub: 's', groups: ['agentyard-admins'] }, { issuer: s.issuer, roleClaim: 'groups' }).admin).toBeUndefined();
  });
});
