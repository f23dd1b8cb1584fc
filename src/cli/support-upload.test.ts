import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UploadError, uploadBundle, uploadUrl } from './support-upload.ts';

describe('support bundle upload URL', () => {
  it('takes https anywhere and plain http to loopback only', () => {
    expect(uploadUrl('https://support.example.com/bundles').host).toBe('support.example.com');
    for (const ok of ['http://127.0.0.1:8080/u', 'http://localhost/u', 'http://[::1]:9/u']) expect(uploadUrl(ok).protocol).toBe('http:');
    expect(() => uploadUrl('http://support.example.com/u')).toThrow(/refusing plain http to support\.example\.com: the bundle and the upload token would cross the network unencrypted/);
    expect(() => uploadUrl('http://10.0.0.5/u')).toThrow(UploadError);
    expect(() => uploadUrl('ftp://support.example.com/u')).toThrow(/unsupported scheme ftp:/);
    expect(() => uploadUrl('support.example.com')).toThrow(/is not a URL/);
    expect(() => uploadUrl('https://me:pw@support.example.com/u')).toThrow(/carries credentials/);
  });
});

describe('support bundle upload retries', () => {
  let server: Server;
  let base: string;
  const answers: number[] = [];
  const seen: { auth?: string; bytes: number }[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'agentyard-upload-'));
  const file = join(dir, 'bundle.tar.gz');
  writeFileSync(file, Buffer.alloc(300_000, 7));

  beforeAll(async () => {
    server = createServer((req, res) => {
      let bytes = 0;
      req.on('data', (c: Buffer) => (bytes += c.length));
      req.on('end', () => {
        seen.push({ ...(req.headers.authorization ? { auth: req.headers.authorization } : {}), bytes });
        const status = answers.shift() ?? 201;
        res.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'ticket 42' : `status ${status}`);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  const opts = { token: 'tok-unit-1', backoffMs: () => 0 };

  it('retries 5xx and 429, then succeeds with the whole file and the token', async () => {
    seen.length = 0;
    answers.push(503, 429);
    const logs: string[] = [];
    const res = await uploadBundle(file, new URL(`${base}/up`), { ...opts, log: (l) => logs.push(l) });
    expect(res).toEqual({ status: 201, body: 'ticket 42', attempts: 3 });
    expect(seen).toEqual([1, 2, 3].map(() => ({ auth: 'Bearer tok-unit-1', bytes: 300_000 })));
    expect(logs[0]).toMatch(/upload attempt 1 of 4 failed \(HTTP 503: status 503\); retrying/);
  });

  it('does not retry a refused token and says where the token comes from', async () => {
    seen.length = 0;
    answers.push(401);
    await expect(uploadBundle(file, new URL(`${base}/up`), opts)).rejects.toThrow(/refused with 401: status 401\. The upload token was not accepted: check AGENTYARD_SUPPORT_UPLOAD_TOKEN or the Secret agentyard-support-upload/);
    expect(seen).toHaveLength(1);
  });

  it('gives up after the attempts with the last error, keeping nothing secret in the message', async () => {
    seen.length = 0;
    answers.push(500, 500, 500);
    await expect(uploadBundle(file, new URL(`${base}/up`), { ...opts, attempts: 3 })).rejects.toThrow(/failed after 3 attempts; last: HTTP 500: status 500\. The bundle is kept/);
    expect(seen).toHaveLength(3);
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const gone = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const err = await uploadBundle(file, new URL(`http://127.0.0.1:${gone}/up`), { ...opts, attempts: 2 }).catch((e: Error) => e);
    expect(String(err)).toMatch(/failed after 2 attempts; last: ECONNREFUSED/);
    expect(String(err)).not.toContain('tok-unit-1');
  });

  it('does not follow a redirect with the token', async () => {
    answers.push(307);
    await expect(uploadBundle(file, new URL(`${base}/up`), opts)).rejects.toThrow(/answered 307 \(a redirect, not followed/);
  });
});
