// Backend artifacts named by URL, fetched from a real HTTPS server on loopback (its certificate from a
// throwaway CA given to the downloader) and a real plain-HTTP one: the checksum, the size limits
// (announced and streamed), redirects and where they may lead, and prepare()/start() of an installed
// Canvas App whose manifest names its artifact by URL.
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttp, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttps } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makePki } from '../../../e2e/kube/certs.ts';
import { tempDir } from '../test-support.ts';
import { CanvasBackends, currentPlatform } from './backends.ts';
import { downloadArtifact } from './download.ts';
import { CanvasExtensions } from './extensions.ts';
import { writeTestExtension } from './test-extension.ts';

const execFileAsync = promisify(execFile);

describe('backend artifacts downloaded from a URL', () => {
  let dir: ReturnType<typeof tempDir>;
  let https: Server;
  let http: Server;
  let base: string;
  let plain: string;
  let ca: Buffer;
  let archive: Buffer;
  let sha: string;
  const hits: string[] = [];

  const handler = (req: IncomingMessage, res: ServerResponse) => {
    hits.push(req.url!);
    const u = new URL(req.url!, 'http://x');
    if (u.pathname === '/server.tar.gz') return res.end(archive);
    if (u.pathname === '/chunked.tar.gz') {
      // No Content-Length: only the bytes received can tell it is too big.
      res.write(archive.subarray(0, 100));
      return res.end(archive.subarray(100));
    }
    if (u.pathname === '/hop.tar.gz') {
      const n = Number(u.searchParams.get('n'));
      res.writeHead(302, { location: n > 0 ? `/hop.tar.gz?n=${n - 1}` : '/server.tar.gz' });
      return res.end();
    }
    if (u.pathname === '/to-http.tar.gz') {
      res.writeHead(301, { location: `${plain}/server.tar.gz` });
      return res.end();
    }
    if (u.pathname === '/to-creds.tar.gz') {
      res.writeHead(307, { location: `${base.replace('https://', 'https://user:pw@')}/server.tar.gz` });
      return res.end();
    }
    res.writeHead(404).end('no');
  };

  beforeAll(async () => {
    dir = tempDir();
    const pki = await makePki(dir.path);
    ca = readFileSync(pki.caCert);
    const ext = writeTestExtension(join(dir.path, 'pkg'), 'remote-app');
    archive = readFileSync(join(ext.dir, 'backend', 'server.tar.gz'));
    sha = createHash('sha256').update(archive).digest('hex');
    https = createHttps({ cert: readFileSync(pki.serverCert), key: readFileSync(pki.serverKey) }, handler);
    http = createHttp(handler);
    await new Promise<void>((ok) => https.listen(0, '127.0.0.1', ok));
    await new Promise<void>((ok) => http.listen(0, '127.0.0.1', ok));
    base = `https://localhost:${(https.address() as AddressInfo).port}`;
    plain = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((ok) => https.close(ok));
    await new Promise((ok) => http.close(ok));
    dir.remove();
  });

  const fresh = () => {
    const d = join(dir.path, `dl-${Math.random().toString(36).slice(2)}`);
    return d;
  };
  const failure = (p: Promise<unknown>) => p.then(() => 'resolved', (e: Error & { code?: string }) => `${e.code} ${e.message}`);

  it('downloads once, keeps it under its checksum, and reuses it', async () => {
    const d = fresh();
    hits.length = 0;
    const path = await downloadArtifact(`${base}/server.tar.gz`, sha, d, { ca });
    expect(path).toBe(join(d, `${sha}.tar.gz`));
    expect(readFileSync(path).equals(archive)).toBe(true);
    expect(await downloadArtifact(`${base}/server.tar.gz`, sha, d, { ca })).toBe(path);
    expect(hits).toEqual(['/server.tar.gz']);
  });

  it('refuses a wrong checksum and keeps nothing', async () => {
    const d = fresh();
    expect(await failure(downloadArtifact(`${base}/server.tar.gz`, 'b'.repeat(64), d, { ca }))).toBe('Conflict backend artifact checksum does not match manifest');
    expect(readdirSync(d)).toEqual([]);
  });

  it('refuses a body over the limit, announced or streamed', async () => {
    const d = fresh();
    const max = archive.length - 1;
    expect(await failure(downloadArtifact(`${base}/server.tar.gz`, sha, d, { ca, maxBytes: max }))).toBe('Conflict backend artifact exceeds maximum size');
    expect(await failure(downloadArtifact(`${base}/chunked.tar.gz`, sha, d, { ca, maxBytes: max }))).toBe('Conflict backend artifact exceeds maximum size');
    expect(readdirSync(d)).toEqual([]);
    expect(await downloadArtifact(`${base}/chunked.tar.gz`, sha, d, { ca, maxBytes: archive.length })).toBe(join(d, `${sha}.tar.gz`));
  });

  it('a body refused before the file was opened on the thread pool still leaves nothing behind', async () => {
    // A busy machine, made certain: a child process with a thread pool of one thread, held in
    // open(2) on a FIFO until the download has failed. A temporary file the download left to the pool
    // to create would appear after its cleanup; the directory is read through the pool, after it.
    const d = fresh();
    const fifo = join(dir.path, `held-${Math.random().toString(36).slice(2)}`);
    execFileSync('mkfifo', [fifo]);
    const child = `
      import { constants, openSync, closeSync } from 'node:fs';
      import { open, readdir } from 'node:fs/promises';
      import { downloadArtifact } from ${JSON.stringify(new URL('./download.ts', import.meta.url).href)};
      const [url, sha, dir, fifo] = process.argv.slice(1);
      const held = open(fifo, 'w'); // the pool's only thread waits for a reader
      const outcome = await downloadArtifact(url, sha, dir, { allowHttp: true, maxBytes: 50 }).then(() => 'resolved', (e) => e.message);
      const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
      await (await held).close();
      closeSync(reader);
      console.log(JSON.stringify({ outcome, left: await readdir(dir) }));
    `;
    const { stdout } = await execFileAsync(process.execPath, ['--input-type=module', '-e', child, `${plain}/chunked.tar.gz`, sha, d, fifo], { env: { ...process.env, UV_THREADPOOL_SIZE: '1' }, timeout: 15_000 });
    expect(JSON.parse(stdout)).toEqual({ outcome: 'backend artifact exceeds maximum size', left: [] });
  });

  it('follows at most 5 redirects, each checked: never to http or to a URL with credentials', async () => {
    expect(await downloadArtifact(`${base}/hop.tar.gz?n=4`, sha, fresh(), { ca })).toMatch(/\.tar\.gz$/);
    expect(await failure(downloadArtifact(`${base}/hop.tar.gz?n=5`, sha, fresh(), { ca }))).toBe('Conflict backend artifact redirect limit exceeded');
    hits.length = 0;
    expect(await failure(downloadArtifact(`${base}/to-http.tar.gz`, sha, fresh(), { ca }))).toBe('Conflict backend artifact URL is not allowed');
    expect(await failure(downloadArtifact(`${base}/to-creds.tar.gz`, sha, fresh(), { ca }))).toBe('Conflict backend artifact URL is not allowed');
    expect(hits).toEqual(['/to-http.tar.gz', '/to-creds.tar.gz']); // the refused targets were never asked
    // Plain http only when allowed (never by the server's own configuration).
    expect(await failure(downloadArtifact(`${plain}/server.tar.gz`, sha, fresh()))).toBe('Conflict backend artifact URL is not allowed');
    expect(await downloadArtifact(`${plain}/server.tar.gz`, sha, fresh(), { allowHttp: true })).toMatch(/\.tar\.gz$/);
  });

  it('reports HTTP errors, an untrusted certificate and an unreachable host as failures', async () => {
    expect(await failure(downloadArtifact(`${base}/missing.tar.gz`, sha, fresh(), { ca }))).toBe('Conflict backend artifact download failed with HTTP 404');
    expect(await failure(downloadArtifact(`${base}/server.tar.gz`, sha, fresh()))).toBe('Conflict backend artifact download failed');
    const closed = createHttp();
    await new Promise<void>((ok) => closed.listen(0, '127.0.0.1', ok));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((ok) => closed.close(ok));
    expect(await failure(downloadArtifact(`https://127.0.0.1:${port}/x.tar.gz`, sha, fresh(), { ca }))).toBe('Conflict backend artifact download failed');
  });

  it('an installed Canvas App whose artifact is a URL: prepare downloads and checks it, start runs it', async () => {
    const p = currentPlatform();
    if (!p) return; // backends run on linux amd64/arm64 only
    const exts = new CanvasExtensions(join(dir.path, 'installed'));
    const mk = (name: string, sum: string) => {
      const src = writeTestExtension(join(dir.path, name), name);
      const m = JSON.parse(readFileSync(join(src.dir, 'canvas-extension.json'), 'utf8'));
      const artifact = { url: `${base}/server.tar.gz`, sha256: sum };
      m.backend.artifacts = { [p]: artifact };
      rmSync(join(src.dir, 'backend'), { recursive: true });
      return import('node:fs').then(({ writeFileSync }) => writeFileSync(join(src.dir, 'canvas-extension.json'), JSON.stringify(m))).then(() => exts.install({ source: src.dir, force: false, enable: true } as never));
    };
    await mk('url-app', sha);
    await mk('bad-sum-app', 'c'.repeat(64));
    const backends = new CanvasBackends(exts, join(dir.path, 'backends'), { ca });
    try {
      const bad = backends.revision('bad-sum-app')!;
      expect(await failure(backends.prepare('bad-sum-app', bad))).toBe('Conflict backend artifact checksum does not match manifest');
      const rev = backends.revision('url-app')!;
      expect((await backends.prepare('url-app', rev)).prepared_revision).toBe(rev);
      expect(existsSync(join(dir.path, 'backends', 'downloads', `${sha}.tar.gz`))).toBe(true);
      const st = await backends.start('url-app', rev);
      expect(st.state).toBe('ready');
      const res = await fetch(`http://127.0.0.1:${st.port}/health`);
      expect(await res.text()).toBe('ok');
    } finally {
      await backends.shutdown();
    }
  });
});
