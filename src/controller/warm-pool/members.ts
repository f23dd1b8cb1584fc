// Pool members as data: which sandboxes belong to a pool, which can be claimed, what a new member
// looks like. Pure functions; the reconciler and the claim do the I/O.
import { randomBytes } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { ANNOTATION_CREATED_AT, API_VERSION, createdAtOf } from '../../api/meta.ts';
import type { Sandbox, SandboxSpec } from '../../api/sandbox.ts';
import { LABEL_WARM_POOL, type SandboxTemplate, type SandboxWarmPool } from '../../api/warm-pool.ts';

/** The template fields of a sandbox spec, without the ones left unset (so `{}` equals "all defaults"). */
export function templateOf(spec: Pick<SandboxSpec, 'image' | 'resources'> | undefined): SandboxTemplate {
  const out: SandboxTemplate = {};
  if (spec?.image) out.image = spec.image;
  const resources = Object.fromEntries(Object.entries(spec?.resources ?? {}).filter(([, v]) => v !== undefined && v !== ''));
  if (Object.keys(resources).length > 0) out.resources = resources;
  return out;
}

/** Whether a sandbox made from `spec` would be the same as the pool's members. */
export function matchesTemplate(pool: SandboxWarmPool, spec: Pick<SandboxSpec, 'image' | 'resources'> | undefined): boolean {
  return isDeepStrictEqual(templateOf(pool.spec.template), templateOf(spec));
}

/** An unclaimed member (of any pool): no user owns it, no conversation may run on it. */
export function isUnclaimedMember(sb: Sandbox): boolean {
  return sb.metadata.labels?.[LABEL_WARM_POOL] !== undefined;
}

/** A member that is going, or that will never serve: it is replaced. */
export function isLostMember(sb: Sandbox): boolean {
  const phase = sb.status?.phase;
  return sb.metadata.deletionTimestamp !== undefined || sb.spec.paused === true || phase === 'ERROR' || phase === 'MISSING';
}

/** A member a start can claim now: its agent server runs. */
export function isReadyMember(sb: Sandbox): boolean {
  return isUnclaimedMember(sb) && !isLostMember(sb) && sb.status?.phase === 'RUNNING';
}

/** Member names: the pool's name (shortened, so runtime object names stay short) and a random suffix. */
export function memberName(pool: string): string {
  const stem = pool.slice(0, 30).replace(/[-.]+$/, '');
  return `${stem}-${randomBytes(5).toString('hex')}`;
}

export function desiredMember(pool: SandboxWarmPool, name: string, nowIso: string): Sandbox {
  const template = templateOf(pool.spec.template);
  return {
    apiVersion: API_VERSION,
    kind: 'Sandbox',
    metadata: {
      name,
      namespace: pool.metadata.namespace ?? 'default',
      labels: { [LABEL_WARM_POOL]: pool.metadata.name },
      annotations: { [ANNOTATION_CREATED_AT]: nowIso },
      // Deleting the pool deletes its unclaimed members; a claim removes this reference.
      ownerReferences: [{ apiVersion: pool.apiVersion, kind: pool.kind, name: pool.metadata.name, uid: pool.metadata.uid ?? '', controller: true, blockOwnerDeletion: true }],
    },
    spec: { paused: false, ...template },
  };
}

/** Oldest first: the member that waited longest is claimed (or kept) first. */
export function byAge(a: Sandbox, b: Sandbox): number {
  const t = (sb: Sandbox) => createdAtOf(sb) ?? '';
  return t(a).localeCompare(t(b)) || a.metadata.name.localeCompare(b.metadata.name);
}
