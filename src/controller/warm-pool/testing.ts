// Warm-pool helpers for controller tests: a pool, its members, and a pass that fills it.
import { API_VERSION } from '../../api/meta.ts';
import { SandboxKind, type Sandbox } from '../../api/sandbox.ts';
import { LABEL_WARM_POOL, SandboxWarmPoolKind, type SandboxWarmPool, type SandboxWarmPoolSpec } from '../../api/warm-pool.ts';
import { NS, type controllerEnv } from '../testing/env.ts';

type Env = ReturnType<typeof controllerEnv>;

export async function createPool(env: Env, name: string, spec: SandboxWarmPoolSpec): Promise<SandboxWarmPool> {
  return env.store.create(SandboxWarmPoolKind, { apiVersion: API_VERSION, kind: 'SandboxWarmPool', metadata: { name, namespace: NS }, spec });
}

export async function members(env: Env, pool: string): Promise<Sandbox[]> {
  return (await env.store.list(SandboxKind, NS, { labelSelector: `${LABEL_WARM_POOL}=${pool}` })).items.filter((s) => !s.metadata.deletionTimestamp);
}

/** Reconciles the pool, starts its members, and boots them when `boot` (agent servers at `url`). */
export async function fill(env: Env, pool: string, opts: { boot?: boolean; url?: string } = {}): Promise<Sandbox[]> {
  await env.pools.reconcile(`${NS}/${pool}`);
  for (const sb of await members(env, pool)) {
    await env.settleSandbox(sb.metadata.name);
    if (opts.boot !== false) {
      env.runtime.boot(sb.metadata.name, opts.url);
      await env.settleSandbox(sb.metadata.name);
    }
  }
  await env.pools.reconcile(`${NS}/${pool}`);
  return members(env, pool);
}

