// A dead agent server is restarted on its intact state with backoff, counted in the Sandbox status
// (so a restarted controller goes on counting), and only a crash loop ends in ERROR. Real SQLite
// store, fake runtime, a clock moved by hand.
import { describe, expect, it } from 'vitest';
import { SandboxKind } from '../../api/sandbox.ts';
import { controllerEnv, NS } from '../testing/env.ts';
import type { Result } from '../queue.ts';
import { SandboxReconciler } from './reconciler.ts';
import { DEFAULT_RESTART_POLICY } from './restarts.ts';

type Env = ReturnType<typeof controllerEnv>;

async function running(env: Env, name = 'sb1') {
  await env.createSandbox(name);
  await env.settleSandbox(name);
  env.runtime.boot(name);
  await env.settleSandbox(name);
  env.runtime.calls.length = 0;
  return (await env.sandbox(name))!;
}

const ready = async (env: Env, name = 'sb1') => (await env.sandbox(name))!.status?.conditions?.find((c) => c.type === 'Ready');

describe('restart after a death', () => {
  it('restarts a dead agent server after the backoff, on the same session window, with the count in the status', async () => {
    const env = controllerEnv();
    const before = await running(env);
    env.clock.advance(5_000);
    env.runtime.die('sb1');
    // Seen: STARTING, Ready False Restarting, nothing started before the backoff ends.
    expect(await env.settleSandbox('sb1')).toEqual({ requeueAfterMs: DEFAULT_RESTART_POLICY.backoffBaseMs });
    let sb = (await env.sandbox('sb1'))!;
    expect(sb.status).toMatchObject({ phase: 'STARTING', lastDeath: { id: 'death 1', reason: 'AgentServerExited', time: '2026-01-01T00:00:05.000Z' }, recentDeaths: ['2026-01-01T00:00:05.000Z'] });
    expect(sb.status?.restartCount).toBeUndefined();
    expect(await ready(env)).toMatchObject({ status: 'False', reason: 'Restarting', message: 'The agent server died (AgentServerExited); restarting in 1 s' });
    expect(env.runtime.calls).toEqual([]);

    env.clock.advance(999);
    await env.settleSandbox('sb1');
    expect(env.runtime.calls).toEqual([]);
    env.clock.advance(1);
    expect(await env.settleSandbox('sb1')).toEqual({ requeueAfterMs: 500 });
    expect(env.runtime.calls).toEqual(['start sb1']);
    sb = (await env.sandbox('sb1'))!;
    expect(sb.status).toMatchObject({ phase: 'STARTING', restartCount: 1, lastRestartTime: '2026-01-01T00:00:06.000Z' });
    expect(await ready(env)).toMatchObject({ reason: 'Restarting' });

    env.runtime.boot('sb1');
    await env.settleSandbox('sb1');
    sb = (await env.sandbox('sb1'))!;
    expect(sb.status).toMatchObject({ phase: 'RUNNING', restartCount: 1, sessionStartTime: before.status!.sessionStartTime });
    expect(await ready(env)).toMatchObject({ status: 'True', reason: 'Running' });
    expect(env.runtime.calls).toEqual(['start sb1']); // once
  });

  it('backs off 1, 2, 4, 8 s between deaths, and the fifth death within the window is a crash loop: ERROR, compute released', async () => {
    const env = controllerEnv();
    await running(env);
    const waits: (number | undefined)[] = [];
    for (let death = 1; death <= 4; death++) {
      env.runtime.die('sb1');
      waits.push(((await env.settleSandbox('sb1')) as Result).requeueAfterMs);
      env.clock.advance(waits.at(-1)!);
      await env.settleSandbox('sb1');
      env.runtime.boot('sb1');
      await env.settleSandbox('sb1');
      expect((await env.sandbox('sb1'))!.status).toMatchObject({ phase: 'RUNNING', restartCount: death });
      env.clock.advance(10_000);
    }
    expect(waits).toEqual([1_000, 2_000, 4_000, 8_000]);

    env.runtime.die('sb1', 'AgentServerExited');
    env.runtime.calls.length = 0;
    await env.settleSandbox('sb1');
    const sb = (await env.sandbox('sb1'))!;
    expect(sb.status).toMatchObject({ phase: 'ERROR', restartCount: 4 });
    expect(sb.status?.recentDeaths).toHaveLength(5);
    expect(await ready(env)).toMatchObject({ status: 'False', reason: 'CrashLoop', message: expect.stringMatching(/died 5 times within 10 minutes.*AgentServerExited: killed/) });
    expect(env.runtime.calls).toEqual(['pause sb1']);
    // Final: no more restarts.
    env.clock.advance(3_600_000);
    await env.settleSandbox('sb1');
    expect((await env.sandbox('sb1'))!.status?.phase).toBe('ERROR');
    expect(env.runtime.calls).toEqual(['pause sb1']);
  });

  it('deaths farther apart than the window never make a crash loop, and the backoff starts small again', async () => {
    const env = controllerEnv({ idleTimeMs: 24 * 3_600_000 });
    await running(env);
    for (let death = 1; death <= 7; death++) {
      env.runtime.die('sb1');
      expect(((await env.settleSandbox('sb1')) as Result).requeueAfterMs).toBe(1_000);
      env.clock.advance(1_000);
      await env.settleSandbox('sb1');
      env.runtime.boot('sb1');
      await env.settleSandbox('sb1');
      env.clock.advance(DEFAULT_RESTART_POLICY.crashLoopWindowMs);
    }
    expect((await env.sandbox('sb1'))!.status).toMatchObject({ phase: 'RUNNING', restartCount: 7 });
  });

  it('a death the runtime healed itself (a kubelet restart) is counted once, with no start of its own', async () => {
    const env = controllerEnv();
    await running(env);
    env.runtime.dieAndHeal('sb1');
    for (let i = 0; i < 3; i++) await env.settleSandbox('sb1');
    const sb = (await env.sandbox('sb1'))!;
    expect(sb.status).toMatchObject({ phase: 'RUNNING', restartCount: 1, lastDeath: { id: 'death 1', reason: 'Error' } });
    expect(env.runtime.calls).toEqual([]);
  });

  it('deaths of one Pod the controller did not see one by one (it was down) are all counted', async () => {
    const env = controllerEnv();
    await running(env);
    const podDeath = (n: number) => ({ id: `pod u1 death ${n}`, instance: 'pod u1', ordinal: n, reason: 'Error', message: 'container ended' });
    env.runtime.states.set('sb1', { phase: 'running', runtimeId: 'sb1', url: 'http://127.0.0.1:1/sb1', death: podDeath(1) });
    await env.settleSandbox('sb1');
    env.runtime.states.set('sb1', { phase: 'running', runtimeId: 'sb1', url: 'http://127.0.0.1:1/sb1', death: podDeath(3) });
    await env.settleSandbox('sb1');
    const sb = (await env.sandbox('sb1'))!;
    expect(sb.status).toMatchObject({ restartCount: 3, lastDeath: { ordinal: 3 } });
    expect(sb.status?.recentDeaths).toHaveLength(3);
    // A new Pod (after a pause or an eviction) starts its own count.
    env.runtime.states.set('sb1', { phase: 'running', runtimeId: 'sb1', url: 'http://127.0.0.1:1/sb1', death: { ...podDeath(1), id: 'pod u2 death 1', instance: 'pod u2' } });
    await env.settleSandbox('sb1');
    expect((await env.sandbox('sb1'))!.status?.restartCount).toBe(4);
  });

  it('a death before the agent server was ever ready is retried too', async () => {
    const env = controllerEnv();
    await env.createSandbox('sb1');
    await env.settleSandbox('sb1');
    env.runtime.die('sb1', 'AgentServerFailed');
    await env.settleSandbox('sb1');
    expect(await ready(env)).toMatchObject({ reason: 'Restarting' });
    env.clock.advance(1_000);
    await env.settleSandbox('sb1');
    env.runtime.boot('sb1');
    await env.settleSandbox('sb1');
    expect((await env.sandbox('sb1'))!.status).toMatchObject({ phase: 'RUNNING', restartCount: 1 });
    expect(env.runtime.calls).toEqual(['start sb1', 'start sb1']);
  });

  it('a restarted controller goes on from the status: the backoff and the count survive it', async () => {
    const env = controllerEnv();
    await running(env);
    env.runtime.die('sb1');
    await env.settleSandbox('sb1');
    const fresh = new SandboxReconciler({ store: env.store, runtime: env.runtime, clock: env.clock, settings: env.settings });
    env.clock.advance(400);
    expect(await fresh.reconcile(`${NS}/sb1`)).toEqual({ requeueAfterMs: 600 });
    expect(env.runtime.calls).toEqual([]);
    env.clock.advance(600);
    await fresh.reconcile(`${NS}/sb1`);
    expect(env.runtime.calls).toEqual(['start sb1']);
    expect((await env.store.get(SandboxKind, NS, 'sb1'))!.status?.restartCount).toBe(1);
  });

  it('a sandbox paused while its agent server is dead is paused, not restarted', async () => {
    const env = controllerEnv();
    await running(env);
    env.runtime.die('sb1');
    await env.settleSandbox('sb1');
    const sb = (await env.sandbox('sb1'))!;
    await env.store.update(SandboxKind, { ...sb, spec: { ...sb.spec, paused: true } });
    env.clock.advance(5_000);
    await env.settleSandbox('sb1');
    expect((await env.sandbox('sb1'))!.status?.phase).toBe('PAUSED');
    expect(env.runtime.calls).toEqual(['pause sb1']);
  });
});
