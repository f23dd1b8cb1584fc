// The rendered chart under an outside best-practice checker, kube-score (hack/kube-score.sh): with
// the defaults and with every ci value file, no CRITICAL finding except those the chart README
// argues in its "Checked by kube-score" table, and no argued exception that no longer happens.
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHART, helm, helmBin, kubeScoreBin } from './helm.ts';

/** kube-score's grades (scorecard.Grade). */
const CRITICAL = 1;

interface ScoredObject {
  object_name: string;
  type_meta: { kind: string };
  object_meta: { name: string };
  checks: { check: { id: string }; grade: number; skipped: boolean; comments: { path?: string; summary: string }[] | null }[];
}

export interface Finding {
  check: string;
  /** Kind/name, e.g. Deployment/agentyard-api. */
  object: string;
  summary: string;
}

export interface Exception {
  check: string;
  object: string;
  /** The values it happens with: `defaults`, a ci file name, or `*` for all of them. */
  values: string;
}

/** The argued exceptions: rows of the README table whose first cells are `check`, `Kind/name` and `values`. */
export function readmeExceptions(readme: string): Exception[] {
  const section = readme.split('### Checked by kube-score')[1]?.split(/\n#{2,3} /)[0] ?? '';
  return [...section.matchAll(/^\| `([a-z0-9-]+)` \| `([A-Za-z]+\/[a-z0-9-]+)` \| `([a-z*.-]+)` \|/gm)].map((m) => ({ check: m[1]!, object: m[2]!, values: m[3]! }));
}

function score(manifest: string): Promise<ScoredObject[]> {
  return new Promise((resolve, reject) => {
    // kube-score exits 1 when it finds anything CRITICAL; the JSON on stdout is what counts.
    const child = execFile(kubeScoreBin!, ['score', '--output-format', 'json', '-'], { maxBuffer: 32 * 1024 * 1024 }, (err, stdout, stderr) => {
      try {
        resolve(JSON.parse(stdout) as ScoredObject[]);
      } catch {
        reject(new Error(`kube-score gave no JSON (${err?.message ?? 'exit 0'}): ${stderr}`));
      }
    });
    child.stdin!.end(manifest);
  });
}

function criticals(scored: ScoredObject[]): Finding[] {
  return scored.flatMap((o) =>
    o.checks
      .filter((c) => !c.skipped && c.grade === CRITICAL)
      .map((c) => ({ check: c.check.id, object: `${o.type_meta.kind}/${o.object_meta.name}`, summary: (c.comments ?? []).map((x) => `${x.path ?? ''} ${x.summary}`.trim()).join('; ') })),
  );
}

const VALUE_FILES = readdirSync(join(CHART, 'ci')).filter((f) => f.endsWith('-values.yaml'));
// The defaults, with only what has no default set (values.yaml leaves these empty on purpose).
const DEFAULTS = ['baseDomain=agents.example.com', 'runtime.storageClass=standard', 'networkPolicy.podCidrs={10.244.0.0/16}', 'networkPolicy.serviceCidrs={10.96.0.0/12}', 'networkPolicy.nodeCidrs={10.0.0.0/16}'];
const CASES: [string, string[]][] = [['defaults', DEFAULTS.flatMap((v) => ['--set', v])], ...VALUE_FILES.map((f): [string, string[]] => [f, ['-f', join(CHART, 'ci', f)]])];

describe('the README exception table', () => {
  it('is read as check and object pairs', () => {
    const readme =
      '### Checked by kube-score\n\n| Check | Object | Values | Why |\n|---|---|---|---|\n| `deployment-replicas` | `Deployment/agentyard-api` | `*` | one writer |\n| `pod-probes` | `Pod/x` | `tls-values.yaml` | why |\n\n## Next\n| `pod-probes` | `Deployment/x` | `*` | not in the section |\n';
    expect(readmeExceptions(readme)).toEqual([
      { check: 'deployment-replicas', object: 'Deployment/agentyard-api', values: '*' },
      { check: 'pod-probes', object: 'Pod/x', values: 'tls-values.yaml' },
    ]);
  });
});

describe.skipIf(!helmBin || !kubeScoreBin)('the chart under kube-score', () => {
  const exceptions = readmeExceptions(readFileSync(join(CHART, 'README.md'), 'utf8'));
  const used = new Set<Exception>();

  it.each(CASES)('%s: no CRITICAL finding but the argued ones', async (name, args) => {
    const rendered = await helm(['template', 'agentyard', CHART, '--namespace', 'agentyard', ...args]);
    expect(rendered.ok, rendered.out).toBe(true);
    const unargued: Finding[] = [];
    for (const f of criticals(await score(rendered.out))) {
      const argued = exceptions.find((e) => e.check === f.check && e.object === f.object && (e.values === '*' || e.values === name));
      if (argued) used.add(argued);
      else unargued.push(f);
    }
    expect(unargued).toEqual([]);
  });

  it('argues no exception that no longer happens', () => {
    expect(exceptions.filter((e) => !used.has(e))).toEqual([]);
  });
});
