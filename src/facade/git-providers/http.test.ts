// The provider HTTP client's guarantees that no driver test exercises by itself: a redirect is not
// followed (the token would go with it to another host), a `next` link elsewhere is not followed,
// and errors carry neither the token nor the host's body.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderHttp, sameOrigin, urlOf } from './http.ts';
import type { FacadeDeps } from '../deps.ts';

async function serve(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe('ProviderHttp', () => {
  let elsewhere: { server: Server; url: string };
  let host: { server: Server; url: string };
  const seen: (string | undefined)[] = [];
  beforeAll(async () => {
    elsewhere = await serve((req, res) => {
      seen.push(req.headers.authorization);
      res.end('{}');
    });
    host = await serve((req, res) => {
      if (req.url?.startsWith('/redirect')) {
        res.writeHead(302, { location: `${elsewhere.url}/steal` });
        return void res.end();
      }
      if (req.url?.startsWith('/boom')) {
        res.writeHead(500);
        return void res.end('secret-body-text');
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true }));
    });
  });
  afterAll(async () => {
    for (const s of [elsewhere, host]) await new Promise<void>((ok) => s.server.close(() => ok()));
  });

  const http = () => new ProviderHttp({} as FacadeDeps, { provider: 'gitlab', authorization: 'Bearer tok-123' });

  it('does not follow a redirect: the token stays with the configured host', async () => {
    await expect(http().get(urlOf(host.url, '/redirect'))).rejects.toThrow('Invalid gitlab token');
    expect(seen).toEqual([]);
  });

  it('answers a host failure as a 502 naming the status, without the token or the body', async () => {
    const err = (await http()
      .get(urlOf(host.url, '/boom'))
      .catch((e: unknown) => e)) as Error;
    expect(err.message).toBe(`The gitlab host ${host.url} answered 500 to /boom`);
    expect(err.message).not.toMatch(/tok-123|secret-body-text/);
  });

  it('follows a next link only on the configured API', () => {
    expect(sameOrigin('https://api.bitbucket.org/2.0', 'https://api.bitbucket.org/2.0/user/workspaces?page=2')?.toString()).toBe('https://api.bitbucket.org/2.0/user/workspaces?page=2');
    expect(sameOrigin('https://api.bitbucket.org/2.0', 'https://evil.example/2.0/user/workspaces?page=2')).toBeNull();
    expect(sameOrigin('https://api.bitbucket.org/2.0', 'https://api.bitbucket.org/other')).toBeNull();
    expect(sameOrigin('https://api.bitbucket.org/2.0', 'not a url')).toBeNull();
  });
});
