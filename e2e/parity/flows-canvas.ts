// Canvas extensions side by side: the same extension package (src/agent-server/canvas/test-extension.ts:
// a bundle, an icon and a Node backend in a .tar.gz) installed on both servers, its backend approved
// and started, and a browser's session, HTTP and WebSocket through /app-backends, as a client sees them.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { dirname, join } from 'node:path';
import WebSocket from 'ws';
import { writeTestExtension } from '../../src/agent-server/canvas/test-extension.ts';
import { KEY, type Side } from './servers.ts';
import type { View } from './flows.ts';

const CONTROL = 'http://localhost:5173';
const NAME = 'parity-app';
const X = `/api/canvas-extensions/installed/${NAME}`;

/** Raw HTTP on the path as written (no dot-segment resolution), with the headers a browser would send. */
function raw(base: string, path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  const u = new URL(base);
  return new Promise((ok, fail) => {
    const req = request({ host: u.hostname, port: u.port, path, method: init.method ?? 'GET', headers: { ...init.headers, ...(init.body !== undefined ? { 'content-length': String(Buffer.byteLength(init.body)) } : {}) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => ok({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString() }));
    });
    req.on('error', fail);
    req.end(init.body);
  });
}

const json = (t: string) => {
  try {
    return JSON.parse(t);
  } catch {
    return t;
  }
};
const keys = (o: unknown) => (o && typeof o === 'object' ? Object.keys(o).sort() : o);
/** A 422's locations, or the type of a bare-sentence detail. */
const locs = (body: any) => (Array.isArray(body?.detail) ? body.detail.map((i: any) => i.loc.join('.')) : typeof body?.detail);

function packageDir(s: Side): string {
  return mkdtempSync(join(dirname(s.workDir), 'canvas-ext-'));
}

