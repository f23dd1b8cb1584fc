// `agentyard support-bundle --upload <url>`: sends the redacted bundle to the vendor's receiver over
// HTTPS, authenticated with the installation's upload token, retrying what a retry can fix.
import { createReadStream, readFileSync, statSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { basename } from 'node:path';
import { UNTRUSTED_TLS_CODES } from '../util/tls-errors.ts';

/** The Secret (release namespace) and key the upload token is read from when the env var is unset. */
export const UPLOAD_SECRET = 'agentyard-support-upload';
export const UPLOAD_SECRET_KEY = 'token';
export const UPLOAD_TOKEN_ENV = 'AGENTYARD_SUPPORT_UPLOAD_TOKEN';

export class UploadError extends Error {}

function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  return h === '::1';
}

/**
 * The receiver's URL, or why it is refused: plain http would carry the bundle and the upload token
 * in clear over every network in between, so only loopback (a receiver on this machine, or one
 * reached through `kubectl port-forward`/an SSH tunnel) may use it. Credentials in the URL are
 * refused because URLs end up in shell history and proxy logs.
 */
export function uploadUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UploadError(`--upload: ${JSON.stringify(raw)} is not a URL (expected https://host/path)`);
  }
  if (url.username || url.password) throw new UploadError('--upload: the URL carries credentials; give the token in AGENTYARD_SUPPORT_UPLOAD_TOKEN or the agentyard-support-upload Secret instead');
  if (url.protocol === 'https:') return url;
  if (url.protocol === 'http:' && isLoopback(url.hostname)) return url;
  if (url.protocol === 'http:') throw new UploadError(`--upload: refusing plain http to ${url.host}: the bundle and the upload token would cross the network unencrypted. Use https (plain http is allowed to loopback only, e.g. through kubectl port-forward)`);
  throw new UploadError(`--upload: unsupported scheme ${url.protocol} (expected https)`);
}

export interface UploadOptions {
  token: string;
  /** PEM CA bundle trusted in addition to the system's (and NODE_EXTRA_CA_CERTS). */
  caFile?: string;
  /** Attempts in all, default 4. */
  attempts?: number;
  /** Wait before retry n (1-based); default 1 s, 2 s, 4 s... */
  backoffMs?: (retry: number) => number;
  /** Per-attempt time limit, default 5 minutes. */
  timeoutMs?: number;
  log?: (line: string) => void;
}

export interface UploadResult {
  status: number;
  body: string;
  attempts: number;
}

// A certificate the client does not trust is a setting to fix, not a hiccup to retry.
const TLS_CODES = UNTRUSTED_TLS_CODES;

function retryable(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

function attempt(file: string, url: URL, opts: UploadOptions, ca: Buffer | undefined): Promise<{ status: number; body: string }> {
  const size = statSync(file).size;
  const headers = {
    'content-type': 'application/gzip',
    'content-length': String(size),
    authorization: `Bearer ${opts.token}`,
    'x-agentyard-bundle-name': basename(file),
  };
  return new Promise((resolve, reject) => {
    const onResponse = (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let kept = 0;
      res.on('data', (c: Buffer) => {
        if (kept < 4096) chunks.push(c);
        kept += c.length;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8').slice(0, 4096) }));
      res.on('error', reject);
    };
    const req = url.protocol === 'https:' ? httpsRequest(url, { method: 'POST', headers, ...(ca ? { ca: [ca] } : {}) }, onResponse) : httpRequest(url, { method: 'POST', headers }, onResponse);
    req.setTimeout(opts.timeoutMs ?? 300_000, () => req.destroy(Object.assign(new Error(`no answer within ${(opts.timeoutMs ?? 300_000) / 1000} s`), { code: 'ETIMEDOUT' })));
    req.on('error', reject);
    createReadStream(file).on('error', (err) => req.destroy(err)).pipe(req);
  });
}

/** POSTs the bundle file; throws UploadError with what to do when the receiver does not take it. */
export async function uploadBundle(file: string, url: URL, opts: UploadOptions): Promise<UploadResult> {
  const attempts = opts.attempts ?? 4;
  const backoff = opts.backoffMs ?? ((n: number) => 1000 * 2 ** (n - 1));
  const log = opts.log ?? (() => {});
  let ca: Buffer | undefined;
  if (opts.caFile) {
    try {
      ca = readFileSync(opts.caFile);
    } catch (err) {
      throw new UploadError(`--ca-file: cannot read ${opts.caFile}: ${(err as Error).message}`);
    }
  }
  const where = `${url.origin}${url.pathname}`;
  let last = '';
  for (let n = 1; n <= attempts; n++) {
    if (n > 1) {
      const wait = backoff(n - 1);
      log(`upload attempt ${n - 1} of ${attempts} failed (${last}); retrying in ${wait} ms`);
      await new Promise((r) => setTimeout(r, wait));
    }
    try {
      const res = await attempt(file, url, opts, ca);
      if (res.status >= 200 && res.status < 300) return { ...res, attempts: n };
      const said = res.body.trim() ? `: ${res.body.trim().slice(0, 300)}` : '';
      if (res.status === 401 || res.status === 403) {
        throw new UploadError(`upload to ${where} refused with ${res.status}${said}. The upload token was not accepted: check ${UPLOAD_TOKEN_ENV} or the Secret ${UPLOAD_SECRET} (key ${UPLOAD_SECRET_KEY}) in the release namespace`);
      }
      if (res.status >= 300 && res.status < 400) throw new UploadError(`upload to ${where} answered ${res.status} (a redirect, not followed so the token goes nowhere else): use the final URL`);
      last = `HTTP ${res.status}${said}`;
      if (!retryable(res.status)) throw new UploadError(`upload to ${where} failed with ${last}`);
    } catch (err) {
      if (err instanceof UploadError) throw err;
      const e = err as NodeJS.ErrnoException;
      if (e.code && TLS_CODES.test(e.code)) {
        throw new UploadError(`upload to ${where}: the receiver's certificate is not trusted (${e.code}: ${e.message}). Pass its CA with --ca-file <pem> or NODE_EXTRA_CA_CERTS`);
      }
      last = `${e.code ?? 'error'}: ${e.message}`;
    }
  }
  throw new UploadError(`upload to ${where} failed after ${attempts} attempts; last: ${last}. The bundle is kept; upload it again later or send it another way`);
}
