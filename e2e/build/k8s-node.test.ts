// hack/k8s-node.sh must fail, naming what is missing, rather than leave e2e/node to skip quietly
// when `make test` requires the cluster suites. Run against a throwaway cache with a PATH of
// chosen tools (no real build happens).
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runHackScript } from './hack-script.ts';

const SCRIPT = join(import.meta.dirname, '../../hack/k8s-node.sh');

const k8sNode = (cache: string, path: string) => runHackScript(SCRIPT, cache, path);

describe('hack/k8s-node.sh', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentyard-k8s-node-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const cache = join(dir, 'cache');
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  for (const tool of ['bash', 'cut', 'mkdir', 'flock', 'mktemp', 'rm', 'sed', 'grep', 'id', 'dirname']) {
    const found = ['/usr/bin', '/bin'].map((d) => join(d, tool)).find((p) => existsSync(p));
    if (found) symlinkSync(found, join(bin, tool));
  }

  it('fails without Go, saying so', async () => {
    const r = await k8sNode(cache, bin);
    expect(r.code).not.toBe(0);
    expect(r.err).toContain('k8s-node: error: Go toolchain not found');
    expect(r.out).toBe('');
  });

  it.skipIf(process.getuid?.() !== 0)('fails naming the Debian program it lacks', async () => {
    writeFileSync(join(bin, 'go'), '#!/bin/sh\nexit 1\n');
    chmodSync(join(bin, 'go'), 0o755);
    const r = await k8sNode(cache, bin);
    expect(r.code).not.toBe(0);
    expect(r.err).toContain('k8s-node: error: buildah not found: run hack/test-deps.sh (as root)');
  });
});
