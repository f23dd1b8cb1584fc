// The SDK's RemoteWorkspace.get_secrets() flow with the real agent: a secret stored at
// /api/settings/secrets, handed to a conversation as a LookupSecret of this server's own URL (with
// the session key), reaches the terminal command that names it, masked in what comes back; one of
// ours naming nothing is a 422 at the secret. A lookup of any other URL is a GET of that URL (a real
// local HTTP server here), its headers sent, the answer the value; a failed one is a 422 at the secret.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { createAgent } from '../agent/agent.ts';
import { eventually, TEST_KEY, userText, useRealAgentServer } from './test-support.ts';

let logText = '';
const ctx = useRealAgentServer({ createAgent, overrides: () => ({ log: pino({ level: 'trace' }, new Writable({ write: (c, _e, cb) => ((logText += String(c)), cb()) })) }) });

// A secret store of someone else's: answers /vault/{name} with the value when the bearer token is right.
const VAULT_TOKEN = 'vault-bearer-7f3a9c';
const VAULT: Record<string, string> = { DEPLOY_KEY: 'dk_remote_0123456789abcdef' };
const seen: IncomingHttpHeaders[] = [];
let vault: Server;
let vaultUrl = '';
beforeAll(async () => {
  vault = createServer((req, res) => {
    seen.push(req.headers);
    if (req.url === '/moved') return void res.writeHead(302, { location: '/vault/DEPLOY_KEY' }).end();
    if (req.headers.authorization !== `Bearer ${VAULT_TOKEN}`) return void res.writeHead(403).end('forbidden');
    const value = VAULT[decodeURIComponent((req.url ?? '').replace(/^\/vault\//, ''))];
    if (value === undefined) return void res.writeHead(404).end('no such secret');
    res.writeHead(200, { 'content-type': 'text/plain' }).end(value);
  });
  await new Promise<void>((r) => vault.listen(0, '127.0.0.1', r));
  vaultUrl = `http://127.0.0.1:${(vault.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => vault.close(() => r())));

const lookup = (url: string, key = TEST_KEY) => ({ kind: 'LookupSecret', url, headers: { 'X-Session-API-Key': key } });
const start = (secrets: Record<string, unknown>) =>
  ctx.s.api('/api/conversations', { method: 'POST', body: { workspace: { kind: 'LocalWorkspace', working_dir: join(ctx.dir.path, 'w') }, agent: { llm: { model: 'openai/scripted' }, tools: [{ name: 'terminal' }] }, secrets } });

describe('LookupSecret', () => {
  it('gives the stored value to the command that names it, masked in the observation', async () => {
    expect((await ctx.s.api('/api/settings/secrets', { method: 'PUT', body: { name: 'GITHUB_TOKEN', value: 'ghp_stored0123456789' } })).status).toBe(200);
    // Any host: a client reaches the sandbox through its public address; the session key says it is this server.
    const created = await start({ GITHUB_TOKEN: lookup('https://sandbox-1.example.com/api/settings/secrets/GITHUB_TOKEN') });
    expect(created.status).toBe(201);
    const id = created.body.id;
    ctx.llm.push({ toolCalls: [{ name: 'terminal', arguments: { command: 'printf %s "$GITHUB_TOKEN" | wc -c; echo "token=$GITHUB_TOKEN"' } }] }, { toolCalls: [{ name: 'finish', arguments: { message: 'done' } }] });
    await ctx.s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('use the token', true) });
    await eventually(async () => (await ctx.s.api(`/api/conversations/${id}`)).body.execution_status === 'finished', 15_000);
    const obs = (await ctx.s.api(`/api/conversations/${id}/events/search?kind=ObservationEvent&limit=100`)).body.items.map((e: any) => e.observation).filter((o: any) => o.kind === 'TerminalObservation');
    expect(obs[0].content[0].text.split('\n')).toEqual(['20', 'token=<secret-hidden>']);
    expect(JSON.stringify(obs)).not.toContain('ghp_stored0123456789');
    // The stored request keeps no value, and no URL or key either.
    expect(JSON.stringify((await ctx.s.api(`/api/conversations/${id}`)).body)).not.toMatch(/ghp_stored|example\.com/);
  });

  it('update_secrets takes a lookup too; one naming no stored secret is a 422 at the secret', async () => {
    await ctx.s.api('/api/settings/secrets', { method: 'PUT', body: { name: 'NPM_TOKEN', value: 'npm_stored456' } });
    const id = (await start({})).body.id;
    expect((await ctx.s.api(`/api/conversations/${id}/secrets`, { method: 'POST', body: { secrets: { NPM_TOKEN: lookup(`${ctx.s.url}/api/settings/secrets/NPM_TOKEN`) } } })).status).toBe(200);
    const missing = await ctx.s.api(`/api/conversations/${id}/secrets`, { method: 'POST', body: { secrets: { OTHER: lookup(`${ctx.s.url}/api/settings/secrets/OTHER`) } } });
    expect(missing.status).toBe(422);
    expect(missing.body.detail[0]).toMatchObject({ loc: ['body', 'secrets', 'OTHER'], msg: 'Secret not found' });
    // A bare path (1.58 joins it to its own URL and answers from its store).
    expect((await ctx.s.api(`/api/conversations/${id}/secrets`, { method: 'POST', body: { secrets: { NPM_TOKEN: { kind: 'LookupSecret', url: '/api/settings/secrets/NPM_TOKEN' } } } })).status).toBe(200);
    const relMissing = await ctx.s.api(`/api/conversations/${id}/secrets`, { method: 'POST', body: { secrets: { OTHER: { kind: 'LookupSecret', url: '/api/settings/secrets/OTHER' } } } });
    expect(relMissing.body.detail[0]).toMatchObject({ loc: ['body', 'secrets', 'OTHER'], msg: 'Secret not found' });
    const relElse = await ctx.s.api(`/api/conversations/${id}/secrets`, { method: 'POST', body: { secrets: { OTHER: { kind: 'LookupSecret', url: '/elsewhere' } } } });
    expect(relElse.body.detail[0]).toMatchObject({ loc: ['body', 'secrets', 'OTHER'], msg: 'Secret lookup failed: the lookup URL is not an absolute URL' });
  });

  it('fetches a lookup of another URL with its headers: the command sees the value, nothing else does', async () => {
    seen.length = 0;
    const created = await start({ DEPLOY_KEY: { kind: 'LookupSecret', url: `${vaultUrl}/vault/DEPLOY_KEY`, headers: { Authorization: `Bearer ${VAULT_TOKEN}` } } });
    expect(created.status).toBe(201);
    expect(seen.map((h) => h.authorization)).toEqual([`Bearer ${VAULT_TOKEN}`]);
    const id = created.body.id;
    ctx.llm.push({ toolCalls: [{ name: 'terminal', arguments: { command: 'printf %s "$DEPLOY_KEY" | sha256sum | cut -c1-16; echo "key=$DEPLOY_KEY"' } }] }, { toolCalls: [{ name: 'finish', arguments: { message: 'done' } }] });
    await ctx.s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('deploy', true) });
    await eventually(async () => (await ctx.s.api(`/api/conversations/${id}`)).body.execution_status === 'finished', 15_000);
    const { createHash } = await import('node:crypto');
    const events = (await ctx.s.api(`/api/conversations/${id}/events/search?limit=100`)).body.items;
    const obs = events.filter((e: any) => e.observation?.kind === 'TerminalObservation').map((e: any) => e.observation);
    expect(obs[0].content[0].text.split('\n')).toEqual([createHash('sha256').update(VAULT.DEPLOY_KEY!).digest('hex').slice(0, 16), 'key=<secret-hidden>']);
    // Not in the events, the conversation, the model's requests or the (trace-level) log; the header value neither.
    expect(logText).toContain('"level"'); // the sink is the server's log
    const everything = [JSON.stringify(events), JSON.stringify((await ctx.s.api(`/api/conversations/${id}`)).body), JSON.stringify(ctx.llm.requests), logText];
    for (const text of everything) {
      expect(text).not.toContain(VAULT.DEPLOY_KEY);
      expect(text).not.toContain(VAULT_TOKEN);
    }
    // Fetched once, when given (not at each use as 1.58 does).
    expect(seen).toHaveLength(1);
  });

  it('update_secrets fetches too', async () => {
    const id = (await start({})).body.id;
    seen.length = 0;
    const r = await ctx.s.api(`/api/conversations/${id}/secrets`, { method: 'POST', body: { secrets: { DEPLOY_KEY: { kind: 'LookupSecret', url: `${vaultUrl}/vault/DEPLOY_KEY`, headers: { Authorization: `Bearer ${VAULT_TOKEN}` } } } } });
    expect(r.status).toBe(200);
    expect(seen).toHaveLength(1);
  });

  it('refuses a lookup that fails (non-2xx, redirect, unreachable): 422 at the secret, without headers or query', async () => {
    logText = '';
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const deadUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/s?token=q-secret-1`;
    await new Promise<void>((r) => closed.close(() => r()));
    const auth = { Authorization: `Bearer ${VAULT_TOKEN}` };
    const cases: [unknown, RegExp][] = [
      [{ kind: 'LookupSecret', url: `${vaultUrl}/vault/DEPLOY_KEY`, headers: { Authorization: 'Bearer wrong-token-1' } }, /answered HTTP 403$/],
      [{ kind: 'LookupSecret', url: `${vaultUrl}/vault/NOPE?token=q-secret-1`, headers: auth }, /\/vault\/NOPE answered HTTP 404$/],
      [{ kind: 'LookupSecret', url: `${vaultUrl}/moved`, headers: auth }, /answered HTTP 302$/],
      [{ kind: 'LookupSecret', url: deadUrl, headers: auth }, /failed: ECONNREFUSED$/],
      // Our own secret route with a key that is not ours is not answered from the store: fetched, and refused.
      [{ kind: 'LookupSecret', url: `${ctx.s.url}/api/settings/secrets/T`, headers: { 'X-Session-API-Key': 'someone-elses-key' } }, /answered HTTP 401$/],
    ];
    for (const [secret, msg] of cases) {
      const r = await start({ T: secret });
      expect(r.status).toBe(422);
      expect(r.body.detail[0].loc).toEqual(['body', 'secrets', 'T']);
      expect(r.body.detail[0].msg).toMatch(/^Secret lookup failed: GET /);
      expect(r.body.detail[0].msg).toMatch(msg);
      expect(JSON.stringify(r.body)).not.toMatch(/wrong-token-1|vault-bearer|q-secret-1|someone-elses-key/);
    }
    expect(logText).not.toMatch(/wrong-token-1|vault-bearer|q-secret-1|someone-elses-key/);
    expect((await ctx.s.api('/api/conversations/search')).body.items).toEqual([]);
  });
});
