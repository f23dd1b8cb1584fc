// hack/oci-registry.sh must fail when it cannot provide the registry, so that `make test` with Go
// fails instead of running with the licensed chart pull test skipped. Run against a throwaway
// cache, with a `go` that always fails and stand-ins for the binary.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const SCRIPT = join(import.meta.dirname, '../../hack/oci-registry.sh');
const version = /REGISTRY_VERSION:-([0-9.]+)\}/.exec(readFileSync(SCRIPT, 'utf8'))![1]!;

function executable(path: string, body: string): void {
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
}

function script(cache: string, path: string): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    // stdin closed: bash reads ~/.bashrc (which may put a real go on the PATH) when stdin is a socket.
    const child = spawn(SCRIPT, [], { env: { PATH: path, AGENTYARD_CACHE: cache, HOME: cache }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, out, err }));
  });
}

describe('hack/oci-registry.sh', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentyard-oci-registry-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const cache = join(dir, 'cache');
  const bin = join(cache, 'registry', version, 'registry');
  const failingGo = join(dir, 'go-bin');
  mkdirSync(failingGo);
  executable(join(failingGo, 'go'), 'echo "go: cannot reach the module proxy" >&2; exit 1');
  const withGo = `${failingGo}:/usr/bin:/bin`;
  const noGo = join(dir, 'no-go-bin');
  mkdirSync(noGo);
  for (const tool of ['bash', 'mkdir', 'flock', 'mktemp', 'rm', 'mv']) {
    const found = ['/usr/bin', '/bin'].map((d) => join(d, tool)).find((p) => existsSync(p));
    if (found) symlinkSync(found, join(noGo, tool));
  }

  it('fails, naming the module, when the registry cannot be built', async () => {
    const r = await script(cache, withGo);
    expect(r.code).not.toBe(0);
    expect(r.err).toContain(`oci-registry: error: go install github.com/distribution/distribution/v3/cmd/registry@v${version} failed`);
    expect(r.out).toBe('');
  });

  it('builds nothing once the binary is there, and prints its path', async () => {
    executable(bin, 'exit 0');
    const r = await script(cache, withGo);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toBe(`${bin}\n`);
  });

  it('fails when the binary it has does not run', async () => {
    executable(bin, 'exit 3');
    const r = await script(cache, withGo);
    expect(r.code).not.toBe(0);
    expect(r.err).toContain('registry does not run');
  });

  it('fails without Go, saying so', async () => {
    const r = await script(cache, noGo);
    expect(r.code).not.toBe(0);
    expect(r.err).toContain('oci-registry: error: Go toolchain not found');
  });
});
