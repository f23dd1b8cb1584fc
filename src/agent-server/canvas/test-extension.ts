// A real Canvas extension package for tests (ours, and e2e/parity against OpenHands): a manifest, a
// bundle, an SVG icon, and a backend artifact (.tar.gz with its SHA-256) whose executable is a small
// Node server: GET /health, /echo (what it received), /env (its environment's names), /redirect,
// /exit?code=N, and a WebSocket echo (with `ws`, loaded from this checkout by absolute path) that
// refuses paths under /no-ws.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const WS_MODULE = fileURLToPath(new URL('../../../node_modules/ws/wrapper.mjs', import.meta.url));

const SERVER = `#!/usr/bin/env node
import { createServer } from 'node:http';
const [port, wsModule] = process.argv.slice(2);
const { WebSocketServer } = await import(wsModule);
const server = createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    if (url.pathname === '/health') return res.end('ok');
    if (url.pathname === '/redirect') { res.writeHead(302, { location: 'http://169.254.169.254/' }); return res.end(); }
    if (url.pathname === '/exit') { res.end('bye'); setTimeout(() => process.exit(Number(url.searchParams.get('code') ?? 3)), 10); return; }
    if (url.pathname === '/env') { res.setHeader('content-type', 'application/json'); return res.end(JSON.stringify(Object.keys(process.env).sort())); }
    res.setHeader('content-type', 'application/json');
    res.setHeader('x-backend', 'yes');
    res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString() }));
  });
});
const wss = new WebSocketServer({ server, verifyClient: (info) => !info.req.url.startsWith('/no-ws'), handleProtocols: (offered) => (offered.has('canvas.v1') ? 'canvas.v1' : false) });
wss.on('connection', (ws, req) => {
  ws.send(JSON.stringify({ hello: req.url, cookie: req.headers.cookie ?? null, key: req.headers['x-session-api-key'] ?? null, protocol: ws.protocol || null }));
  ws.on('message', (m) => (String(m) === 'close-4001' ? ws.close(4001, 'asked') : ws.send('echo:' + m)));
});
server.listen(Number(port), '127.0.0.1', () => console.log('listening on', port));
process.on('SIGTERM', () => { console.log('stopping'); process.exit(0); });
`;

export interface TestExtension {
  dir: string;
  name: string;
  bundle: string;
}

/** Writes the package into `dir` and returns it; `manifest` overrides fields of the manifest. */
export function writeTestExtension(dir: string, name = 'hello-app', manifest: Record<string, unknown> = {}): TestExtension {
  const bundle = `export default function mount(el) { el.textContent = 'hello from ${name}'; }\n`;
  mkdirSync(join(dir, 'dist'), { recursive: true });
  writeFileSync(join(dir, 'dist', 'index.js'), bundle);
  writeFileSync(join(dir, 'icon.svg'), '<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>');
  const art = join(dir, 'artifact-src');
  mkdirSync(join(art, 'bin'), { recursive: true });
  writeFileSync(join(art, 'bin', 'server'), SERVER);
  chmodSync(join(art, 'bin', 'server'), 0o755);
  mkdirSync(join(dir, 'backend'), { recursive: true });
  const archive = join(dir, 'backend', 'server.tar.gz');
  // --mtime and sorted names: the same bytes (and SHA-256) every time.
  execFileSync('tar', ['--sort=name', '--mtime=@0', '--owner=0', '--group=0', '--numeric-owner', '-czf', archive, '-C', art, 'bin']);
  const sha256 = createHash('sha256').update(readFileSync(archive)).digest('hex');
  const artifact = { path: 'backend/server.tar.gz', sha256 };
  writeFileSync(
    join(dir, 'canvas-extension.json'),
    JSON.stringify({
      schema_version: 1,
      name,
      display_name: 'Hello App',
      version: '1.0.0',
      description: 'A test Canvas App',
      entrypoint: 'dist/index.js',
      icon: 'icon.svg',
      contributes: { pages: [{ id: 'main', title: 'Hello', path: '/hello' }] },
      backend: { schema_version: 1, artifacts: { 'linux-amd64': artifact, 'linux-arm64': artifact }, argv: ['{artifact_dir}/bin/server', '{port}', WS_MODULE], health: { path: '/health', timeout_seconds: 20 }, inherit_environment: ['PATH'] },
      ...manifest,
    }),
  );
  return { dir, name, bundle };
}
