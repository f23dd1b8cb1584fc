// `agentyard agent-server` as a real process: GET /metrics (open, like /alive; route templates,
// never ids) and a lean start (issue #16): the browser stack, the MCP SDK, turndown and OpenTelemetry
// are not loaded until a conversation asks for them. A module hook in the child lists the packages
// it loaded.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { sampleValue, scrape } from '../util/prometheus-text.ts';
import { tempDir } from './test-support.ts';

const CLI = fileURLToPath(new URL('../cli/main.ts', import.meta.url));

// Appends the package of every module the process loads to a file (one name a line).
const HOOK = (out: string) => `import { registerHooks } from 'node:module';
import { appendFileSync } from 'node:fs';
const seen = new Set();
registerHooks({ load(url, ctx, next) {
  const m = /node_modules\\/((?:@[^/]+\\/)?[^/]+)/.exec(url);
  if (m && !seen.has(m[1])) { seen.add(m[1]); appendFileSync(${JSON.stringify(out)}, m[1] + '\\n'); }
  return next(url, ctx);
} });
`;

let dir: ReturnType<typeof tempDir> | undefined;
let child: ChildProcess | undefined;
afterEach(() => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  child = undefined;
  dir?.remove();
});

function launch(d: string, env: Record<string, string>): Promise<string> {
  child = spawn(process.execPath, [CLI, 'agent-server', '--port', '0', '--host', '127.0.0.1', '--workspace', join(d, 'ws'), '--data-dir', join(d, 'data')], {
    env: { PATH: process.env['PATH'] ?? '', HOME: d, AGENTYARD_LOG_LEVEL: 'error', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise<string>((resolve, reject) => {
    createInterface({ input: child!.stdout! }).on('line', (line) => {
      const m = /\{"listening":"([^"]+)"\}/.exec(line);
      if (m) resolve(m[1]!);
    });
    child!.once('exit', (code) => reject(new Error(`exited with ${code} before listening`)));
  });
}

describe('agent server /metrics and lean start', () => {
  it('serves Prometheus metrics by route template and starts without the browser, MCP, turndown or the OpenTelemetry SDK', async () => {
    dir = tempDir();
    const loaded = join(dir.path, 'loaded.txt');
    writeFileSync(join(dir.path, 'hook.mjs'), HOOK(loaded));
    const url = await launch(dir.path, { OH_SESSION_API_KEYS_0: 'k0', NODE_OPTIONS: `--import=${join(dir.path, 'hook.mjs')}` });
    const key = { 'x-session-api-key': 'k0' };
    const res = await fetch(`${url}/api/conversations/0123456789abcdef0123456789abcdef`, { headers: key });
    expect(res.status).toBe(404);
    expect((await fetch(`${url}/api/conversations/count`, { headers: key })).status).toBe(200);

    const metrics = await fetch(`${url}/metrics`); // no key: scraped like /alive
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).not.toContain('0123456789abcdef');
    const s = await scrape(`${url}/metrics`);
    expect(sampleValue(s, 'http_requests_total', { method: 'GET', route: '/api/conversations/:conversation_id', code: '404' })).toBe(1);
    expect(sampleValue(s, 'http_requests_total', { method: 'GET', route: '/api/conversations/count', code: '200' })).toBe(1);
    expect(sampleValue(s, 'process_resident_memory_bytes')).toBeGreaterThan(0);

    const packages = readFileSync(loaded, 'utf8').split('\n');
    expect(packages).toContain('koa'); // the hook saw the server's own packages
    // (@opentelemetry/api, the small no-op API, is loaded: prom-client's process CPU metric requires it.)
    for (const lazy of ['playwright-core', 'jose', '@modelcontextprotocol/sdk', 'turndown', 'zod', 'ajv', 'tar-stream', '@opentelemetry/sdk-trace', '@opentelemetry/exporter-trace-otlp-http', 'web-tree-sitter']) expect(packages).not.toContain(lazy);
  });
});
