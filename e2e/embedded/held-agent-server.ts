// Test fixture: an agent server behind a loopback proxy that holds the answer to
// POST /api/conversations until a file exists. The conversation is created on the real agent
// server (marker file `created` appears), but the caller does not hear back: a start task held in
// STARTING_CONVERSATION, deterministically. Run as
//   node held-agent-server.ts <hold-dir> agent-server --port 0 ...   (what ProcessRuntime appends)
// It prints the proxy's {"listening": url} line as the agent server would; stopping its process
// group (pause, shutdown) stops the real agent server with it.
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const [holdDir, ...rest] = process.argv.slice(2);
const args = rest.slice(rest.indexOf('agent-server') + 1);
const main = join(import.meta.dirname, '..', '..', 'src', 'cli', 'main.ts');
const child = spawn(process.execPath, [main, 'agent-server', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
const stop = () => {
  child.kill('SIGTERM');
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
child.on('exit', (code) => process.exit(code ?? 1));

const target = await new Promise<URL>((resolve) => {
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const url = /"listening":"([^"]+)"/.exec(line)?.[1];
    if (url) resolve(new URL(url));
    else process.stdout.write(`${line}\n`);
  });
});

const waitForRelease = async () => {
  while (!existsSync(join(holdDir!, 'release'))) await new Promise((r) => setTimeout(r, 50));
};

const proxy = createServer((req, res) => {
  const upstream = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, async (answer) => {
    const chunks: Buffer[] = [];
    for await (const c of answer) chunks.push(c as Buffer);
    if (req.method === 'POST' && req.url === '/api/conversations') {
      writeFileSync(join(holdDir!, 'created'), String(answer.statusCode));
      await waitForRelease();
    }
    res.writeHead(answer.statusCode ?? 502, answer.headers).end(Buffer.concat(chunks));
  });
  upstream.on('error', () => res.writeHead(502).end());
  req.pipe(upstream);
});
proxy.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ listening: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` })}\n`);
});