export const CANVAS_FLOWS: Record<string, (s: Side) => Promise<View>> = {
  /** Install, list, read, enable, serve the bundle and icon, refuse a bad package, uninstall. */
  async canvas_extensions(s) {
    const ext = writeTestExtension(packageDir(s), NAME);
    const bad = packageDir(s);
    writeTestExtension(bad, 'bad-app', { entrypoint: '../outside.js' });
    const missing = packageDir(s);
    writeFileSync(join(missing, 'README.md'), 'no manifest here');
    const install = await s.api('/api/canvas-extensions/install', { method: 'POST', body: { source: ext.dir } });
    const again = await s.api('/api/canvas-extensions/install', { method: 'POST', body: { source: ext.dir } });
    const forced = await s.api('/api/canvas-extensions/install', { method: 'POST', body: { source: ext.dir, force: true } });
    const list = await s.api('/api/canvas-extensions/installed');
    const one = await s.api(X);
    const enable = await s.api(X, { method: 'PATCH', body: { enabled: true } });
    const bundle = await raw(s.url, `${X}/bundle`, { headers: { 'x-session-api-key': KEY } });
    const icon = await raw(s.url, `${X}/icon`, { headers: { 'x-session-api-key': KEY } });
    const badInstall = await s.api('/api/canvas-extensions/install', { method: 'POST', body: { source: bad } });
    const noManifest = await s.api('/api/canvas-extensions/install', { method: 'POST', body: { source: missing } });
    const view: View = {
      install: install.status,
      install_fields: keys(install.body),
      install_enabled: install.body.enabled,
      install_refs: [install.body.source === ext.dir, install.body.requested_ref, install.body.resolved_ref, install.body.repo_path],
      manifest: install.body.manifest,
      again: again.status,
      forced: [forced.status, forced.body.enabled],
      listed: list.body.canvas_extensions?.map((e: any) => [e.name, e.enabled]),
      one: [one.status, one.body.name, one.body.version],
      enable: [enable.status, enable.body],
      enabled_after: (await s.api(X)).body.enabled,
      bundle: [bundle.status, bundle.headers['cache-control'], bundle.text === ext.bundle],
      bundle_type: String(bundle.headers['content-type']).split(';')[0],
      icon: [icon.status, icon.headers['content-type'], icon.headers['content-security-policy'], icon.headers['x-content-type-options']],
      unknown: (await s.api('/api/canvas-extensions/installed/nope')).status,
      bad_name: (await s.api('/api/canvas-extensions/installed/Bad_Name')).status,
      no_key: (await s.api('/api/canvas-extensions/installed', { key: null })).status,
      no_source: locs((await s.api('/api/canvas-extensions/install', { method: 'POST', body: {} })).body),
      bad_install: badInstall.status,
      bad_install_detail: locs(badInstall.body),
      no_manifest: noManifest.status,
      missing_source: (await s.api('/api/canvas-extensions/install', { method: 'POST', body: { source: join(missing, 'nowhere') } })).status,
      uninstall: (await s.api(X, { method: 'DELETE' })).body,
      after_uninstall: (await s.api(X)).status,
      uninstall_again: (await s.api(X, { method: 'DELETE' })).status,
    };
    return view;
  },

  /** A backend approved, started, reached by a browser session over HTTP and WebSocket, stopped. */
  async canvas_app_backends(s) {
    const ext = writeTestExtension(packageDir(s), NAME);
    await s.api('/api/canvas-extensions/install', { method: 'POST', body: { source: ext.dir, force: true } });
    await s.api(X, { method: 'PATCH', body: { enabled: true } });
    const before = await s.api(`${X}/backend`);
    const revision = before.body.revision as string;
    const unprepared = await s.api(`${X}/backend/start`, { method: 'POST', body: { revision } });
    const wrong = await s.api(`${X}/backend/prepare`, { method: 'POST', body: { revision: 'sha256:other' } });
    const prepared = await s.api(`${X}/backend/prepare`, { method: 'POST', body: { revision } });
    const started = await s.api(`${X}/backend/start`, { method: 'POST', body: { revision } });
    const session = `/app-backends/${NAME}/session`;
    const key = { 'x-session-api-key': KEY };
    const made = await raw(s.ingress, session, { method: 'POST', headers: { ...key, origin: CONTROL } });
    const setCookie = String(made.headers['set-cookie'] ?? '');
    const cookie = setCookie.split(';')[0]!;
    const echo = await raw(s.ingress, `/app-backends/${NAME}/echo/a?x=1&session_api_key=${KEY}`, { headers: { cookie, ...key } });
    const seen = json(echo.text);
    const frames: string[] = [];
    const ws = new WebSocket(`${s.ingress.replace('http', 'ws')}/app-backends/${NAME}/socket`, { headers: { cookie, origin: s.ingress } });
    ws.on('message', (m) => frames.push(String(m)));
    const opened = await new Promise<string>((ok) => ws.once('open', () => ok('open')).once('unexpected-response', (_q, r) => ok(String(r.statusCode))).once('error', (e) => ok(e.message)));
    if (opened === 'open') {
      ws.send('ping');
      const end = Date.now() + 10_000;
      while (frames.length < 2 && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    }
    const refusedWs = await new Promise<string>((ok) => {
      const bad = new WebSocket(`${s.ingress.replace('http', 'ws')}/app-backends/${NAME}/socket`, { headers: { origin: s.ingress } });
      bad.once('open', () => (ok('open'), bad.close())).once('unexpected-response', (_q, r) => ok(String(r.statusCode))).once('error', (e) => ok(e.message));
    });
    const backendRefusedWs = await new Promise<string>((ok) => {
      const bad = new WebSocket(`${s.ingress.replace('http', 'ws')}/app-backends/${NAME}/no-ws`, { headers: { cookie, origin: s.ingress } });
      bad.once('close', (code) => ok(`close ${code}`)).once('unexpected-response', (_q, r) => ok(String(r.statusCode))).once('error', (e) => ok(e.message));
    });
    const wsClosed = new Promise<number>((ok) => (ws.readyState === WebSocket.CLOSED ? ok(-1) : ws.once('close', (code) => ok(code))));
    const info = (await s.api('/server_info', { key: null })).body;
    const view: View = {
      server_info: [info.app_backend_ingress_url === s.ingress, info.capabilities?.includes('canvas_app_backend_bridge_v1')],
      before: [before.status, before.body.state, before.body.prepared_revision, before.body.pid],
      status_fields: keys(before.body),
      // A local install's revision digests the manifest: the same package, the same revision on both.
      revision,
      unprepared: unprepared.status,
      wrong_revision: wrong.status,
      prepared: [prepared.status, prepared.body.state, prepared.body.prepared_revision === revision],
      started: [started.status, started.body.state, typeof started.body.pid, typeof started.body.port],
      session_no_key: (await raw(s.ingress, session, { method: 'POST', headers: { origin: CONTROL } })).status,
      session_no_origin: (await raw(s.ingress, session, { method: 'POST', headers: key })).status,
      session_same_origin: (await raw(s.ingress, session, { method: 'POST', headers: { ...key, origin: s.ingress } })).status,
      session_wrong_host: (await raw(s.ingress, session, { method: 'POST', headers: { ...key, origin: CONTROL, host: 'elsewhere.test' } })).status,
      session: made.status,
      session_fields: keys(json(made.text)),
      session_body: [json(made.text).ingress_url === `${s.ingress}/app-backends/${NAME}/`, json(made.text).iframe_sandbox],
      cookie_attributes: setCookie.split(';').slice(1).map((a) => a.trim().toLowerCase()).sort(),
      echo: [echo.status, echo.headers['x-backend']],
      backend_saw: [seen.url, seen.method, 'cookie' in (seen.headers ?? {}), 'x-session-api-key' in (seen.headers ?? {})],
      without_cookie: (await raw(s.ingress, `/app-backends/${NAME}/echo`, { headers: key })).status,
      post_foreign_origin: (await raw(s.ingress, `/app-backends/${NAME}/echo`, { method: 'POST', headers: { cookie, origin: CONTROL }, body: 'x' })).status,
      post: json((await raw(s.ingress, `/app-backends/${NAME}/echo`, { method: 'POST', headers: { cookie, origin: s.ingress, 'content-type': 'text/plain' }, body: 'payload' })).text).body,
      traversal: (await raw(s.ingress, `/app-backends/${NAME}/a/%252e%252e/x`, { headers: { cookie } })).status,
      redirect: (await raw(s.ingress, `/app-backends/${NAME}/redirect`, { headers: { cookie } })).status,
      env: json((await raw(s.ingress, `/app-backends/${NAME}/env`, { headers: { cookie } })).text),
      ws: opened,
      ws_frames: frames.map((f) => json(f)),
      ws_refused: refusedWs,
      ws_backend_refused: backendRefusedWs,
      stop: await s.api(`${X}/backend/stop`, { method: 'POST' }).then((r) => [r.status, r.body.state, r.body.pid]),
      ws_closed_by_stop: opened === 'open' ? await wsClosed : 'not open',
      after_stop: (await raw(s.ingress, `/app-backends/${NAME}/echo`, { headers: { cookie } })).status,
      logs: await s.api(`${X}/backend/logs`).then((r) => [r.status, /listening on/.test(r.body.logs), keys(r.body)]),
      end_session: (await raw(s.ingress, session, { method: 'DELETE', headers: { ...key, origin: CONTROL, cookie } })).status,
      restart: await s.api(`${X}/backend/start`, { method: 'POST', body: { revision } }).then((r) => r.body.state),
      disable: (await s.api(X, { method: 'PATCH', body: { enabled: false } })).body,
      after_disable: await s.api(`${X}/backend`).then((r) => [r.body.state, r.body.pid]),
      delete_data: await s.api(`${X}/backend/data`, { method: 'DELETE' }).then((r) => [r.status, r.body.state]),
      uninstall: (await s.api(X, { method: 'DELETE' })).status,
      after_uninstall: await s.api(`${X}/backend`).then((r) => [r.status, r.body.state]),
    };
    return view;
  },
};
