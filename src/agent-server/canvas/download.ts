// Backend artifacts a Canvas App's manifest names by URL (OpenHands 1.58 canvas_extensions/backend.py's
// contract): fetched over HTTPS only (plain HTTP only when the server is told to allow it, which
// OpenHands' server never is), no credentials or fragment in any URL, at most 5 redirects, each
// checked again before it is followed (so an https artifact cannot be bounced to http or to a URL
// with credentials), 120 s without progress ends it, at most 1 GiB (the announced length and the
// bytes received), and the SHA-256 must be the manifest's. The archive is kept under its checksum,
// so an approved revision is downloaded once; a failed download leaves nothing behind.
import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, mkdirSync, openSync, renameSync, rmSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { rootCertificates } from 'node:tls';
import { Conflict } from '../../api/errors.ts';

export const MAX_ARTIFACT_BYTES = 1024 * 1024 * 1024;
const MAX_REDIRECTS = 5;
const TIMEOUT_MS = 120_000;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export interface DownloadOptions {
  maxBytes?: number;
  /** Plain http:// too (tests, air-gapped mirrors); never the default. */
  allowHttp?: boolean;
  /** More CAs to trust besides the system's (NODE_EXTRA_CA_CERTS does the same for the whole process). */
  ca?: string | Buffer;
  /** No progress for this long ends the download. */
  timeoutMs?: number;
}

async function sha256File(path: string): Promise<string> {
  const h = createHash('sha256');
  await pipeline(createReadStream(path), h);
  return h.digest('hex');
}

function allowedUrl(raw: string, allowHttp: boolean): URL {
  let u: URL | undefined;
  try {
    u = new URL(raw);
  } catch {
    /* refused below */
  }
  const schemes = allowHttp ? ['https:', 'http:'] : ['https:'];
  if (!u || !schemes.includes(u.protocol) || !u.hostname || u.username || u.password || u.hash) throw new Conflict('backend artifact URL is not allowed');
  return u;
}

function get(u: URL, o: DownloadOptions): Promise<IncomingMessage> {
  const send = u.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((ok, fail) => {
    const req = send(u, {
      method: 'GET',
      headers: { accept: 'application/octet-stream', 'accept-encoding': 'identity', 'user-agent': 'agentyard-agent-server' },
      timeout: o.timeoutMs ?? TIMEOUT_MS,
      ...(o.ca ? { ca: [...rootCertificates, o.ca.toString()] } : {}),
    });
    req.on('response', ok);
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', fail);
    req.end();
  });
}

/** Downloads `url` into `dir` as `<sha256>.tar.gz` (or reuses it) and returns its path. */
export async function downloadArtifact(url: string, sha256: string, dir: string, o: DownloadOptions = {}): Promise<string> {
  const max = o.maxBytes ?? MAX_ARTIFACT_BYTES;
  mkdirSync(dir, { recursive: true });
  const dest = join(dir, `${sha256}.tar.gz`);
  if (existsSync(dest) && (await sha256File(dest)) === sha256) return dest;
  rmSync(dest, { force: true });
  const tmp = join(dir, `.${sha256}.tar.gz.${randomUUID()}.tmp`);
  let current = allowedUrl(url, !!o.allowHttp);
  try {
    for (let redirects = 0; ; redirects++) {
      let res: IncomingMessage;
      try {
        res = await get(current, o);
      } catch {
        throw new Conflict('backend artifact download failed');
      }
      const code = res.statusCode ?? 0;
      if (REDIRECTS.has(code)) {
        res.resume();
        const location = res.headers.location;
        if (!location || redirects === MAX_REDIRECTS) throw new Conflict('backend artifact redirect limit exceeded');
        current = allowedUrl(new URL(location, current).href, !!o.allowHttp);
        continue;
      }
      if (code < 200 || code >= 300) {
        res.resume();
        throw new Conflict(`backend artifact download failed with HTTP ${code}`);
      }
      const announced = res.headers['content-length'];
      if (announced !== undefined && Number(announced) > max) {
        res.destroy();
        throw new Conflict('backend artifact exceeds maximum size');
      }
      const h = createHash('sha256');
      let received = 0;
      // The temporary file is created here, before any byte arrives, and not by createWriteStream:
      // that opens its file later, on libuv's thread pool, so a body refused before the pool got to
      // it (a busy machine) created the file after the cleanup below had run, and it stayed.
      const out = createWriteStream(tmp, { fd: openSync(tmp, 'wx') });
      try {
        await pipeline(
          res,
          async function* (source: AsyncIterable<Buffer>) {
            for await (const chunk of source) {
              received += chunk.length;
              if (received > max) throw new Conflict('backend artifact exceeds maximum size');
              h.update(chunk);
              yield chunk;
            }
          },
          out,
        );
      } catch (e) {
        throw e instanceof Conflict ? e : new Conflict('backend artifact download failed');
      }
      if (h.digest('hex') !== sha256) throw new Conflict('backend artifact checksum does not match manifest');
      renameSync(tmp, dest);
      return dest;
    }
  } finally {
    rmSync(tmp, { force: true });
  }
}
