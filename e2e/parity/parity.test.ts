// The differential suite: the real OpenHands agent server and ours driven with the same flows
// against the same scripted model; what a client sees must agree, except for the deliberate
// differences listed (each argued) in deliberate.ts, and the gaps listed there (not built yet). A listed difference that no longer shows fails
// too, so that the list stays true.
import { appendFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DELIBERATE, GAPS, OPENAPI_GAPS } from './deliberate.ts';
import { FLOWS, type View } from './flows.ts';
import { RUNTIME_FLOWS } from './runtime-flows.ts';
import { CANVAS_FLOWS } from './flows-canvas.ts';
import { EXTENSIONS_FLOWS } from './flows-extensions.ts';
import { INSTALL_FLOWS } from './flows-installs.ts';
import { SKILL_FLOWS } from './flows-skills.ts';
import { META_INIT_FLOWS } from './flows-meta-init.ts';
import { closeEnvServers, SERVER_ENV_FLOWS } from './flows-server-env.ts';
import { CRITIC_FLOWS } from './flows-critic.ts';
import { openhandsBinary, startAgentyard, startOpenHands, type Side } from './servers.ts';

const bin = openhandsBinary();
/** Flows that start servers of their own (each OpenHands start takes 20-60 s), with their time. */
const SLOW_FLOWS: Record<string, number> = { secret_key_rotation: 420_000, deferred_init: 300_000, managed_key_refresh: 420_000, registered_marketplaces_env: 420_000 };
/**
 * Flows that start servers of their own (each OpenHands start takes seconds of imports) and use
 * neither shared server beyond its name: they run from the suite's start, beside the other flows
 * (which keep the shared servers to themselves, one flow at a time), and their test waits for them.
 */
const OWN_SERVER_FLOWS = new Set(['secret_key_rotation', 'deferred_init']);

/**
 * `flow.key` for each key whose values differ, with both values. A `*_fields` key lists field names:
 * there only the fields OpenHands has and ours lacks count (a field more breaks no client).
 */
export function differences(flow: string, theirs: View, ours: View): Map<string, { openhands: unknown; agentyard: unknown }> {
  const out = new Map<string, { openhands: unknown; agentyard: unknown }>();
  for (const key of new Set([...Object.keys(theirs), ...Object.keys(ours)])) {
    if (key.endsWith('_fields') && Array.isArray(theirs[key]) && Array.isArray(ours[key])) {
      const missing = (theirs[key] as string[]).filter((f) => !(ours[key] as string[]).includes(f));
      if (missing.length) out.set(`${flow}.${key}`, { openhands: missing, agentyard: 'missing' });
    } else if (JSON.stringify(theirs[key]) !== JSON.stringify(ours[key])) {
      out.set(`${flow}.${key}`, { openhands: theirs[key], agentyard: ours[key] });
    }
  }
  return out;
}

/** Path parameters of the real document filled in: ids as UUIDs, anything else a plain word. */
const concrete = (path: string) => path.replace(/\{(\w+)\}/g, (_m, name: string) => (/id$/.test(name) ? '0b6d9c1e-2f4a-4c1b-9a51-1b7f4c9d2e10' : 'x'));

/** A failed flow is a view too: its error, compared like any other value. */
const settle = (p: Promise<View>): Promise<View> => p.catch((err: Error) => ({ failed: err.message }));

