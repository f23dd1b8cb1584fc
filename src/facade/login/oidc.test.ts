// Discovery failures as the sign-in page reports them, against real servers: an https provider
// whose certificate is from a CA this process does not trust (a private CA not given to the API)
// says so and names the setting; a provider nothing answers for says it cannot be reached.
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makePki } from '../../../e2e/kube/certs.ts';
import { freePort } from '../../testing/ports.ts';
import { createLogger } from '../../util/log.ts';
import type { LoginSettings } from './config.ts';
import { OidcClient } from './oidc.ts';

describe('OidcClient discovery failures', () => {
  const dir = mkdtempSync(join(tmpdir(), 'oidc-discovery-'));
  let server: Server;
  let requests = 0;
  const settings = (issuer: string): LoginSettings => ({
    issuer,
    clientId: 'agentyard',
    publicUrl: 'https://app.example.test',
    roleClaim: 'groups',
    scopes: 'openid',
    sessionMaxAgeMs: 3600_000,
    sessionIdleMs: 3600_000,
  });

  beforeAll(async () => {
    const pki = await makePki(dir); // its server certificate names localhost and 127.0.0.1
    server = createServer({ cert: readFileSync(pki.serverCert), key: readFileSync(pki.serverKey) }, (_req, res) => {
      requests++;
      res.end('{}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  it('an issuer with a certificate of an untrusted CA: not trusted, with the code and the setting to fix', async () => {
    const issuer = `https://localhost:${(server.address() as AddressInfo).port}/realms/r`;
    const client = new OidcClient(settings(issuer), createLogger('oidc-test'));
    const err = await client.start('/').catch((e: unknown) => e as Error);
    expect(err).toMatchObject({ code: 'Unavailable' });
    expect((err as Error).message).toMatch(new RegExp(`^The identity provider at ${issuer} is not trusted: its TLS certificate could not be verified \\((UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT_LOCALLY)\\)\\. .*api\\.caBundle.*NODE_EXTRA_CA_CERTS`));
    expect(requests).toBe(0); // the handshake failed: nothing was asked of it
  });

  it('an issuer nothing answers for: cannot be reached, try again', async () => {
    const issuer = `https://localhost:${await freePort()}/realms/r`;
    const err = await new OidcClient(settings(issuer), createLogger('oidc-test')).start('/').catch((e: unknown) => e as Error);
    expect(err).toMatchObject({ code: 'Unavailable', message: `The identity provider at ${issuer} cannot be reached; try again shortly` });
  });
});
