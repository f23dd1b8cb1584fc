// Warm pools through the application API: SandboxWarmPool resources in the installation's namespace,
// written by administrators and read back with what the controller reports.
import { ConditionType, Reason } from '../api/conditions.ts';
import { Conflict, NotFound } from '../api/errors.ts';
import { API_VERSION } from '../api/meta.ts';
import { SandboxWarmPoolKind, type SandboxWarmPool } from '../api/warm-pool.ts';
import type { WarmPoolCreate, WarmPoolInfo, WarmPoolUpdate } from '../api/app/warm-pools.ts';
import { templateOf } from '../controller/warm-pool/members.ts';
import type { FacadeDeps } from './deps.ts';

export function warmPoolInfo(p: SandboxWarmPool): WarmPoolInfo {
  const s = p.status;
  const ready = s?.conditions?.find((c) => c.type === ConditionType.Ready);
  const seen = s?.observedGeneration !== undefined && s.observedGeneration === p.metadata.generation;
  const status = !seen || !ready ? 'PENDING' : ready.status === 'True' ? 'FILLED' : ready.reason === Reason.CapacityExceeded ? 'AT_CAPACITY' : 'FILLING';
  return {
    name: p.metadata.name,
    replicas: p.spec.replicas,
    template: templateOf(p.spec.template),
    ready: s?.readyReplicas ?? 0,
    members: s?.replicas ?? 0,
    claimed: s?.claimed ?? 0,
    status,
    message: ready?.message ?? null,
    created_at: p.metadata.creationTimestamp ?? null,
  };
}

export async function listWarmPools(d: FacadeDeps): Promise<WarmPoolInfo[]> {
  return (await d.store.list(SandboxWarmPoolKind, d.namespace)).items.filter((p) => !p.metadata.deletionTimestamp).map(warmPoolInfo);
}

async function load(d: FacadeDeps, name: string): Promise<SandboxWarmPool> {
  const p = await d.store.get(SandboxWarmPoolKind, d.namespace, name);
  if (!p || p.metadata.deletionTimestamp) throw new NotFound(`Warm pool ${name} not found`);
  return p;
}

export async function getWarmPool(d: FacadeDeps, name: string): Promise<WarmPoolInfo> {
  return warmPoolInfo(await load(d, name));
}

export async function createWarmPool(d: FacadeDeps, req: WarmPoolCreate): Promise<WarmPoolInfo> {
  const template = templateOf(req.template);
  try {
    const created = await d.store.create(SandboxWarmPoolKind, {
      apiVersion: API_VERSION,
      kind: 'SandboxWarmPool',
      metadata: { name: req.name, namespace: d.namespace },
      spec: { replicas: req.replicas, ...(Object.keys(template).length > 0 ? { template } : {}) },
    });
    return warmPoolInfo(created);
  } catch (err) {
    if (err instanceof Conflict) throw new Conflict(`Warm pool ${req.name} exists already; change it with PATCH /api/v1/warm-pools/${req.name}`);
    throw err;
  }
}

export async function updateWarmPool(d: FacadeDeps, name: string, req: WarmPoolUpdate): Promise<WarmPoolInfo> {
  for (let attempt = 0; ; attempt++) {
    const p = await load(d, name);
    const template = req.template === undefined ? p.spec.template : templateOf(req.template);
    const spec = { replicas: req.replicas ?? p.spec.replicas, ...(template && Object.keys(template).length > 0 ? { template } : {}) };
    try {
      return warmPoolInfo(await d.store.update(SandboxWarmPoolKind, { ...p, spec }));
    } catch (err) {
      // The controller wrote its status meanwhile (a new resourceVersion): apply the change again.
      if (!(err instanceof Conflict) || attempt >= 3) throw err;
    }
  }
}

/** Its unclaimed members go with it; sandboxes users claimed stay theirs. */
export async function deleteWarmPool(d: FacadeDeps, name: string): Promise<void> {
  await load(d, name);
  await d.store.delete(SandboxWarmPoolKind, d.namespace, name);
}
