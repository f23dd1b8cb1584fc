// WarmPoolReconciler on the real SQLite store with the fake runtime: filling, replacing, scaling
// down, capacity, and the members' keys and timers.
import { describe, expect, it } from 'vitest';
import { ConditionType, Reason } from '../../api/conditions.ts';
import { MODEL_TOKEN_KEY } from '../../api/model-gateway.ts';
import { SandboxKind } from '../../api/sandbox.ts';
import { SecretKind } from '../../api/secret.ts';
import { LABEL_WARM_POOL, SandboxWarmPoolKind } from '../../api/warm-pool.ts';
import { controllerEnv, NS } from '../testing/env.ts';
import { createPool, fill, members } from './testing.ts';
import { sessionSecretName } from '../sandbox/session-secret.ts';

type Env = ReturnType<typeof controllerEnv>;

const pool = (env: Env, name: string) => env.store.get(SandboxWarmPoolKind, NS, name);

describe('WarmPoolReconciler', () => {
  it('fills a pool with started sandboxes that belong to the pool and to no user, and reports ready/desired', async () => {
    const env = controllerEnv();
    await createPool(env, 'py', { replicas: 3, template: { resources: { cpu: '1' } } });
    await env.pools.reconcile(`${NS}/py`);
    const created = await members(env, 'py');
    expect(created).toHaveLength(3);
    for (const sb of created) {
      expect(sb.spec).toEqual({ paused: false, resources: { cpu: '1' } });
      expect(sb.spec.owner).toBeUndefined();
      expect(sb.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'SandboxWarmPool', name: 'py', controller: true })]);
      expect(sb.metadata.name).toMatch(/^py-[0-9a-f]{10}$/);
    }
    let p = (await pool(env, 'py'))!;
    expect(p.status).toMatchObject({ replicas: 3, readyReplicas: 0, observedGeneration: 1, selector: `${LABEL_WARM_POOL}=py` });
    expect(p.status?.conditions?.find((c) => c.type === ConditionType.Ready)).toMatchObject({ status: 'False', reason: Reason.PoolFilling, observedGeneration: 1 });

    await fill(env, 'py');
    p = (await pool(env, 'py'))!;
    expect(p.status).toMatchObject({ replicas: 3, readyReplicas: 3 });
    expect(p.status?.conditions?.find((c) => c.type === ConditionType.Ready)).toMatchObject({ status: 'True', reason: Reason.PoolFilled });
    // Started, without a model token: nobody's model budget is reachable from an unclaimed member.
    expect(env.runtime.calls.filter((c) => c.startsWith('start ')).length).toBe(3);
    const secret = await env.store.get(SecretKind, NS, sessionSecretName(created[0]!.metadata.name));
    expect(secret?.data?.key).toBeTruthy();
    expect(secret?.data?.[MODEL_TOKEN_KEY]).toBeUndefined();
  });

  it('keeps idle members running: the idle pause and the 12-hour cap do not apply to them', async () => {
    const env = controllerEnv({ idleTimeMs: 60_000 });
    await createPool(env, 'p', { replicas: 1 });
    const [member] = await fill(env, 'p');
    const result = await env.sandboxes.reconcile(`${NS}/${member!.metadata.name}`);
    expect(result.requeueAfterMs).toBeUndefined();
    env.clock.advance(13 * 3_600_000);
    await env.settleSandbox(member!.metadata.name);
    const after = (await env.sandbox(member!.metadata.name))!;
    expect(after.spec.paused).toBe(false);
    expect(after.status?.phase).toBe('RUNNING');
  });

  it('replaces a failed member and a member someone paused', async () => {
    const env = controllerEnv();
    await createPool(env, 'p', { replicas: 2 });
    const [a, b] = await fill(env, 'p');
    env.runtime.states.set(a!.metadata.name, { phase: 'failed', reason: 'RuntimeFailed', message: 'image pull failed' });
    // A member whose agent server is gone while RUNNING is failed by the sandbox reconciler.
    await env.settleSandbox(a!.metadata.name);
    expect((await env.sandbox(a!.metadata.name))!.status?.phase).toBe('ERROR');
    const latestB = (await env.sandbox(b!.metadata.name))!;
    await env.store.update(SandboxKind, { ...latestB, spec: { ...latestB.spec, paused: true } });
    await env.pools.reconcile(`${NS}/p`);
    const now = await members(env, 'p');
    expect(now).toHaveLength(2);
    expect(now.map((s) => s.metadata.name)).not.toContain(a!.metadata.name);
    expect(now.map((s) => s.metadata.name)).not.toContain(b!.metadata.name);
    // The replaced ones are on their way out (finalizer: the runtime deletes them first).
    expect((await env.sandbox(a!.metadata.name))?.metadata.deletionTimestamp).toBeDefined();
  });

  it('scales down when replicas drop (starting members first), and replaces members when the template changes', async () => {
    const env = controllerEnv();
    await createPool(env, 'p', { replicas: 3 });
    const ready = await fill(env, 'p');
    let p = (await pool(env, 'p'))!;
    await env.store.update(SandboxWarmPoolKind, { ...p, spec: { ...p.spec, replicas: 4 } });
    await env.pools.reconcile(`${NS}/p`);
    const four = await members(env, 'p');
    const starting = four.find((s) => !ready.some((r) => r.metadata.name === s.metadata.name))!;
    p = (await pool(env, 'p'))!;
    await env.store.update(SandboxWarmPoolKind, { ...p, spec: { ...p.spec, replicas: 2 } });
    await env.pools.reconcile(`${NS}/p`);
    const two = await members(env, 'p');
    expect(two).toHaveLength(2);
    expect(two.map((s) => s.metadata.name)).not.toContain(starting.metadata.name);
    expect(two.every((s) => s.status?.phase === 'RUNNING')).toBe(true);

    p = (await pool(env, 'p'))!;
    await env.store.update(SandboxWarmPoolKind, { ...p, spec: { ...p.spec, template: { image: 'registry.local/py:3.13' } } });
    await env.pools.reconcile(`${NS}/p`);
    const replaced = await members(env, 'p');
    expect(replaced).toHaveLength(2);
    expect(replaced.every((s) => s.spec.image === 'registry.local/py:3.13')).toBe(true);
    expect((await pool(env, 'p'))!.status?.observedGeneration).toBe(4);
  });

  it('never starts members past the installation capacity, and says so', async () => {
    const env = controllerEnv({ capacity: 3 });
    await env.createSandbox('users-own');
    await createPool(env, 'p', { replicas: 5 });
    const result = await env.pools.reconcile(`${NS}/p`);
    expect(await members(env, 'p')).toHaveLength(2);
    expect(result.requeueAfterMs).toBeGreaterThan(0);
    const p = (await pool(env, 'p'))!;
    expect(p.status?.conditions?.find((c) => c.type === ConditionType.Ready)).toMatchObject({ status: 'False', reason: Reason.CapacityExceeded });
  });

  it('scales to zero, and a deleted pool takes its unclaimed members with it', async () => {
    const env = controllerEnv();
    await createPool(env, 'p', { replicas: 2 });
    await fill(env, 'p');
    await env.store.delete(SandboxWarmPoolKind, NS, 'p');
    // Garbage collection marks the members deleting; their finalizer runs through the sandbox reconciler.
    const left = (await env.store.list(SandboxKind, NS)).items;
    expect(left.every((s) => s.metadata.deletionTimestamp)).toBe(true);
    for (const sb of left) await env.sandboxes.reconcile(`${NS}/${sb.metadata.name}`);
    expect((await env.store.list(SandboxKind, NS)).items).toHaveLength(0);
  });
});
