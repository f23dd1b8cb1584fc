// There is no container engine here, so the Dockerfile is read rather than built: these are the
// invariants the chart and the sandboxes rely on (Node 24, multi-stage, non-root, the browser).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findChromium } from '../../src/agent/tools/browser/session.ts';

const REPO = join(import.meta.dirname, '../..');

interface Instruction {
  op: string;
  args: string;
}
interface Stage {
  from: string;
  name?: string;
  body: Instruction[];
}

/** Instructions (continuations joined, comments dropped) grouped by stage, ARG defaults applied to FROM. */
function parseDockerfile(text: string): { args: Record<string, string>; stages: Stage[] } {
  const lines = text.replace(/\\\r?\n/g, ' ').split(/\r?\n/).map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  const args: Record<string, string> = {};
  const stages: Stage[] = [];
  for (const line of lines) {
    const [, op = '', rest = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    const ins = { op: op.toUpperCase(), args: rest.replace(/\s+/g, ' ') };
    if (ins.op === 'FROM') {
      const [image = '', as, name] = ins.args.split(' ');
      const from = image.replace(/\$\{?(\w+)\}?/g, (_m, v: string) => args[v] ?? '');
      stages.push({ from, ...(as?.toUpperCase() === 'AS' && name ? { name } : {}), body: [] });
    } else if (ins.op === 'ARG' && stages.length === 0) {
      const [k = '', v = ''] = ins.args.split('=');
      args[k] = v;
    } else {
      stages.at(-1)?.body.push(ins);
    }
  }
  return { args, stages };
}

describe('the Dockerfile', () => {
  const { stages } = parseDockerfile(readFileSync(join(REPO, 'Dockerfile'), 'utf8'));
  const runtime = stages.at(-1)!;
  const last = (op: string) => runtime.body.filter((i) => i.op === op).at(-1);

  it('builds on Node 24 in every stage', () => {
    expect(stages.length).toBeGreaterThan(0);
    for (const s of stages) expect(s.from).toMatch(/^node:24([.-]|$)/);
  });

  it('is multi-stage: the image copies only production dependencies from a build stage', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    const names = stages.slice(0, -1).map((s) => s.name);
    const copies = runtime.body.filter((i) => i.op === 'COPY' && i.args.startsWith('--from='));
    expect(copies.length).toBeGreaterThan(0);
    for (const c of copies) expect(names).toContain(/^--from=(\S+)/.exec(c.args)?.[1]);
    expect(stages.flatMap((s) => s.body).some((i) => i.op === 'RUN' && /npm ci\b.*--omit=dev/.test(i.args))).toBe(true);
    // Compilers stay in the build stage.
    expect(runtime.body.filter((i) => i.op === 'RUN').map((i) => i.args).join(' ')).not.toMatch(/\bg\+\+|\bmake\b|python3/);
  });

  it('runs as the non-root uid the sandbox Pods use; the chart\'s own Pods as one of 10000 or more', () => {
    const user = last('USER')?.args;
    expect(user).toBeDefined();
    const [uid = ''] = user!.split(':');
    expect(uid).toMatch(/^[1-9][0-9]*$/); // numeric: runAsNonRoot can only verify a numeric user
    expect(readFileSync(join(REPO, 'src/runtime/kubernetes/desired.ts'), 'utf8')).toContain(`const SANDBOX_UID = ${uid};`);
    // The API, controller and preflight Pods: apart from any user of the node (kube-score's rule).
    const chartUid = /runAsUser: (\d+), runAsGroup: (\d+)/.exec(readFileSync(join(REPO, 'charts/agentyard/templates/_helpers.tpl'), 'utf8'));
    expect(Number(chartUid?.[1])).toBeGreaterThanOrEqual(10000);
    expect(Number(chartUid?.[2])).toBeGreaterThanOrEqual(10000);
  });

  it('has Debian chromium where the browser tools look for it', () => {
    const installs = runtime.body.filter((i) => i.op === 'RUN' && /apt-get install/.test(i.args)).map((i) => i.args);
    expect(installs.some((a) => /\bchromium\b/.test(a))).toBe(true);
    const env = runtime.body.filter((i) => i.op === 'ENV').map((i) => i.args).join(' ');
    const configured = /\bAGENTYARD_CHROMIUM=(\S+)/.exec(env)?.[1];
    expect(configured).toBe('/usr/bin/chromium'); // the path of Debian's chromium package
    // session.ts takes that variable when the file exists, as it does in the image.
    expect(findChromium({ AGENTYARD_CHROMIUM: process.execPath })).toBe(process.execPath);
  });

  it('runs agentyard as its entrypoint, also on the PATH for sandbox Pods', () => {
    expect(last('ENTRYPOINT')?.args).toBe('["/app/bin/agentyard"]');
    expect(runtime.body.some((i) => i.op === 'RUN' && /ln -s \/app\/bin\/agentyard \/usr\/local\/bin\/agentyard/.test(i.args))).toBe(true);
  });
});
