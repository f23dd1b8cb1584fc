// The scripts that build one Go program into the cache (hack/lib/go-tool.sh: kube-score for the
// chart check, the OCI registry for the licensed chart pulls) must fail when they cannot provide it,
// so that `make test` with Go fails instead of running with those suites skipped. Each runs against
// a throwaway cache, with a `go` that always fails and stand-ins for the binary.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { executable, runHackScript } from './hack-script.ts';

const HACK = join(import.meta.dirname, '../../hack');


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
    const r = await runHackScript(path, cache, withGo);
    expect(r.code).not.toBe(0);
    expect(r.err).toContain(`${name}: error: go install ${pkg}@v${version} failed`);
    expect(r.out).toBe('');
  });

  it('builds nothing once the binary is there, and prints its path', async () => {
    executable(bin, 'exit 0');
    const r = await runHackScript(path, cache, withGo);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toBe(`${bin}\n`);
  });

  it('fails when the binary it has does not run', async () => {
    executable(bin, 'exit 3');
    const r = await runHackScript(path, cache, withGo);
    expect(r.code).not.toBe(0);
    expect(r.err).toContain(`${name}: error: ${bin} does not run`);
  });

  it('fails without Go, saying so', async () => {
    const r = await runHackScript(path, cache, noGo);
    expect(r.code).not.toBe(0);
    expect(r.err).toContain(`${name}: error: Go toolchain not found`);
  });
});
