// The facade's event relay against a real agent server: first-frame auth with the API key, the
// owner's conversation only, replay and live events passed through in order, resume after an event
// id, and a sandbox that does not serve closed with 4409 (the relay never resumes it).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { NS, setSandboxPhase, startWorkspaceHarness, type WorkspaceHarness } from './test-support.ts';
import { SandboxKind } from '../api/sandbox.ts';
import type { LoginSettings } from './login/config.ts';
import { hashSecret, newSecret, SESSION_COOKIE } from './login/session.ts';

interface Frame {
  id: string;
  kind: string;
  key?: string;
  llm_message?: { role: string; content: { text: string }[] };
}

/** A relay socket that authenticates with `key` and collects frames until closed. */
function relay(h: WorkspaceHarness, id: string, key: string, query = '', session?: { cookie: string; csrf: string }) {
  const ws = new WebSocket(`${h.server.url.replace('http', 'ws')}/api/v1/conversation/${id}/events/socket${query}`, session ? { headers: { cookie: session.cookie } } : {});
  const frames: Frame[] = [];
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  ws.on('open', () => ws.send(JSON.stringify(session ? { type: 'auth', csrf_token: session.csrf } : { type: 'auth', api_key: key })));
  ws.on('message', (data) => frames.push(JSON.parse(data.toString()) as Frame));
  const until = async (check: () => boolean, what: string) => {
    const deadline = Date.now() + 5000;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; frames: ${frames.map((f) => f.kind).join(', ')}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return { ws, frames, closed, until };
}

const texts = (frames: Frame[]) => frames.filter((f) => f.kind === 'MessageEvent').map((f) => f.llm_message!.content[0]!.text);

describe('the event relay', () => {
  let h: WorkspaceHarness;
  beforeEach(async () => {
    h = await startWorkspaceHarness();
  });
  afterEach(() => h.close());

  const say = (id: string, text: string) => h.call('POST', `/api/v1/app-conversations/${id}/send-message`, { body: { role: 'user', content: [{ type: 'text', text }], run: true } });

  it('refuses a wrong key (4001), another user (4004), a bad auth frame (4001)', async () => {
    const id = await h.conversation(h.workspace);
    expect(await relay(h, id, 'not-a-key').closed).toMatchObject({ code: 4001 });
    expect(await relay(h, id, h.bob.key).closed).toMatchObject({ code: 4004 });
    const ws = new WebSocket(`${h.server.url.replace('http', 'ws')}/api/v1/conversation/${id}/events/socket`);
    const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
    ws.on('open', () => ws.send('{"type":"auth","session_api_key":"sk-1"}'));
    expect(await closed).toBe(4001);
  });

  it('replays the history and then relays live events, in order, each once', async () => {
    const id = await h.conversation(h.workspace);
    expect((await say(id, 'first')).status).toBe(200);
    const r = relay(h, id, h.alice.key, '?resend_mode=all');
    await r.until(() => texts(r.frames).length >= 2, 'the first exchange');
    expect(r.frames[0]).toMatchObject({ kind: 'ConversationStateUpdateEvent', key: 'full_state' });
    expect((await say(id, 'second')).status).toBe(200);
    await r.until(() => texts(r.frames).length >= 4, 'the live exchange');
    expect(texts(r.frames)).toEqual(['first', 'echo: first', 'second', 'echo: second']);
    const stored = r.frames.filter((f) => !(f.kind === 'ConversationStateUpdateEvent' && f.key === 'full_state')).map((f) => f.id);
    expect(new Set(stored).size).toBe(stored.length);
    r.ws.close();
  });

  it('resumes after the last event seen: nothing before it again, nothing after it missed', async () => {
    const id = await h.conversation(h.workspace);
    await say(id, 'one');
    const a = relay(h, id, h.alice.key, '?resend_mode=all');
    await a.until(() => texts(a.frames).length >= 2, 'the first exchange');
    const last = a.frames.at(-1)!.id;
    a.ws.close();
    await a.closed;
    await say(id, 'two'); // while no socket is open
    const b = relay(h, id, h.alice.key, `?after_event_id=${last}`);
    await b.until(() => texts(b.frames).length >= 2, 'the missed exchange');
    expect(texts(b.frames)).toEqual(['two', 'echo: two']);
    const seenBefore = new Set(a.frames.map((f) => f.id));
    expect(b.frames.filter((f) => f.key !== 'full_state' && seenBefore.has(f.id))).toEqual([]);
    b.ws.close();
  });

  it('closes with 4409 while the sandbox does not serve, and when the agent server goes away', async () => {
    const id = await h.conversation(h.workspace);
    const live = relay(h, id, h.alice.key);
    await live.until(() => live.frames.length >= 1, 'the full_state frame');
    await setSandboxPhase(h.store, 'sb-1', 'PAUSED');
    const r = relay(h, id, h.alice.key);
    expect(await r.closed).toMatchObject({ code: 4409, reason: expect.stringContaining('PAUSED') });
    expect((await h.store.get(SandboxKind, NS, 'sb-1'))!.spec.paused).not.toBe(true);
    await h.agent.close();
    expect((await live.closed).code).toBeGreaterThanOrEqual(1001);
  });
});

describe('the event relay with OIDC login on', () => {
  const LOGIN: LoginSettings = {
    // Never contacted: sessions are made in the store here, as a login makes them.
    issuer: 'http://127.0.0.1:9/realms/none',
    clientId: 'agentyard',
    publicUrl: 'http://127.0.0.1:3000',
    roleClaim: 'groups',
    scopes: 'openid',
    sessionMaxAgeMs: 8 * 3600_000,
    sessionIdleMs: 3600_000,
  };
  let h: WorkspaceHarness;
  beforeEach(async () => {
    h = await startWorkspaceHarness({}, { login: LOGIN });
  });
  afterEach(() => h.close());

  async function session(userId: string): Promise<{ cookie: string; csrf: string }> {
    const id = newSecret();
    const csrf = newSecret();
    await h.db.logins.createSession(hashSecret(id), { userId, csrfToken: csrf, idToken: null, expiresAt: h.clock.now().plus({ hours: 1 }).toUTC().toISO()! });
    return { cookie: `${SESSION_COOKIE}=${id}`, csrf };
  }

  it("takes the session cookie with the session's CSRF token; not the cookie alone, nor another token", async () => {
    const id = await h.conversation(h.workspace);
    const s = await session(h.alice.user.id);
    const ok = relay(h, id, '', '', s);
    await ok.until(() => ok.frames.length >= 1, 'the full_state frame');
    expect(ok.frames[0]).toMatchObject({ kind: 'ConversationStateUpdateEvent', key: 'full_state' });
    ok.ws.close();
    expect(await relay(h, id, '', '', { cookie: s.cookie, csrf: 'not-the-token' }).closed).toMatchObject({ code: 4001 });
    expect(await relay(h, id, '', '', { cookie: 'agentyard_session=made-up', csrf: s.csrf }).closed).toMatchObject({ code: 4001 });
    const bob = await session(h.bob.user.id);
    expect(await relay(h, id, '', '', bob).closed).toMatchObject({ code: 4004 });
  });
});
