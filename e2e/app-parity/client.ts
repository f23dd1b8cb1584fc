// What the side-by-side flows (flows.ts) share: how a client of either app server reads it (records,
// events, the live socket, a polled start task), the start requests it sends, and the reductions of
// what it saw to what must agree (field names, JSON types, event kinds, 422 locations).
import type { ScriptedReply } from '../../src/testing/scripted-llm/server.ts';
import { MODEL, type AppSide, type Reply } from './servers.ts';
import { until } from '../../src/testing/until.ts';

export type View = Record<string, unknown>;
/** What the flows of one side share: the conversation started first, and its start task. */
export interface Ctx {
  conversation?: string;
  task?: string;
  sandbox?: string;
  /** The Gitea both servers are given as their forgejo host (servers.ts), when it is built. */
  gitea?: { url: string; token: string };
  /** The GitHub stand-in both servers are given as their github host (servers.ts): host as OpenHands' web app sends it, and a token it knows. */
  github?: { host: string; token: string };
  /** The stand-in GitLab both servers are given as their gitlab host (servers.ts startParityGitLab). */
  gitlab?: { url: string; token: string };
}
export type Flow = (s: AppSide, ctx: Ctx) => Promise<View>;

export const V1 = '/api/v1';
export const UNKNOWN = '0b6d9c1e2f4a4c1b9a511b7f4c9d2e10';
export const STEPS = ['WORKING', 'WAITING_FOR_SANDBOX', 'PREPARING_REPOSITORY', 'RUNNING_SETUP_SCRIPT', 'SETTING_UP_GIT_HOOKS', 'SETTING_UP_SKILLS', 'STARTING_CONVERSATION', 'READY'];

export const message = (t: string, run = true) => ({ role: 'user', content: [{ type: 'text', text: t }], run });
/**
 * The start requests the flows send as an OpenHands client does (e2e/kube/openhands-start.test.ts
 * sends the same ones to the API in cluster mode): with a first message; into a running sandbox
 * (stream-start); and with the fields its clients set beside them.
 */
export const START_REQUESTS = {
  withMessage: (text: string) => ({ initial_message: message(text) }),
  inSandbox: (sandboxId: string) => ({ sandbox_id: sandboxId }),
  clientFields: (sandboxId: string, conversationId: string, parentId: string) => ({
    sandbox_id: sandboxId,
    conversation_id: conversationId,
    parent_conversation_id: parentId,
    llm_model: MODEL,
    agent_type: 'plan',
    system_message_suffix: 'Answer in French.',
    trigger: 'openhands_api',
    pr_number: [12, 13],
    public: true,
  }),
};

export const finish = (m: string): ScriptedReply => ({ toolCalls: [{ name: 'finish', arguments: { message: m } }] });

export { until };

/** The JSON type of a value, as a generated client declares it. */
export const typeOf = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'number' ? (Number.isInteger(v) ? 'integer' : 'number') : typeof v);
/** Field names, sorted. */
export const fields = (o: unknown) => (o && typeof o === 'object' && !Array.isArray(o) ? Object.keys(o).sort() : typeOf(o));
/** Field → JSON type, for the fields that are not null (the suite compares the ones both fill). */
export const types = (o: unknown) => Object.fromEntries(Object.entries((o ?? {}) as object).filter(([, v]) => v !== null).map(([k, v]) => [k, typeOf(v)]).sort());
export const locs = (r: Reply) => (Array.isArray(r.body?.detail) ? r.body.detail.map((d: any) => JSON.stringify(d.loc)).sort() : undefined);

export async function records(s: AppSide, ids: string[]): Promise<any[]> {
  const r = await s.api('GET', `${V1}/app-conversations?${ids.map((i) => `ids=${i}`).join('&')}`);
  if (r.status !== 200) throw new Error(`app-conversations: ${r.status} ${r.text}`);
  return r.body;
}

/**
 * The conversation's events. OpenHands' file-backed event store answers a read that meets an event
 * file half written with a 500 now and then: such a read is tried again (up to 5 s), as a client would.
 */
