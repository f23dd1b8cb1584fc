import { createPublicKey, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { LicenseTokenServer, parseScope, type License } from './license-token-server.ts';

const CUSTOMER: License = { email: 'ops@customer.example.com', id: 'lic-1', repositories: ['charts/agentyard'], expires: '2030-01-01T00:00:00Z' };
const PUBLISHER: License = { email: 'release@vendor.example.com', id: 'lic-pub', repositories: ['charts/agentyard'], publisher: true };
const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;

describe('license token server', () => {
  let clock = Date.parse('2029-06-01T00:00:00Z');
  const server = new LicenseTokenServer({ licenses: [CUSTOMER, PUBLISHER], service: 'charts', issuer: 'vendor', now: () => clock });

  it('parses registry scopes', () => {
    expect(parseScope('repository:charts/agentyard:pull,push')).toEqual({ type: 'repository', name: 'charts/agentyard', actions: ['pull', 'push'] });
    expect(parseScope('nonsense')).toBeUndefined();
  });

  it('authenticates the license e-mail (any case) and id, the same refusal for an unknown e-mail and a wrong id', () => {
    expect(server.authenticate(basic('OPS@customer.example.com', 'lic-1'))).toBe(CUSTOMER);
    for (const auth of [basic('ops@customer.example.com', 'lic-2'), basic('who@example.com', 'lic-1'), undefined, 'Bearer x']) {
      expect(() => server.authenticate(auth)).toThrow(expect.objectContaining({ status: 401 }));
    }
    expect(() => server.authenticate(basic('who@example.com', 'lic-1'))).toThrow('unknown license e-mail or license id');
  });

  it('grants pull on licensed repositories, push to the publisher only, and nothing else', () => {
    expect(server.grant(CUSTOMER, [])).toEqual([]);
    expect(server.grant(CUSTOMER, ['repository:charts/agentyard:pull,push'])).toEqual([{ type: 'repository', name: 'charts/agentyard', actions: ['pull'] }]);
    expect(server.grant(PUBLISHER, ['repository:charts/agentyard:pull,push'])[0]!.actions).toEqual(['pull', 'push']);
    expect(() => server.grant(CUSTOMER, ['repository:charts/other:pull'])).toThrow(expect.objectContaining({ status: 403, message: 'license lic-1 does not cover charts/other (pull)' }));
    expect(() => server.grant(CUSTOMER, ['registry:catalog:*'])).toThrow(expect.objectContaining({ status: 403 }));
  });

  it('refuses an expired license with the date', () => {
    clock = Date.parse('2030-01-01T00:00:01Z');
    expect(() => server.grant(CUSTOMER, [])).toThrow(expect.objectContaining({ status: 403, message: 'license lic-1 expired on 2030-01-01T00:00:00Z; renew it to pull new charts' }));
    clock = Date.parse('2029-06-01T00:00:00Z');
  });

  it('signs ES256 tokens the published JWKS verifies, for the registry service and issuer', () => {
    const { token, expires_in } = server.token(CUSTOMER.email, [{ type: 'repository', name: 'charts/agentyard', actions: ['pull'] }]);
    const [h, c, s] = token.split('.') as [string, string, string];
    const jwk = server.jwks().keys[0] as { kid: string };
    expect(JSON.parse(Buffer.from(h, 'base64url').toString())).toEqual({ alg: 'ES256', typ: 'JWT', kid: jwk.kid });
    const key = createPublicKey({ key: jwk as never, format: 'jwk' });
    expect(verify('sha256', Buffer.from(`${h}.${c}`), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(s, 'base64url'))).toBe(true);
    const claims = JSON.parse(Buffer.from(c, 'base64url').toString()) as Record<string, unknown>;
    expect(claims).toMatchObject({ iss: 'vendor', aud: 'charts', sub: CUSTOMER.email, exp: clock / 1000 + expires_in, access: [{ name: 'charts/agentyard', actions: ['pull'] }] });
    expect(JSON.stringify(claims)).not.toContain(CUSTOMER.id);
  });
});
