// `make test` must not pass with the cluster suites silently skipped: with Go on the PATH it builds
// the Kubernetes binaries strictly and runs the suites with AGENTYARD_REQUIRE_CLUSTER_TESTS=1.
// make runs here with a stand-in npm that reports what it was given, and its prerequisites
// (npm ci, k8s-bin, kube-score, oci-registry, keycloak, seaweedfs, gitea, openhands-app-server, test-deps, k8s-node) marked done with -o, so nothing is built or installed.
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const REPO = join(import.meta.dirname, '../..');

describe('make test', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentyard-make-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  // Two PATHs of stand-ins: the same tools, with and without a `go`.
  const noGo = join(dir, 'no-go');
  const withGo = join(dir, 'with-go');
  for (const bin of [noGo, withGo]) {
    mkdirSync(bin);
    for (const tool of ['bash', 'sh', 'env', 'cat']) symlinkSync(`/usr/bin/${tool}`, join(bin, tool));
    writeFileSync(join(bin, 'npm'), '#!/bin/sh\necho "npm $* require=${AGENTYARD_REQUIRE_CLUSTER_TESTS:-unset}"\n');
    chmodSync(join(bin, 'npm'), 0o755);
  }
  writeFileSync(join(withGo, 'go'), '#!/bin/sh\nexit 1\n');
  chmodSync(join(withGo, 'go'), 0o755);

  // stdin closed: bash reads ~/.bashrc (and may find a go there) when stdin is a socket, as Node's pipes are.
  const make = (path: string, args: string[], extra: Record<string, string> = {}) =>
    new Promise<string>((resolve, reject) => {
      const child = spawn('/usr/bin/make', ['-s', '--no-print-directory', ...args], { cwd: REPO, env: { PATH: path, ...extra }, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.once('error', reject);
      child.once('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`make ${args.join(' ')}: exit ${code}\n${err}`))));
    });

  it('requires the cluster suites when Go is installed, and says so to vitest', async () => {
    expect(await make(withGo, ['-o', 'deps', '-o', 'k8s-bin', '-o', 'kube-score', '-o', 'oci-registry', '-o', 'keycloak', '-o', 'seaweedfs', '-o', 'gitea', '-o', 'openhands-app-server', '-o', 'test-deps', '-o', 'k8s-node', 'test'])).toBe('npm test require=1\n');
    // A failed build fails the run: k8s-bin is the bare script, no fallback.
    expect(await make(withGo, ['-n', 'k8s-bin'])).toBe('hack/k8s-bin.sh\n');
    expect(await make(withGo, ['-n', 'kube-score'])).toBe('hack/kube-score.sh >/dev/null\n');
    expect(await make(withGo, ['-n', 'oci-registry'])).toBe('hack/oci-registry.sh >/dev/null\n');
    expect(await make(withGo, ['-n', 'openhands-app-server'])).toBe('hack/openhands-app-server.sh >/dev/null\n');
    expect(await make(withGo, ['-n', 'keycloak'])).toBe('hack/keycloak.sh >/dev/null\n');
    // The real node of e2e/node too (its agentyard image is built by the suites as they start).
    expect(await make(withGo, ['-o', 'deps', '-o', 'k8s-bin', '-o', 'test-deps', '-n', 'k8s-node'])).toBe('hack/k8s-node.sh base\n');
  });

  it('without Go skips them with a warning instead', async () => {
    expect(await make(noGo, ['-o', 'deps', '-o', 'k8s-bin', '-o', 'kube-score', '-o', 'oci-registry', '-o', 'keycloak', '-o', 'seaweedfs', '-o', 'gitea', '-o', 'openhands-app-server', '-o', 'test-deps', '-o', 'k8s-node', 'test'])).toBe('npm test require=0\n');
    expect(await make(noGo, ['-n', 'k8s-bin'])).toMatch(/^hack\/k8s-bin\.sh \|\| \{[^]*WARNING: no Kubernetes binaries[^]*SKIPPED/);
    expect(await make(noGo, ['-n', 'kube-score'])).toMatch(/^hack\/kube-score\.sh >\/dev\/null \|\| echo "WARNING: no kube-score[^]*SKIPPED/);
    expect(await make(noGo, ['-n', 'oci-registry'])).toMatch(/^hack\/oci-registry\.sh >\/dev\/null \|\| echo "WARNING: no OCI registry[^]*SKIPPED/);
    expect(await make(noGo, ['-n', 'openhands-app-server'])).toMatch(/^hack\/openhands-app-server\.sh >\/dev\/null \|\| echo "WARNING: no OpenHands app server[^]*SKIPPED/);
    expect(await make(noGo, ['-n', 'keycloak'])).toMatch(/^hack\/keycloak\.sh >\/dev\/null \|\| echo "WARNING: no Keycloak[^]*SKIPPED/);
    expect(await make(noGo, ['-o', 'deps', '-o', 'k8s-bin', '-o', 'test-deps', '-n', 'k8s-node'])).toMatch(/^hack\/k8s-node\.sh base \|\| \{[^]*WARNING: no real test node[^]*SKIPPED/);
  });

  it('lets CI require them (or a developer waive them) explicitly', async () => {
    expect(await make(noGo, ['-o', 'deps', '-o', 'k8s-bin', '-o', 'kube-score', '-o', 'oci-registry', '-o', 'keycloak', '-o', 'seaweedfs', '-o', 'gitea', '-o', 'openhands-app-server', '-o', 'test-deps', '-o', 'k8s-node', 'test'], { AGENTYARD_REQUIRE_CLUSTER_TESTS: '1' })).toBe('npm test require=1\n');
    expect(await make(noGo, ['-n', 'k8s-bin'], { AGENTYARD_REQUIRE_CLUSTER_TESTS: '1' })).toBe('hack/k8s-bin.sh\n');
    expect(await make(withGo, ['-o', 'deps', '-o', 'k8s-bin', '-o', 'kube-score', '-o', 'oci-registry', '-o', 'keycloak', '-o', 'seaweedfs', '-o', 'gitea', '-o', 'openhands-app-server', '-o', 'test-deps', '-o', 'k8s-node', 'test'], { AGENTYARD_REQUIRE_CLUSTER_TESTS: '0' })).toBe('npm test require=0\n');
  });

  it('installs quietly: one progress line, then npm errors only (no EBADENGINE screen from an older system Node)', async () => {
    expect(await make(withGo, ['-n', '-B', 'node_modules/.install-stamp'])).toMatch(
      /^echo "Installing dependencies[^\n]*"\nnpm ci --no-audit --no-fund --loglevel=error\ntouch node_modules\/\.install-stamp\n$/,
    );
  });

  it('leaves the other targets as they were', async () => {
    expect(await make(withGo, ['-o', 'deps', 'test-unit'])).toBe('npm run test:unit require=unset\n');
  });
});
