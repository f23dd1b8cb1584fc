// Raw HTTP for tests that need what fetch will not do: a Host or Origin header of their own, and the
// path sent as written (a URL object resolves dot segments, %2e%2e included).
import { request } from 'node:http';

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

export function rawRequest(url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<RawResponse> {
  return new Promise((ok, fail) => {
    const u = new URL(url);
    const path = url.slice(u.origin.length);
    const length = init.body !== undefined ? { 'content-length': String(Buffer.byteLength(init.body)) } : {};
    const req = request({ host: u.hostname, port: u.port, path, method: init.method ?? 'GET', headers: { ...init.headers, ...length } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => ok({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString() }));
    });
    req.on('error', fail);
    req.end(init.body);
  });
}
