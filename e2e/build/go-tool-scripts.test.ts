// The scripts that build one Go program into the cache (hack/lib/go-tool.sh: kube-score for the
// chart check, the OCI registry for the licensed chart pulls) must fail when they cannot provide it,
// so that `make test` with Go fails instead of running with those suites skipped. Each runs against
// a throwaway cache, with a `go` that always fails and stand-ins for the binary.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const HACK = join(import.meta.dirname, '../../hack');

function executable(path: string, body: string): void {
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
}

function run(script: string, cache: string, path: string): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    // stdin closed: bash reads ~/.bashrc (which may put a real go on the PATH) when stdin is a socket.
    const child = spawn(script, [], { env: { PATH: path, AGENTYARD_CACHE: cache, HOME: cache }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, out, err }));
  });
}

const SCRIPTS = [
  { script: 'kube-score.sh', name: 'kube-score', versionVar: 'KUBE_SCORE_VERSION', bin: 'kube-score/{v}/kube-score', pkg: 'github.com/zegl/kube-score/cmd/kube-score' },
  { script: 'oci-registry.sh', name: 'oci-registry', versionVar: 'REGISTRY_VERSION', bin: 'registry/{v}/registry', pkg: 'github.com/distribution/distribution/v3/cmd/registry' },
];

describe.each(SCRIPTS)('hack/$script', ({ script, name, versionVar, bin: binPattern, pkg }) => {
  const path = join(HACK, script);
  const version = new RegExp(`${versionVar}:-([0-9.]+)\\}`).exec(readFileSync(path, 'utf8'))![1]!;
  const dir = mkdtempSync(join(tmpdir(), `agentyard-${name}-`));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const cache = join(dir, 'cache');
  const bin = join(cache, binPattern.replace('{v}', version));
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

  it('fails, naming the module, when the program cannot be built', async () => {
    const r = await run(path, cache, withGo);
    expect(r.code).not.toBe(0);
    expect(r.err).toContain(`${name}: error: go install ${pkg}@v${version} failed`);
    expect(r.out).toBe('');
  });

  it('builds nothing once the binary is there, and prints its path', async () => {
    executable(bin, 'exit 0');
    const r = await run(path, cache, withGo);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toBe(`${bin}\n`);
  });

  it('fails when the binary it has does not run', async () => {
    executable(bin, 'exit 3');
    const r = await run(path, cache, withGo);
    expect(r.code).not.toBe(0);
    expect(r.err).toContain(`${name}: error: ${bin} does not run`);
  });

  it('fails without Go, saying so', async () => {
    const r = await run(path, cache, noGo);
    expect(r.code).not.toBe(0);
    expect(r.err).toContain(`${name}: error: Go toolchain not found`);
  });
});
