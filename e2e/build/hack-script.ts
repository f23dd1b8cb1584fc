// Runs a hack/*.sh build script the way the build-script tests need: against a throwaway cache
// (AGENTYARD_CACHE and HOME), on a PATH of stand-ins, stdin closed (bash reads ~/.bashrc, which may
// put a real go on the PATH, when stdin is a socket), with its exit code and both outputs.
import { spawn } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';

export function executable(path: string, body: string): void {
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
}

export function runHackScript(script: string, cache: string, path: string, args: string[] = []): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(script, args, { env: { PATH: path, AGENTYARD_CACHE: cache, HOME: cache }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, out, err }));
  });
}
