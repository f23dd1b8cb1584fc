// The Dockerfile is read rather than built here (a build takes minutes and a container engine):
// these are the invariants the chart and the sandboxes rely on. Node 24 in the build stages and
// only in the bundle at run time, nothing to build with in the runtime, non-root, the browser only
// in its own target, no secret or CA in any layer.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findChromium } from '../../src/agent/tools/browser/session.ts';
import { BUNDLE_CLI, BUNDLE_DIR, BUNDLE_NODE } from '../../src/runtime/kubernetes/bundle.ts';

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
  const { args, stages } = parseDockerfile(readFileSync(join(REPO, 'Dockerfile'), 'utf8'));
  const byName = (name: string) => stages.find((s) => s.name === name);
  /** A stage with the stages it is built FROM: what ends up in its image. */
  const chain = (stage: Stage): Stage[] => {
    const parent = byName(stage.from);
    return parent ? [...chain(parent), stage] : [stage];
  };
  const instructions = (stage: Stage) => chain(stage).flatMap((s) => s.body);
  const runtime = stages.at(-1)!; // what `docker build .` builds
  const browser = byName('browser')!;
  const lastOf = (stage: Stage, op: string) => instructions(stage).filter((i) => i.op === op).at(-1)?.args;
  const runs = (stage: Stage) => instructions(stage).filter((i) => i.op === 'RUN').map((i) => i.args);
  const installs = (stage: Stage) => runs(stage).filter((a) => /apt-get install/.test(a)).join(' ');
  const buildStages = stages.filter((s) => chain(runtime).every((c) => c !== s) && s !== browser);

  it('builds on Node 24; the runtime has no Node of its own but the bundle\'s', () => {
    expect(buildStages.length).toBeGreaterThan(0);
    for (const s of buildStages) expect(s.from).toMatch(/^node:24([.-]|$)/);
    const base = chain(runtime)[0]!;
    expect(base.from).toBe(args['BASE_IMAGE']);
    expect(base.from).not.toMatch(/^node:/);
    const copied = instructions(runtime).filter((i) => i.op === 'COPY' && i.args.startsWith('--from='));
    expect(copied.map((c) => c.args)).toContain(`--from=bundle ${BUNDLE_DIR} ${BUNDLE_DIR}`);
    // The bundle stage makes it where sandbox Pods mount it.
    expect(runs(byName('bundle')!).some((a) => a.includes('src/runtime/kubernetes/agent-bundle.sh') && a.includes(` ${BUNDLE_DIR} `))).toBe(true);
  });

  it('is multi-stage: only production dependencies, and nothing to build with, in the runtime', () => {
    // Production dependencies only, and no install scripts: better-sqlite3's addon is prebuilt in its package.
    expect(stages.flatMap((s) => s.body).some((i) => i.op === 'RUN' && /npm ci\b.*--omit=dev.*--ignore-scripts/.test(i.args))).toBe(true);
    expect(readFileSync(join(REPO, 'node_modules/better-sqlite3/lib/binding.js'), 'utf8')).toContain("'prebuilds'");
    for (const c of instructions(runtime).filter((i) => i.op === 'COPY' && i.args.startsWith('--from='))) {
      expect(buildStages.map((s) => s.name)).toContain(/^--from=(\S+)/.exec(c.args)?.[1]);
    }
    for (const stage of [runtime, browser]) {
      const all = runs(stage).join(' ');
      expect(all).not.toMatch(/\b(g\+\+|gcc|make|python3|build-essential|patchelf|npm)\b/);
      expect(installs(stage)).toMatch(/--no-install-recommends/);
      // apt's lists and caches are removed in the step that made them, so they never become a layer.
      for (const r of runs(stage).filter((a) => /apt-get update/.test(a))) expect(r).toMatch(/rm -rf \/var\/lib\/apt\/lists\/\* \/var\/cache\/apt\/\*\.bin/);
    }
  });

  it('has bash, git and tar for the agent: the image is also the default sandbox image', () => {
    for (const pkg of ['bash', 'git', 'tar', 'ca-certificates']) expect(installs(runtime)).toMatch(new RegExp(`\\b${pkg}\\b`));
  });

  it('runs as the non-root uid the sandbox Pods use, in every target; the chart\'s own Pods as one of 10000 or more', () => {
    for (const stage of [runtime, browser]) {
      const user = lastOf(stage, 'USER');
      const [uid = ''] = (user ?? '').split(':');
      expect(uid).toMatch(/^[1-9][0-9]*$/); // numeric: runAsNonRoot can only verify a numeric user
      expect(readFileSync(join(REPO, 'src/runtime/kubernetes/desired.ts'), 'utf8')).toContain(`const SANDBOX_UID = ${uid};`);
    }
    // The API, controller and preflight Pods: apart from any user of the node (kube-score's rule).
    const chartUid = /runAsUser: (\d+), runAsGroup: (\d+)/.exec(readFileSync(join(REPO, 'charts/agentyard/templates/_helpers.tpl'), 'utf8'));
    expect(Number(chartUid?.[1])).toBeGreaterThanOrEqual(10000);
    expect(Number(chartUid?.[2])).toBeGreaterThanOrEqual(10000);
  });

  it('has Debian chromium only in the browser target, where the browser tools look for it', () => {
    expect(installs(runtime)).not.toMatch(/\bchromium\b/);
    expect(installs(browser)).toMatch(/\bchromium\b/);
    const env = instructions(browser).filter((i) => i.op === 'ENV').map((i) => i.args).join(' ');
    expect(/\bAGENTYARD_CHROMIUM=(\S+)/.exec(env)?.[1]).toBe('/usr/bin/chromium'); // the path of Debian's chromium package
    // session.ts takes that variable when the file exists, as it does in the image.
    expect(findChromium({ AGENTYARD_CHROMIUM: process.execPath })).toBe(process.execPath);
  });

  it('runs agentyard from the bundle as its entrypoint, also on the PATH', () => {
    expect(lastOf(runtime, 'ENTRYPOINT')).toBe(JSON.stringify([BUNDLE_NODE, BUNDLE_CLI]).replace(/,/g, ', '));
    expect(runs(runtime).some((a) => a.includes(`ln -s ${BUNDLE_DIR}/app/bin/agentyard /usr/local/bin/agentyard`))).toBe(true);
  });

  it('never puts a secret or a CA into a layer: npm\'s settings are a build secret of one step', () => {
    const all = stages.flatMap((s) => s.body);
    for (const i of all.filter((x) => x.op === 'COPY' || x.op === 'ADD')) expect(i.args).not.toMatch(/npmrc|\.crt|\.pem|ca-certificates|\.key\b/i);
    for (const i of all.filter((x) => x.op === 'ENV' || x.op === 'ARG')) expect(i.args).not.toMatch(/TOKEN|_auth|PASSWORD|SECRET|NODE_EXTRA_CA_CERTS|NPM_CONFIG/i);
    const npmCi = all.find((i) => i.op === 'RUN' && /npm ci\b/.test(i.args))!;
    expect(npmCi.args).toMatch(/^--mount=type=secret,id=npmrc,target=\S+ --mount=type=secret,id=npm-ca /);
    expect(npmCi.args).toMatch(/npm cache clean --force/);
    // The build stage that holds the secret mounts is not the image: only its node_modules are copied on.
    const deps = stages.find((s) => s.body.includes(npmCi))!;
    expect(chain(runtime)).not.toContain(deps);
    expect(instructions(runtime).filter((i) => i.op === 'RUN').some((i) => i.args.includes('--mount'))).toBe(false);
  });

  it('sends only what the image needs as the build context', () => {
    const ignored = readFileSync(join(REPO, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim());
    for (const entry of ['node_modules', '.git', 'e2e', '**/*.test.ts']) expect(ignored).toContain(entry);
    for (const needed of ['src', 'bin', 'package.json', 'package-lock.json']) expect(ignored).not.toContain(needed);
  });
});
