// Warm pools end to end, over HTTP against `agentyard up` (real controller, real agent-server
// processes, the real model gateway in front of a scripted provider): an administrator creates a
// pool through the API; starts claim its ready members (the agent then reaches the model with the
// token the hand-over gave it), the pool refills, a start nobody can serve starts cold, parallel
// starts never share a member, and /metrics counts hits and misses.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScriptedLlm } from '../../src/testing/scripted-llm/server.ts';
import { finished, startReady, userMessage } from './flows.ts';
import { eventually, startServiceWithModel, type RunningService } from './harness.ts';

interface Pool {
  name: string;
  replicas: number;
  ready: number;
  members: number;
  claimed: number;
  status: string;
}

describe('agentyard up: warm pools', () => {
  let llm: ScriptedLlm;
  let svc: RunningService;
  let stop: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    ({ llm, svc, stop } = await startServiceWithModel({ env: { AGENTYARD_SANDBOX_CAPACITY: '16' } }));
  });
  afterAll(async () => {
    await stop?.();
  });

  const pool = async (name: string) => (await svc.api<Pool>('GET', `/api/v1/warm-pools/${name}`)).body;
  const filled = (name: string, ready: number) => eventually(async () => {
    const p = await pool(name);
    return p.ready === ready && p.members === ready ? p : undefined;
  }, `warm pool ${name} to have ${ready} ready members`, 90_000);
  const metric = async (line: RegExp) => {
    const text = await (await fetch(`${svc.url}/metrics`)).text();
    return Number(text.split('\n').find((l) => line.test(l))?.split(' ').at(-1) ?? 0);
  };

  it('a start claims a ready member, its agent reaches the model with the handed token, and the pool refills', async () => {
    const created = await svc.api<Pool>('POST', '/api/v1/warm-pools', { name: 'default', replicas: 2 });
    expect(created.status).toBe(201);
    await filled('default', 2);
    const hitsBefore = await metric(/^agentyard_warm_pool_hits_total\{pool="default"\}/);

    llm.push({ toolCalls: [{ name: 'finish', arguments: { message: 'done from a warm sandbox' } }] });
    const task = await startReady(svc, { initial_message: userMessage('hello from the pool') });
    expect(task.sandbox_id).toMatch(/^default-[0-9a-f]{10}$/);
    const transcript = await finished(svc, task.app_conversation_id);
    expect(JSON.stringify(transcript)).toContain('done from a warm sandbox');
    // The claimed sandbox is the user's now: listed with their sandboxes.
    const mine = await svc.api<{ items: { id: string }[] }>('GET', '/api/v1/sandboxes/search');
    expect(mine.body.items.map((s) => s.id)).toContain(task.sandbox_id);
    expect(await metric(/^agentyard_warm_pool_hits_total\{pool="default"\}/)).toBe(hitsBefore + 1);

    const refilled = await filled('default', 2);
    expect(refilled.claimed).toBe(1);
  });

  it('starts cold when the pool has no ready member, and parallel starts never share a member', async () => {
    // Emptied: no member to claim, the start is a miss and gets its own new sandbox.
    expect((await svc.api('PATCH', '/api/v1/warm-pools/default', { replicas: 0 })).status).toBe(200);
    await filled('default', 0);
    const missesBefore = await metric(/^agentyard_warm_pool_misses_total /);
    const cold = await startReady(svc, {});
    expect(cold.sandbox_id).toBe(cold.app_conversation_id);
    expect(await metric(/^agentyard_warm_pool_misses_total /)).toBe(missesBefore + 1);

    // A pool of 3, 6 starts at once: each claimed member serves exactly one of them.
    expect((await svc.api('PATCH', '/api/v1/warm-pools/default', { replicas: 3 })).status).toBe(200);
    await filled('default', 3);
    const hitsBefore = await metric(/^agentyard_warm_pool_hits_total\{pool="default"\}/);
    const tasks = await Promise.all(Array.from({ length: 6 }, () => startReady(svc, {})));
    const claimed = tasks.filter((t) => t.sandbox_id.startsWith('default-')).map((t) => t.sandbox_id);
    expect(new Set(claimed).size).toBe(claimed.length);
    // Members refilled during the burst may serve a late start too; never fewer than the 3 that were ready.
    expect(claimed.length).toBeGreaterThanOrEqual(3);
    expect(await metric(/^agentyard_warm_pool_hits_total\{pool="default"\}/)).toBe(hitsBefore + claimed.length);
    expect(new Set(tasks.map((t) => t.sandbox_id)).size).toBe(6);
  });

  it('deleting the pool removes its unclaimed members and leaves the claimed ones with their users', async () => {
    const before = (await svc.api<{ items: { id: string }[] }>('GET', '/api/v1/sandboxes/search')).body.items.map((s) => s.id);
    expect((await svc.api('DELETE', '/api/v1/warm-pools/default')).status).toBe(200);
    expect((await svc.api('GET', '/api/v1/warm-pools/default')).status).toBe(404);
    const after = (await svc.api<{ items: { id: string }[] }>('GET', '/api/v1/sandboxes/search')).body.items.map((s) => s.id);
    expect(after.sort()).toEqual(before.sort());
  });
});
