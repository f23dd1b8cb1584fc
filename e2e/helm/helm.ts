// Helm 4 (and, when present, Helm 3) from the cache hack/k8s-bin.sh fills, run with a throwaway home
// so that no user configuration or repository cache leaks into the tests.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { requiredForTests } from '../../src/testing/required/required.ts';
import { kubeBinDir } from '../kube/cluster.ts';

export const REPO = join(import.meta.dirname, '../..');
export const CHART = join(REPO, 'charts/agentyard');
export const CLI = join(REPO, 'src/cli/main.ts');
export const run = promisify(execFile);

function binary(name: string): string | undefined {
  const dir = kubeBinDir();
  const found = dir && existsSync(join(dir, name)) ? join(dir, name) : undefined;
  return requiredForTests(found, `${name} beside kube-apiserver${dir ? ` in ${dir}` : ''}`, 'run `make k8s-bin` (hack/k8s-bin.sh; needs Go)');
}

export const helmBin = binary('helm');
/** Helm 3, only to show that it is refused clearly (`go install helm.sh/helm/v3/cmd/helm@v3.19.0`). */
export const helm3Bin = process.env.AGENTYARD_HELM3 ?? binary('helm3');
export const kubectlBin = binary('kubectl');

/** The kube-score version hack/kube-score.sh builds (its KUBE_SCORE_VERSION default). */
export function pinnedKubeScoreVersion(): string {
  return /KUBE_SCORE_VERSION:-([0-9.]+)\}/.exec(readFileSync(join(REPO, 'hack/kube-score.sh'), 'utf8'))![1]!;
}

/** kube-score from the cache hack/kube-score.sh fills (`make kube-score`). */
export const kubeScoreBin = ((): string | undefined => {
  const path = join(process.env.AGENTYARD_CACHE ?? join(homedir(), '.cache/agentyard'), 'kube-score', process.env.KUBE_SCORE_VERSION ?? pinnedKubeScoreVersion(), 'kube-score');
  return requiredForTests(existsSync(path) ? path : undefined, `kube-score at ${path}`, 'run `make kube-score` (hack/kube-score.sh; needs Go)');
})();

export interface Outcome {
  ok: boolean;
  out: string;
}

export async function helm(args: string[], bin = helmBin!): Promise<Outcome> {
  const home = mkdtempSync(join(tmpdir(), 'helm-home-'));
  const env = { PATH: process.env.PATH ?? '', HOME: home, HELM_CACHE_HOME: join(home, 'cache'), HELM_CONFIG_HOME: join(home, 'config'), HELM_DATA_HOME: join(home, 'data') };
  try {
    const r = await run(bin, args, { env, maxBuffer: 32 * 1024 * 1024 });
    return { ok: true, out: r.stdout + r.stderr };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    return { ok: false, out: (e.stdout ?? '') + (e.stderr ?? '') };
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

export function writeValues(dir: string, name: string, yaml: string): string {
  const path = join(dir, name);
  writeFileSync(path, yaml);
  return path;
}

/** `agentyard <args>` as a child process; never throws, answers with the exit code and output. */
export async function agentyard(args: string[], env: Record<string, string>): Promise<{ code: number; out: string }> {
  try {
    const r = await run(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '', AGENTYARD_LOG_LEVEL: 'silent', ...env }, maxBuffer: 8 * 1024 * 1024 });
    return { code: 0, out: r.stdout + r.stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, out: (e.stdout ?? '') + (e.stderr ?? '') };
  }
}
