import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const script = join(import.meta.dirname, '..', '..', 'bin', 'agentyard');

/** Every file under `dir`, recursively. */
function files(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => e.name);
}

describe('agentyard command start', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it("writes the compile cache once the command's modules are loaded, not only at exit (Node then frees its in-memory copy)", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentyard-cli-'));
    dirs.push(dir);
    const cache = join(dir, 'compile-cache');
    const child = spawn(script, ['agent-server', '--port', '0', '--host', '127.0.0.1', '--workspace', join(dir, 'work'), '--data-dir', join(dir, 'data')], {
      env: { ...process.env, NODE_COMPILE_CACHE: cache, AGENTYARD_LOG_LEVEL: 'error' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise((r) => child.once('exit', r));
    try {
      // The agent server prints {"listening": ...} once it serves; it has not exited, so nothing was written at exit.
      await new Promise<void>((resolve, reject) => {
        let out = '';
        child.stdout!.on('data', (d: Buffer) => {
          out += d.toString();
          if (out.includes('"listening"')) resolve();
        });
        child.once('exit', (code) => reject(new Error(`agent-server exited (${code}) before listening`)));
      });
      expect(child.exitCode).toBeNull();
      // One entry per module at least (stripped TypeScript and code cache): hundreds for an agent server.
      expect(files(cache).length).toBeGreaterThan(200);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  }, 60_000);
});
