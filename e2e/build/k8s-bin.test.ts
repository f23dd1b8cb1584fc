// hack/k8s-bin.sh must fail when it cannot provide every binary the cluster and chart suites use,
// helm3 included, so that `make test` with Go fails instead of running with suites skipped. Run
// against a throwaway cache whose binaries are stand-ins, with a `go` that always fails.
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { executable, runHackScript } from './hack-script.ts';
import { pinnedKubeVersion } from '../kube/cluster.ts';

const SCRIPT = join(import.meta.dirname, '../../hack/k8s-bin.sh');

const k8sBin = (cache: string, path: string) => runHackScript(SCRIPT, cache, path);

describe('hack/k8s-bin.sh', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentyard-k8s-bin-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const cache = join(dir, 'cache');
  const bin = join(cache, 'k8s', pinnedKubeVersion(), 'bin');
  const failingGo = join(dir, 'go-bin');
  mkdirSync(bin, { recursive: true });
  mkdirSync(failingGo);
  executable(join(failingGo, 'go'), 'echo "go: cannot reach the module proxy" >&2; exit 1');
  for (const name of ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kubectl', 'helm']) executable(join(bin, name), 'exit 0');
  const withGo = `${failingGo}:/usr/bin:/bin`;
  // The system tools the script uses, and no go (some machines have /usr/bin/go).
  const noGo = join(dir, 'no-go-bin');
  mkdirSync(noGo);
  for (const tool of ['bash', 'cut', 'mkdir', 'flock', 'mktemp', 'rm', 'sed', 'grep', 'id']) {
    const found = ['/usr/bin', '/bin'].map((d) => join(d, tool)).find((p) => existsSync(p));
    if (found) symlinkSync(found, join(noGo, tool));
  }

  it('fails, naming it, when helm3 cannot be built', async () => {
    const r = await k8sBin(cache, withGo);
    expect(r.code).not.toBe(0);
    expect(r.err).toContain('k8s-bin: error: building helm v3.');
    expect(r.err).toContain('(bin/helm3, for the Helm < 4 refusal test) failed');
    expect(r.out).toBe('');
  });

  it('succeeds without building anything once every binary is there, and prints the bin dir', async () => {
    executable(join(bin, 'helm3'), 'exit 0');
    const r = await k8sBin(cache, withGo);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toBe(`${bin}\n`);
  });

  it('fails when a binary it has does not run', async () => {
    executable(join(bin, 'kube-apiserver'), 'exit 3');
    const r = await k8sBin(cache, withGo);
    expect(r.code).not.toBe(0);
    expect(r.err).toContain('kube-apiserver does not run');
    executable(join(bin, 'kube-apiserver'), 'exit 0');
  });

  it('fails without Go, saying so', async () => {
    const r = await k8sBin(cache, noGo);
    expect(r.code).not.toBe(0);
    expect(r.err).toContain('k8s-bin: error: Go toolchain not found');
  });
});