export async function events(s: AppSide, id: string): Promise<any[]> {
  for (let tries = 0; ; tries++) {
    const r = await s.api('GET', `${V1}/conversation/${id}/events/search?limit=100`);
    if (r.status === 200) return r.body.items;
    if (r.status < 500 || tries >= 50) throw new Error(`events/search: ${r.status} ${r.text}`);
    await new Promise((res) => setTimeout(res, 100));
  }
}

export const isUpdate = (e: any) => e.kind === 'ConversationStateUpdateEvent';
/** Event kinds in order, messages with their source; state updates left out (compared by `update_keys`). */
export const kinds = (evs: any[]) => evs.filter((e) => !isUpdate(e)).map((e) => (e.kind === 'MessageEvent' ? `MessageEvent:${e.source}` : e.kind === 'ObservationEvent' ? `ObservationEvent:${e.tool_name}` : e.kind));
export const updateKeys = (evs: any[]) => [...new Set(evs.filter(isUpdate).map((e) => e.key))].sort();
/** Where the first user message falls among the first events, state updates included: the order a client replays. */
export const beforeFirstMessage = (evs: any[]) => evs.slice(0, evs.findIndex((e) => e.kind === 'MessageEvent')).map((e) => (isUpdate(e) ? `update:${e.key}` : e.kind));

/** Waits for the agent's finish observation number `n` to reach the app; returns the events then. */
export async function finished(s: AppSide, id: string, n = 1): Promise<any[]> {
  let evs: any[] = [];
  return until(
    () => `finish #${n} to reach the app (model calls: ${s.llm.requests.length}, answers left: ${s.scriptLeft()}, events: ${kinds(evs).join(' ')})`,
    async () => {
      evs = await events(s, id);
      return evs.filter((e) => e.kind === 'ObservationEvent' && e.tool_name === 'finish').length >= n ? evs : undefined;
    },
  );
}

/**
 * The conversation's live event socket, as a client opens it from the record: the agent server at
 * conversation_url, authenticated with the record's session_api_key in a first frame.
 */
export async function liveSocket(s: AppSide, id: string): Promise<{ frames: any[]; until(what: string, done: (f: any[]) => boolean): Promise<void>; close(): void }> {
  const [rec] = await records(s, [id]);
  const url = new URL(rec.conversation_url);
  const ws = new WebSocket(`ws://${url.host}/sockets/events/${url.pathname.split('/').at(-1)}`);
  const frames: any[] = [];
  ws.addEventListener('message', (m) => frames.push(JSON.parse(String(m.data))));
  await new Promise((resolve, reject) => {
    ws.addEventListener('open', resolve, { once: true });
    ws.addEventListener('error', () => reject(new Error(`${s.name}: the event socket at ${url.host} did not open`)), { once: true });
  });
  ws.send(JSON.stringify({ type: 'auth', session_api_key: rec.session_api_key }));
  return {
    frames,
    until: async (what, done) => {
      await until(`${what} on the event socket (${kinds(frames).join(' ')})`, async () => done(frames));
    },
    close: () => ws.close(),
  };
}

/** Polls the start task as a client does (every 100 ms); the steps seen, in order, each once. */
export async function pollTask(s: AppSide, taskId: string): Promise<{ task: any; seen: string[] }> {
  const seen: string[] = [];
  const task = await until(
    'the start task to settle',
    async () => {
      const r = await s.api('GET', `${V1}/app-conversations/start-tasks?ids=${taskId}`);
      if (r.status !== 200) throw new Error(`start-tasks: ${r.status} ${r.text}`);
      const [t] = r.body;
      if (t && seen.at(-1) !== t.status) seen.push(t.status);
      return t?.status === 'READY' || t?.status === 'ERROR' ? t : undefined;
    },
    120_000,
    100,
  );
  return { task, seen };
}

export const inOrder = (seen: string[]) => seen.every((st, i) => i === 0 || STEPS.indexOf(st) > STEPS.indexOf(seen[i - 1]!));

