// Flows whose settings come from the server's environment, so they run on a pair of servers of their
// own: started once, at the first of these flows, with every setting both flows need (an OpenHands
// start costs 20-60 s), and closed by closeEnvServers (parity.test.ts's afterAll).
// - The managed LLM key refresh (OH_LLM_API_KEY_REFRESH_URL, _BASE_URLS, _HEADERS): a scripted
//   model on the allow-list that answers 401 to the stale key, and a control plane over real HTTP
//   that hands out the current one.
// - The server's marketplace registrations (OH_REGISTERED_MARKETPLACES): one auto-loading one
//   plugin, one not auto-loading, both local git repositories.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rmSync } from 'node:fs';
import { startScriptedLlm, type ScriptedLlm } from '../../src/testing/scripted-llm/server.ts';
import { commitFiles } from '../../src/testing/extensions/repos.ts';
import { until } from '../../src/testing/until.ts';
import { startBody, type View } from './flows.ts';
import { repositories } from './flows-extensions.ts';
import { KEY, openhandsBinary, PARITY_EXTENSIONS, startAgentyard, startOpenHands, type Side } from './servers.ts';

const STALE = 'sk-parity-managed-stale';
const CURRENT = 'sk-parity-managed-current';
const CREDENTIAL = 'parity-refresh-credential';
/** The second registered marketplace (the first is flows-extensions' `team`). */
const OPS_MARKET = `${PARITY_EXTENSIONS}-market-ops`;

/** The control plane's refresh endpoint: what it received, and what it answers next. */
interface Control {
  url: string;
  calls: { method: string; path: string; headers: Record<string, string | string[] | undefined> }[];
  answer: { status: number; body: string };
  server: Server;
}

interface EnvServer {
  side: Side;
  /** The managed proxy (on the allow-list): refuses every key but CURRENT with 401. */
  managed: ScriptedLlm;
  /** A provider the user brought (not on the allow-list), refusing the same keys. */
  byok: ScriptedLlm;
  /** A managed proxy (on the allow-list) that checks no key: its refusals are scripted (a 400 saying the key is invalid). */
  lenient: ScriptedLlm;
  control: Control;
}

async function startControl(): Promise<Control> {
  const control: Control = { url: '', calls: [], answer: { status: 200, body: `${CURRENT}\n` }, server: undefined! };
  control.server = createServer((req, res) => {
    control.calls.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers });
    res.writeHead(control.answer.status, { 'content-type': 'text/plain' }).end(control.answer.body);
  });
  await new Promise<void>((r) => control.server.listen(0, '127.0.0.1', r));
  control.url = `http://127.0.0.1:${(control.server.address() as AddressInfo).port}/api/keys/current`;
  return control;
}

/** `ops`: a plugin with a skill and a standalone skill, names no other repository uses. */
function opsMarketplace(): string {
  const skill = (name: string) => `---\nname: ${name}\ndescription: ${name} skill.\n---\nUse ${name}.\n`;
  commitFiles(OPS_MARKET, {
    '.plugin/marketplace.json': JSON.stringify({ name: 'ops', owner: { name: 'Ops' }, plugins: [{ name: 'ops-kit', source: './plugins/ops-kit' }], skills: [{ name: 'ops-style', source: './skills/ops-style' }] }),
    'plugins/ops-kit/.plugin/plugin.json': JSON.stringify({ name: 'ops-kit', version: '0.1.0' }),
    'plugins/ops-kit/skills/ops-rules/SKILL.md': skill('ops-rules'),
    'skills/ops-style/SKILL.md': skill('ops-style'),
  }, 'ops marketplace');
  return OPS_MARKET;
}

let opsBuilt: string | undefined;
const started = new Map<Side['name'], Promise<EnvServer>>();

