// Request bodies (#18 findings 4, 6, 7): nothing is read before the key is checked (an
// unauthenticated upload is answered at once and its socket closed, the rest never read), each
// route reads at most its own limit, a message has one size limit named in a 422, and JSON nested
// past MAX_JSON_DEPTH is a 422, not a stack overflow. Real servers over real sockets.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REQUEST_BODY_LIMIT_BYTES } from '../api/agent-server/server.ts';
import { MAX_MESSAGE_BYTES } from '../api/app/requests.ts';
import { startTestServer, tempDir, TEST_KEY, type TestServer } from '../agent-server/test-support.ts';
import { MAX_JSON_DEPTH } from './body.ts';
import { makeSandbox, setStartTask, startConversationId, startHarness, type Harness } from './test-support.ts';

interface UploadResult {
  /** The status line the server answered with. */
  status: number;
  response: string;
  /** Body bytes written before the server answered and closed the socket. */
  sent: number;
  /** The server closed the connection (it did not wait for, or drain, the rest). */
  closed: boolean;
}

/**
 * Declares a large body, sends the first 64 KiB, then trickles 1 KiB every 20 ms (a slow upload)
 * until the server answers and closes, or `declared` bytes are sent.
 */
function slowUpload(baseUrl: string, path: string, headers: Record<string, string>, declared = 50 * 1024 * 1024): Promise<UploadResult> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let response = '';
    let sent = 0;
    let timer: NodeJS.Timeout | undefined;
    const finish = (closed: boolean) => {
      clearInterval(timer);
      socket.destroy();
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(response)?.[1] ?? 0), response, sent, closed });
    };
    socket.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' || err.code === 'EPIPE' ? finish(true) : reject(err)));
    socket.on('data', (c: Buffer) => (response += c.toString('latin1')));
    socket.on('end', () => finish(true));
    socket.on('connect', () => {
      const head = [`POST ${path} HTTP/1.1`, `Host: ${hostname}`, 'Content-Type: application/json', `Content-Length: ${declared}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), '', ''].join('\r\n');
      socket.write(head);
      const first = Buffer.alloc(64 * 1024, 0x20);
      socket.write(first);
      sent = first.length;
      timer = setInterval(() => {
        if (socket.destroyed || sent >= declared) return;
        socket.write(Buffer.alloc(1024, 0x20));
        sent += 1024;
      }, 20);
      // Not closed after 10 s: report what was seen (the assertions fail on it).
      setTimeout(() => finish(false), 10_000).unref();
    });
  });
}

/**
 * POSTs `body` with fetch as a well-behaved client sends it: the whole body at once with its
 * Content-Length (announced), or as a chunked stream of 64 KiB pieces (streamed). A server that
 * closed the socket on the unread rest could make fetch throw ECONNRESET instead of answering.
 */
async function post(url: string, headers: Record<string, string>, body: string, how: 'announced' | 'streamed'): Promise<{ status: number; text: string }> {
  const bytes = Buffer.from(body);
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      for (let o = 0; o < bytes.length; o += 64 * 1024) c.enqueue(bytes.subarray(o, o + 64 * 1024));
      c.close();
    },
  });
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: how === 'announced' ? body : stream, duplex: 'half' } as RequestInit);
  return { status: res.status, text: await res.text() };
}

const nested = (depth: number): unknown => {
  let v: unknown = 'x';
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
};
const deepJson = (depth: number, wrap: (inner: string) => string) => wrap(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`);

describe('application API bodies', () => {
  let h: Harness;
  let conv: string;
  beforeAll(async () => {
    h = await startHarness();
    await makeSandbox(h.store, h.alice.user, 'sb-1', 'RUNNING', { url: 'http://127.0.0.1:1', key: 'sk-1' });
    conv = await startConversationId(h);
    await setStartTask(h.store, conv, 'READY', 'sb-1');
  });
  afterAll(() => h.close());

  it('answers an unauthenticated slow upload with 401 at once and closes it, reading none of the rest', async () => {
    for (const [path, headers] of [
      ['/api/v1/app-conversations', {}],
      ['/api/v1/app-conversations', { Authorization: 'Bearer ay_wrong' }],
      [`/api/v1/app-conversations/${conv}/send-message`, {}],
      ['/api/v1/settings', {}],
      [`/api/v1/webhooks/sb-1/events/${conv}`, { 'X-Session-API-Key': 'sk-wrong' }],
      ['/API/V1/app-conversations', {}],
    ] as const) {
      const r = await slowUpload(h.server.url, path, headers);
      expect(r.status, path).toBe(401);
      expect(r.closed, path).toBe(true);
      expect(r.response.toLowerCase(), path).toContain('connection: close');
      expect(r.sent, path).toBeLessThan(1024 * 1024); // of 50 MiB declared
    }
  });

  it('refuses a body over the route limit with 413 before reading it, also when authenticated', async () => {
    const r = await slowUpload(h.server.url, '/api/v1/app-conversations', { Authorization: `Bearer ${h.alice.key}` });
    expect(r.status).toBe(413);
    expect(r.closed).toBe(true);
    expect(r.response).toMatch(/larger than this route takes \(\d+ bytes\)/);
    // Small routes take small bodies: 2 MiB of settings is refused, 2 MiB of a start request is not (it is a 422 on the message).
    const big = 'x'.repeat(2 * 1024 * 1024);
    expect((await h.call('POST', '/api/v1/settings', { body: { git_login: big } })).status).toBe(413);
    expect((await h.call('POST', '/api/v1/app-conversations', { body: { initial_message: { role: 'user', content: [{ type: 'text', text: big }] } } })).status).toBe(422);
  });

  it('a client sending a whole oversized body at once, announced or streamed, is given the 413 (or 401), not a reset', async () => {
    const big = JSON.stringify({ git_login: 'x'.repeat(12 * 1024 * 1024) });
    for (const how of ['announced', 'streamed'] as const) {
      const r = await post(`${h.server.url}/api/v1/settings`, { authorization: `Bearer ${h.alice.key}` }, big, how);
      expect(r.status, how).toBe(413);
      expect(r.text, how).toMatch(/larger than this route takes/);
    }
    expect((await post(`${h.server.url}/api/v1/settings`, {}, big, 'announced')).status).toBe(401);
  });

  it('refuses a message over MAX_MESSAGE_BYTES with a 422 naming the field, and starts nothing', async () => {
    const text = 'y'.repeat(MAX_MESSAGE_BYTES);
    const before = (await h.call('GET', '/api/v1/app-conversations/count')).body;
    const start = await h.call('POST', '/api/v1/app-conversations', { body: { initial_message: { role: 'user', content: [{ type: 'text', text }] } } });
    expect(start.status).toBe(422);
    expect(start.body.detail).toEqual([{ loc: ['body', 'initial_message'], msg: expect.stringMatching(/^A message is limited to 1 MiB \(JSON-encoded\); this one has \d+ bytes$/), type: 'too_long' }]);
    expect((await h.call('GET', '/api/v1/app-conversations/count')).body).toBe(before);
    const send = await h.call('POST', `/api/v1/app-conversations/${conv}/send-message`, { body: { content: [{ type: 'text', text }] } });
    expect(send.status).toBe(422);
    expect(send.body.detail[0]).toMatchObject({ loc: ['body', 'content'], type: 'too_long' });
    // Just under the limit is fine.
    const fits = await h.call('POST', '/api/v1/app-conversations', { body: { initial_message: { role: 'user', content: [{ type: 'text', text: 'z'.repeat(MAX_MESSAGE_BYTES - 200) }] } } });
    expect(fits.status).toBe(200);
  });

  it(`answers JSON nested deeper than ${MAX_JSON_DEPTH} levels with 422 at body, on every kind of route`, async () => {
    const tooDeep = { loc: ['body'], msg: `JSON nested deeper than ${MAX_JSON_DEPTH} levels`, type: 'json_too_deep' };
    for (const depth of [MAX_JSON_DEPTH + 1, 5_000, 100_000]) {
      const start = await h.call('POST', '/api/v1/app-conversations', { rawBody: deepJson(depth, (d) => `{"observability_metadata":${d}}`) });
      expect(start, `start ${depth}`).toMatchObject({ status: 422, body: { detail: [tooDeep] } });
      const patch = await h.call('PATCH', `/api/v1/app-conversations/${conv}`, { rawBody: deepJson(depth, (d) => `{"title":${d}}`) });
      expect(patch, `patch ${depth}`).toMatchObject({ status: 422, body: { detail: [tooDeep] } });
      const sink = await h.call('POST', `/api/v1/webhooks/sb-1/events/${conv}`, { key: null, headers: { 'x-session-api-key': 'sk-1' }, rawBody: deepJson(depth, (d) => `{"items":[{"seq":1,"event":${d}}]}`) });
      expect(sink, `sink ${depth}`).toMatchObject({ status: 422, body: { detail: [tooDeep] } });
    }
    // Nesting within the limit is validated as usual (a 422 on the field, not on the depth).
    const ok = await h.call('POST', '/api/v1/app-conversations', { body: { observability_metadata: { k: nested(MAX_JSON_DEPTH - 2) } } });
    expect(ok.status).toBe(422);
    expect(ok.body.detail[0].type).not.toBe('json_too_deep');
  });
});

describe('agent server bodies', () => {
  const dir = tempDir();
  let s: TestServer;
  beforeAll(async () => (s = await startTestServer(dir.path)));
  afterAll(async () => {
    await s.close();
    dir.remove();
  });

  it('checks the session key before reading a body, and refuses deep JSON with 422', async () => {
    const r = await slowUpload(s.url, '/api/conversations', {});
    expect(r).toMatchObject({ status: 401, closed: true });
    expect(r.sent).toBeLessThan(1024 * 1024);
    const deep = await s.api('/api/conversations', { method: 'POST', rawBody: deepJson(50_000, (d) => `{"tags":${d}}`) });
    expect(deep).toMatchObject({ status: 422, body: { detail: [{ loc: ['body'], type: 'json_too_deep' }] } });
    expect(TEST_KEY).toBeTruthy();
  });

  it('gives a client sending a body over REQUEST_BODY_LIMIT_BYTES, announced or streamed, the 413, not a reset', async () => {
    const big = JSON.stringify({ tags: { x: 'x'.repeat(REQUEST_BODY_LIMIT_BYTES) } });
    for (const how of ['announced', 'streamed'] as const) {
      expect((await post(`${s.url}/api/conversations`, { 'x-session-api-key': TEST_KEY }, big, how)).status, how).toBe(413);
    }
    expect((await s.api('/api/conversations/search')).body.items).toEqual([]);
  });
});
