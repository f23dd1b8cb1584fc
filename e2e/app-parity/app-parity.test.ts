// The side-by-side suite for the application API: the real OpenHands app server (openhands-ai, OSS
// mode, process sandboxes) and `agentyard up` driven with the same flows over /api/v1 against the
// same scripted model; what a client sees must agree, except for the deliberate differences and the
// gaps listed (each argued) in deliberate.ts. A listed difference that no longer shows fails too.
import { appendFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DELIBERATE, GAPS } from './deliberate.ts';
import { FLOWS, type Ctx, type View } from './flows.ts';
import { appServerPython, startAgentyardUp, startOpenHandsApp, startParityGitHub, startParityGitLab, startParityGitea, type AppSide } from './servers.ts';

const python = appServerPython();

/**
 * `flow.key` for each key whose values differ, with both values. A `*_fields` key lists field names:
 * only the fields OpenHands has and ours lacks count (a field more breaks no client). A `*_types` key
 * maps the fields filled to their JSON types: only the fields both fill count.
 */
export function differences(flow: string, theirs: View, ours: View): Map<string, { openhands: unknown; agentyard: unknown }> {
  const out = new Map<string, { openhands: unknown; agentyard: unknown }>();
  for (const key of new Set([...Object.keys(theirs), ...Object.keys(ours)])) {
    const [t, o] = [theirs[key], ours[key]];
    if (key.endsWith('_fields') && Array.isArray(t) && Array.isArray(o)) {
      const missing = (t as string[]).filter((f) => !(o as string[]).includes(f));
      if (missing.length) out.set(`${flow}.${key}`, { openhands: missing, agentyard: 'missing' });
    } else if (key.endsWith('_types') && t && o && typeof t === 'object' && typeof o === 'object') {
      const [tt, ot] = [t as Record<string, string>, o as Record<string, string>];
      const differing = Object.keys(tt).filter((f) => f in ot && tt[f] !== ot[f]);
      if (differing.length) out.set(`${flow}.${key}`, { openhands: Object.fromEntries(differing.map((f) => [f, tt[f]])), agentyard: Object.fromEntries(differing.map((f) => [f, ot[f]])) });
    } else if (JSON.stringify(t) !== JSON.stringify(o)) {
      out.set(`${flow}.${key}`, { openhands: t, agentyard: o });
    }
  }
  return out;
}

/** A failed flow is a view too: its error, compared like any other value. */
const settle = (p: Promise<View>): Promise<View> => p.catch((err: Error) => ({ failed: err.message }));

describe.skipIf(!python)('OpenHands app server side by side (the real openhands-ai, /api/v1)', () => {
  let oh: AppSide;
  let ay: AppSide;
  let git: Awaited<ReturnType<typeof startParityGitea>>;
  let github: Awaited<ReturnType<typeof startParityGitHub>> | undefined;
  let gitlab: Awaited<ReturnType<typeof startParityGitLab>> | undefined;
  const ctx = { openhands: {} as Ctx, agentyard: {} as Ctx };
  beforeAll(async () => {
    // Gitea (a process of its own: seconds) starts beside OpenHands, which takes the Gitea host from the
    // flows' tokens; only ours waits for it (its environment names the hosts). The stand-ins are in-process.
    const gitStarted = startParityGitea();
    github = await startParityGitHub();
    if (github) for (const c of Object.values(ctx)) c.github = { host: github.host, token: github.token };
    gitlab = await startParityGitLab();
    for (const c of Object.values(ctx)) c.gitlab = { url: gitlab.gitlab.url, token: gitlab.token };
    const ours = (g: typeof git) => {
      const hosts = { ...JSON.parse(g?.env['AGENTYARD_GIT_HOSTS'] ?? '{}'), ...(github ? { github: `https://${github.host}` } : {}), gitlab: gitlab!.gitlab.url };
      return startAgentyardUp({ ...g?.env, ...github?.agentyardEnv, AGENTYARD_GIT_HOSTS: JSON.stringify(hosts) });
    };
    const started = await Promise.allSettled([startOpenHandsApp(python!, github?.openhandsEnv), gitStarted.then(ours)]);
    const gitDone = (await Promise.allSettled([gitStarted]))[0]!;
    if (gitDone.status === 'fulfilled') git = gitDone.value;
    const failed = [gitDone, ...started].find((r) => r.status === 'rejected');
    if (failed) {
      await Promise.all(started.map((r) => (r.status === 'fulfilled' ? r.value.close() : undefined)));
      await git?.gitea.stop();
      await github?.close();
      await gitlab?.gitlab.close();
      throw (failed as PromiseRejectedResult).reason;
    }
    if (git) for (const c of Object.values(ctx)) c.gitea = { url: git.gitea.url, token: git.gitea.token };
    [oh, ay] = started.map((r) => (r as PromiseFulfilledResult<AppSide>).value) as [AppSide, AppSide];
  }, 360_000);
  afterAll(async () => {
    await Promise.all([oh?.close(), ay?.close()]);
    await git?.gitea.stop();
    await github?.close();
    await gitlab?.gitlab.close();
  });

  for (const [flow, run] of FLOWS) {
    it(flow, async () => {
      // Both sides to the end before comparing, so a failure on one does not leave the other running on.
      const [theirs, ours] = await Promise.all([settle(run(oh, ctx.openhands)), settle(run(ay, ctx.agentyard))]);
      // Every agent answer of the flow's script used, on both sides (none left to leak into the next).
      Object.assign(theirs, { answers_left: oh.scriptLeft() });
      Object.assign(ours, { answers_left: ay.scriptLeft() });
      const found = differences(flow, theirs, ours);
      const tolerated = { ...DELIBERATE, ...GAPS };
      const unlisted = [...found].filter(([id]) => !tolerated[id]).map(([id, v]) => ({ id, ...v }));
      if (process.env['APP_PARITY_DUMP']) appendFileSync(process.env['APP_PARITY_DUMP'], JSON.stringify({ flow, theirs, ours }) + '\n');
      // A flow that could not run on this machine (git_search without Gitea, github_search without openssl) leaves its entries unchecked.
      const ran = !('skipped' in theirs && 'skipped' in ours);
      const stale = Object.keys(tolerated).filter((id) => ran && id.startsWith(`${flow}.`) && !found.has(id));
      expect({ unlisted, stale }).toEqual({ unlisted: [], stale: [] });
    }, 240_000);
  }
});