/** The side's server with the environment of these flows, started at its first use. */
function envServer(name: Side['name']): Promise<EnvServer> {
  let p = started.get(name);
  if (!p) {
    p = (async () => {
      const { market } = repositories();
      const ops = (opsBuilt ??= opsMarketplace());
      const [managed, byok, lenient, control] = await Promise.all([startScriptedLlm([], { apiKey: CURRENT }), startScriptedLlm([], { apiKey: CURRENT }), startScriptedLlm(), startControl()]);
      const env = {
        OH_LLM_API_KEY_REFRESH_URL: control.url,
        // With a trailing slash: both compare base URLs without it.
        OH_LLM_API_KEY_REFRESH_BASE_URLS: `http://managed-proxy.invalid/v1, ${managed.url}/, ${lenient.url}`,
        OH_LLM_API_KEY_REFRESH_HEADERS: JSON.stringify({ 'X-Session-API-Key': '${OH_SESSION_API_KEYS_0}', 'X-Refresh-Credential': CREDENTIAL }),
        OH_REGISTERED_MARKETPLACES: JSON.stringify([{ name: 'team', source: market, auto_load: ['lint-kit'] }, { name: 'ops', source: ops }]),
      };
      const side = name === 'openhands' ? await startOpenHands(openhandsBinary()!, env) : await startAgentyard(env);
      return { side, managed, byok, lenient, control };
    })();
    started.set(name, p);
  }
  return p;
}

/** Stops what envServer started (nothing if no flow of this file ran). */
export async function closeEnvServers(): Promise<void> {
  const all = await Promise.allSettled([...started.values()]);
  started.clear();
  await Promise.all(
    all.flatMap((r) => (r.status === 'fulfilled' ? [r.value.side.close(), r.value.managed.close(), r.value.byok.close(), r.value.lenient.close(), new Promise((d) => r.value.control.server.close(d))] : [])),
  );
  if (opsBuilt) rmSync(opsBuilt, { recursive: true, force: true });
  opsBuilt = undefined;
}

const ended = (s: Side, id: string) =>
  until('the run to end', async () => {
    const st = (await s.api(`/api/conversations/${id}`)).body.execution_status;
    return ['finished', 'error', 'stuck', 'paused'].includes(st) ? st : undefined;
  });
/** Event kinds in order, state updates left out (their place depends on timing; flows.ts does the same). */
const kindsOf = (evs: any[]) => evs.filter((e) => e.kind !== 'ConversationStateUpdateEvent').map((e) => (e.kind === 'MessageEvent' ? `MessageEvent:${e.source}` : e.kind));
/** A key as the flow names it (never the value itself in a view). */
const keyName = (auth: unknown) => (auth === `Bearer ${STALE}` ? 'stale' : auth === `Bearer ${CURRENT}` ? 'current' : auth === undefined || auth === '' ? 'none' : 'other');