describe.skipIf(!bin)('OpenHands parity (the real agent server, side by side)', () => {
  let oh: Side;
  let ay: Side;
  const flows = Object.entries({ ...FLOWS, ...RUNTIME_FLOWS, ...CANVAS_FLOWS, ...INSTALL_FLOWS, ...EXTENSIONS_FLOWS, ...SKILL_FLOWS, ...META_INIT_FLOWS, ...SERVER_ENV_FLOWS, ...CRITIC_FLOWS });
  /** Both sides of a flow to the end, so a failure on one does not leave the other running on. */
  const both = (run: (s: Side) => Promise<View>) => Promise.all([settle(run(oh)), settle(run(ay))]);
  /** The own-server flows' results, running from beforeAll on. */
  const early = new Map<string, Promise<[View, View]>>();
  beforeAll(async () => {
    [oh, ay] = await Promise.all([startOpenHands(bin!), startAgentyard()]);
    for (const [flow, run] of flows) if (OWN_SERVER_FLOWS.has(flow)) early.set(flow, both(run));
  }, 300_000);
  afterAll(async () => {
    await Promise.all(early.values());
    await Promise.all([oh?.close(), ay?.close(), closeEnvServers()]);
  }, 420_000);

  for (const [flow, run] of flows) {
    it(flow, async () => {
      let result = early.get(flow);
      if (!result) {
        // A fresh scripted model for each flow and side (the same script is pushed to both), so that
        // what one flow left unconsumed cannot leak into the next.
        await Promise.all([oh.renewLlm(), ay.renewLlm()]);
        result = both(run);
      }
      const [theirs, ours] = await result;
      const found = differences(flow, theirs, ours);
      const tolerated = { ...DELIBERATE, ...GAPS };
      const unlisted = [...found].filter(([id]) => !tolerated[id]).map(([id, v]) => ({ id, ...v }));
      if (process.env['PARITY_DUMP']) appendFileSync(process.env['PARITY_DUMP'], JSON.stringify({ flow, theirs, ours }) + '\n');
      const stale = Object.keys(tolerated).filter((id) => id.startsWith(`${flow}.`) && !found.has(id));
      expect({ unlisted, stale }).toEqual({ unlisted: [], stale: [] });
    }, SLOW_FLOWS[flow] ?? 180_000);
  }

  /**
   * Breaking differences between the real server's OpenAPI document and ours, for a client generated
   * from the real one: an operation we serve but do not describe, a query parameter or header it sends
   * that we do not declare, or a query parameter we require that it does not know. An operation we do not describe must be
   * one we do not build, answered 501 (never a 404 that reads as a wrong URL).
   */
  it('every operation of the real document is described by ours, or answered 501', async () => {
    const theirs = (await oh.api('/openapi.json', { key: null })).body;
    const ours = (await ay.api('/openapi.json', { key: null })).body;
    expect(ours.openapi).toBe('3.1.0');
    const problems: string[] = [];
    for (const [path, ops] of Object.entries<Record<string, any>>(theirs.paths)) {
      for (const [method, op] of Object.entries<any>(ops)) {
        if (!['get', 'post', 'patch', 'put', 'delete'].includes(method)) continue;
        const mine = ours.paths[path]?.[method];
        if (!mine) {
          const r = await ay.api(concrete(path), { method: method.toUpperCase(), ...(method === 'get' || method === 'delete' ? {} : { body: {} }) });
          if (r.status !== 501) problems.push(`${method.toUpperCase()} ${path}: not described, answers ${r.status}`);
          continue;
        }
        const params = (o: any, required?: boolean, where = 'query') => new Set<string>((o.parameters ?? []).filter((p: any) => p.in === where && (required === undefined || p.required === required)).map((p: any) => p.name.toLowerCase()));
        for (const p of params(op)) if (!params(mine).has(p)) problems.push(`${method.toUpperCase()} ${path}: query parameter ${p} not declared`);
        for (const p of params(op, undefined, 'header')) if (!params(mine, undefined, 'header').has(p)) problems.push(`${method.toUpperCase()} ${path}: header ${p} not declared`);
        for (const p of params(mine, true)) if (!params(op).has(p)) problems.push(`${method.toUpperCase()} ${path}: requires query parameter ${p} the real one does not know`);
      }
    }
    const tolerated = new Set(Object.keys(OPENAPI_GAPS));
    expect({ unlisted: problems.filter((p) => !tolerated.has(p)), stale: [...tolerated].filter((t) => !problems.includes(t)) }).toEqual({ unlisted: [], stale: [] });
  }, 300_000);

  /**
   * Spec part 9 rule 3: our `kind` discriminator mappings use the real document's versioned keys, so
   * a client generated from either resolves the same names. Every key we publish must be one of the
   * real document's, and point to the schema of the kind it names.
   */
  it('the kind discriminator mappings use the real document\'s versioned keys', async () => {
    const theirs = (await oh.api('/openapi.json', { key: null })).body;
    const ours = (await ay.api('/openapi.json', { key: null })).body;
    const known = new Set<string>();
    for (const schema of Object.values<any>(theirs.components.schemas)) for (const key of Object.keys(schema.discriminator?.mapping ?? {})) known.add(key);
    const published = Object.entries<any>(ours.components.schemas).filter(([, s]) => s.discriminator?.propertyName === 'kind');
    expect(published.map(([name]) => name).sort()).toEqual(['Action', 'BashEvent', 'ConfirmationPolicy', 'EnsembleMember', 'Event', 'Observation', 'SecretSource', 'SecurityAnalyzer', 'ToolDefinition']);
    const unknown: string[] = [];
    for (const [, s] of published) {
      for (const [key, ref] of Object.entries<string>(s.discriminator.mapping)) {
        if (!known.has(key)) unknown.push(key);
        expect(key).toContain(`__${ref.split('/').pop()}-Output__1`);
      }
    }
    expect(unknown).toEqual([]);
  }, 300_000);
});
