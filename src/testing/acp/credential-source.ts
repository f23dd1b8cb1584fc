// A versioned HTTP credential source, as an ACP credential binding reads and writes one: GET answers
// the value and its version; PUT stores a new value only against the version it was read at (409
// otherwise); every request must carry the current key. Requests are recorded for the test to check.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CredentialSource {
  url: string;
  value: string;
  version: string;
  /** The Authorization header the source accepts; a test rotates it. */
  key: string;
  seen: { method: string; auth: string | undefined; body: any }[];
  close(): void;
}

/** Codex's auth.json for a refresh token, as the credential tests seed and refresh it. */
export const codexAuth = (refreshToken: string) => JSON.stringify({ auth_mode: 'chatgpt', tokens: { refresh_token: refreshToken, access_token: `at-${refreshToken}` } });

export async function startCredentialSource(value: string, key: string): Promise<CredentialSource> {
  const http = createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => (raw += d));
    req.on('end', () => {
      const body = raw ? JSON.parse(raw) : null;
      source.seen.push({ method: req.method!, auth: req.headers.authorization, body });
      const reply = (status: number, json: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(json));
      if (req.headers.authorization !== source.key) return reply(401, {});
      if (req.method === 'GET') return reply(200, { value: source.value, version: source.version });
      if (body.expected_version !== source.version) return reply(409, {});
      source.value = body.value;
      source.version = `v${Number(source.version.slice(1)) + 1}`;
      return reply(200, { version: source.version });
    });
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  const source: CredentialSource = {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/creds/codex`,
    value,
    version: 'v1',
    key,
    seen: [],
    close: () => http.close(),
  };
  return source;
}