export const SERVER_ENV_FLOWS: Record<string, (s: Side) => Promise<View>> = {
  /**
   * A conversation whose LLM is the managed proxy with a stale key: the 401, the refresh call (its
   * method, path and expanded headers), the call made again with the current key, what a client
   * reads (events, status, the key shown); a second turn on the same conversation; then an LLM off
   * the allow-list, a refresh that answers the stale key, a refresh endpoint that fails, a
   * conversation switched to the managed proxy (switch_llm), and a key refused with a 400.
   */
  managed_key_refresh: async (s) => {
    const { side, managed, byok, lenient, control } = await envServer(s.name);
    const converse = async (llm: ScriptedLlm, answer: { status: number; body: string } = { status: 200, body: `${CURRENT}\n` }, key = STALE) => {
      control.answer = answer;
      const [calls, refused, accepted] = [control.calls.length, llm.refusedAuthorizations.length, llm.requests.length];
      // A step a refused conversation did not take is the next one's (all steps are the same finish).
      if (llm.remaining() === 0) llm.push({ toolCalls: [{ name: 'finish', arguments: { message: 'done' } }] });
      const body = startBody(side, { initial_message: { role: 'user', content: [{ type: 'text', text: 'hello' }] } });
      (body['agent'] as any).llm = { model: 'openai/scripted', base_url: llm.url, api_key: key, usage_id: 'agent' };
      const r = await side.api('/api/conversations', { method: 'POST', body });
      const id = r.body.id as string;
      const end = await ended(side, id);
      return { id, status: r.status, end, ...(await seen(llm, id, calls, refused, accepted)) };
    };
    const seen = async (llm: ScriptedLlm, id: string, calls: number, refused: number, accepted: number) => {
      const evs = (await side.api(`/api/conversations/${id}/events/search?limit=100`)).body.items as any[];
      const info = (await side.api(`/api/conversations/${id}`)).body;
      const text = JSON.stringify(evs) + JSON.stringify(info);
      shownKeys.add(info?.agent?.llm?.api_key ?? null);
      return {
        events: kindsOf(evs),
        statuses: evs.filter((e) => e.kind === 'ConversationStateUpdateEvent' && e.key === 'execution_status').map((e) => e.value),
        error_codes: evs.filter((e) => e.kind === 'ConversationErrorEvent').map((e) => e.code),
        refused: llm.refusedAuthorizations.slice(refused).map(keyName),
        // The calls the model answered (for `lenient`, every call: it refuses by script, not by key).
        answered: llm.requests.slice(accepted).map((q) => keyName(q.headers['authorization'])),
        // Where the model saw the refused call too (`lenient`): the call made again is the same call.
        same_call_again: ((q) => (q.length === 2 ? JSON.stringify([q[0]!.messages, q[0]!.tools]) === JSON.stringify([q[1]!.messages, q[1]!.tools]) : null))(llm.requests.slice(accepted)),
        refresh_calls: control.calls.slice(calls).map((c) => ({
          method: c.method,
          path: c.path,
          session_key: c.headers['x-session-api-key'] === KEY,
          credential: c.headers['x-refresh-credential'] === CREDENTIAL,
        })),
        keys_shown: [STALE, CURRENT, CREDENTIAL].filter((k) => text.includes(k)).map((k) => (k === CREDENTIAL ? 'credential' : keyName(`Bearer ${k}`))),
      };
    };

    /** What ConversationInfo shows as `agent.llm.api_key`, over every conversation of the flow. */
    const shownKeys = new Set<unknown>();
    const first = await converse(managed);
    // The same conversation, a second turn.
    const [calls, refused, accepted] = [control.calls.length, managed.refusedAuthorizations.length, managed.requests.length];
    if (managed.remaining() === 0) managed.push({ toolCalls: [{ name: 'finish', arguments: { message: 'again' } }] });
    const send = await side.api(`/api/conversations/${first.id}/events`, { method: 'POST', body: { role: 'user', content: [{ type: 'text', text: 'again' }], run: true } });
    // The run starts asynchronously: wait for the new message's answer, not the old `finished`.
    await until('the second turn to end', async () => {
      const evs = (await side.api(`/api/conversations/${first.id}/events/search?limit=100`)).body.items as any[];
      const st = (await side.api(`/api/conversations/${first.id}`)).body.execution_status;
      return evs.filter((e) => e.kind === 'ActionEvent').length >= 2 || st === 'error' ? st : undefined;
    });
    const { refused: secondRefused, refresh_calls: secondRefreshCalls, ...second } = { send: send.status, end: (await ended(side, first.id)) as string, ...(await seen(managed, first.id, calls, refused, accepted)) };
    const { id: _1, ...firstView } = first;
    const outOfScope = await converse(byok);
    const sameKey = await converse(managed, { status: 200, body: `${STALE}\n` });
    const refreshFails = await converse(managed, { status: 500, body: 'control plane down' });
    const strip = ({ id: _id, ...v }: { id: string } & View) => v;

    // A conversation on the user's own provider (with the key it takes), switched to the managed
    // proxy with the stale key (switch_llm): the next turn's refusal is refreshed too.
    const own = await converse(byok, undefined, CURRENT);
    const before = [control.calls.length, managed.refusedAuthorizations.length, managed.requests.length] as const;
    const switched = await side.api(`/api/conversations/${own.id}/switch_llm`, { method: 'POST', body: { llm: { model: 'openai/scripted', base_url: managed.url, api_key: STALE, usage_id: 'agent' } } });
    if (managed.remaining() === 0) managed.push({ toolCalls: [{ name: 'finish', arguments: { message: 'switched' } }] });
    await side.api(`/api/conversations/${own.id}/events`, { method: 'POST', body: { role: 'user', content: [{ type: 'text', text: 'go on' }], run: true } });
    await until('the switched turn to end', async () => {
      const evs = (await side.api(`/api/conversations/${own.id}/events/search?limit=100`)).body.items as any[];
      const st = (await side.api(`/api/conversations/${own.id}`)).body.execution_status;
      return evs.filter((e) => e.kind === 'ActionEvent').length >= 2 || st === 'error' ? st : undefined;
    });
    const afterSwitch = { own_end: own.end, switch: switched.status, end: await ended(side, own.id), ...(await seen(managed, own.id, ...before)) };

    // A refusal that is not a 401 or 403: a 400 whose message says the key is invalid (as some
    // proxies answer). First with the refresh endpoint failing (the error a client then sees), then
    // with it answering (its step left last: a call not made leaves it unused).
    const invalidKey = { status: 400, errorMessage: 'Invalid API key provided' };
    lenient.push(invalidKey);
    const badRequestRefreshFails = await converse(lenient, { status: 500, body: 'control plane down' });
    lenient.push(invalidKey, { toolCalls: [{ name: 'finish', arguments: { message: 'done' } }] });
    const badRequestRefreshed = await converse(lenient);

    return {
      first: firstView,
      second,
      // Apart from the rest of the second turn: here ours differs on purpose (deliberate.ts).
      second_refused: secondRefused,
      second_refresh_calls: secondRefreshCalls,
      out_of_scope: strip(outOfScope),
      stale_answer: strip(sameKey),
      refresh_fails: strip(refreshFails),
      after_switch_llm: afterSwitch,
      bad_request_refresh_fails: strip(badRequestRefreshFails),
      bad_request_refreshed: strip(badRequestRefreshed),
      info_api_key: [...shownKeys],
    };
  },

  /**
   * The server's registrations (OH_REGISTERED_MARKETPLACES: `team` auto-loading lint-kit, `ops` not
   * auto-loading) in POST /api/skills, alone and with a request's registration replacing one by
   * name; the catalogs of the extensions repository; and which skills a conversation loads, with
   * and without registrations of its own.
   */
  registered_marketplaces_env: async (s) => {
    const { side } = await envServer(s.name);
    const { market } = repositories();
    const only = { load_user: false, load_project: false, load_org: false };
    const skills = async (body: Record<string, unknown>) => {
      const r = await side.api('/api/skills', { method: 'POST', body: { ...only, ...body } });
      return { status: r.status, names: (r.body.skills ?? []).map((x: any) => x.name).sort(), registered: r.body.sources?.registered_marketplaces };
    };
    const catalog = await side.api('/api/skills/catalog');
    const skillsMarket = await side.api('/api/skills/marketplace');
    const pluginsMarket = await side.api('/api/plugins/marketplace');
    const CANDIDATES = ['alpha', 'beta', 'kit-use', 'lint-rules', 'docs-style', 'team-style', 'ops-rules', 'ops-style'];
    const converse = async (agentContext: Record<string, unknown>) => {
      const before = side.llm.requests.length;
      side.llm.push({ toolCalls: [{ name: 'finish', arguments: { message: 'ok' } }] });
      const body = startBody(side, { initial_message: { role: 'user', content: [{ type: 'text', text: 'hello' }] } });
      (body['agent'] as Record<string, unknown>)['agent_context'] = agentContext;
      const r = await side.api('/api/conversations', { method: 'POST', body });
      const id = r.body.id as string;
      const end = await ended(side, id);
      const system = JSON.stringify(side.llm.requests[before]?.messages[0] ?? '');
      const info = (await side.api(`/api/conversations/${id}?include_skills=true`)).body;
      return {
        status: r.status,
        end,
        prompt: CANDIDATES.filter((n) => system.includes(`<name>${n}</name>`)),
        record: ((info?.agent?.agent_context?.skills ?? []) as { name: string }[]).map((k) => k.name).filter((n) => CANDIDATES.includes(n)).sort(),
      };
    };
    return {
      server_registrations: await skills({}),
      no_public: await skills({ load_public: false }),
      request_turns_ops_on: await skills({ registered_marketplaces: [{ name: 'ops', source: OPS_MARKET, auto_load: true }] }),
      request_turns_team_off: await skills({ registered_marketplaces: [{ name: 'team', source: market, auto_load: false }] }),
      request_adds_one: await skills({ registered_marketplaces: [{ name: 'more', source: market, auto_load: ['team-style'] }] }),
      catalog: [catalog.status, (catalog.body.skills ?? []).map((x: any) => [x.name, x.origin]).sort()],
      skills_marketplace: [skillsMarket.status, (skillsMarket.body.skills ?? []).map((x: any) => x.name).sort()],
      plugins_marketplace: [pluginsMarket.status, (pluginsMarket.body.plugins ?? []).map((x: any) => x.name).sort()],
      conversation_public: await converse({ load_public_skills: true }),
      conversation_no_public: await converse({}),
      conversation_own_registration: await converse({ load_public_skills: true, registered_marketplaces: [{ name: 'ops', source: OPS_MARKET, auto_load: true }] }),
    };
  },
};
