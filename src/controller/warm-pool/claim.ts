// Claiming a warm-pool member for a conversation start. The claim is one update of the member with
// its resourceVersion: it takes the pool's label and ownerReference away and gives the sandbox its
// user. Two starts (in one controller or in two) that pick the same member cannot both win: the
// second update is a Conflict and that start tries the next member, or starts cold.
import { Conflict, NotFound } from '../../api/errors.ts';
import { ANNOTATION_LAST_ACTIVITY, LABEL_OWNER } from '../../api/meta.ts';
import { SandboxKind, type Sandbox, type SandboxSpec } from '../../api/sandbox.ts';
import { ANNOTATION_CLAIMED_AT, ANNOTATION_CLAIMED_BY, LABEL_CLAIMED_FROM, LABEL_WARM_POOL, SandboxWarmPoolKind } from '../../api/warm-pool.ts';
import type { ResourceStore } from '../../store/types.ts';
import { byAge, isReadyMember, matchesTemplate } from './members.ts';

export interface ClaimRequest {
  namespace: string;
  /** The user the sandbox passes to ('' or undefined: an owner-less conversation made with kubectl). */
  owner: string | undefined;
  /** The conversation whose start claims. */
  conversation: string;
  /** What the start's own new sandbox would be (image, resources). */
  spec: Pick<SandboxSpec, 'image' | 'resources'>;
  nowIso: string;
}

/** The claimed member, or undefined when no pool had a ready member of this template. */
export async function claimMember(store: ResourceStore, req: ClaimRequest, sandboxes?: readonly Sandbox[]): Promise<Sandbox | undefined> {
  const { items: pools } = await store.list(SandboxWarmPoolKind, req.namespace);
  const matching = new Set(pools.filter((p) => !p.metadata.deletionTimestamp && matchesTemplate(p, req.spec)).map((p) => p.metadata.name));
  if (matching.size === 0) return undefined;
  const all = sandboxes ?? (await store.list(SandboxKind, req.namespace)).items;
  const candidates = all.filter((sb) => isReadyMember(sb) && matching.has(sb.metadata.labels![LABEL_WARM_POOL]!) && matchesTemplate(pools.find((p) => p.metadata.name === sb.metadata.labels![LABEL_WARM_POOL])!, sb.spec)).sort(byAge);
  for (const member of candidates) {
    try {
      return await store.update(SandboxKind, claimed(member, req));
    } catch (err) {
      // Another start took it first, or the pool removed it: the next one.
      if (!(err instanceof Conflict) && !(err instanceof NotFound)) throw err;
    }
  }
  return undefined;
}

/** The member as its user's sandbox: owner, labels, no pool reference; timers count from now. */
function claimed(member: Sandbox, req: ClaimRequest): Sandbox {
  const pool = member.metadata.labels![LABEL_WARM_POOL]!;
  const { [LABEL_WARM_POOL]: _pool, ...labels } = member.metadata.labels ?? {};
  return {
    ...member,
    metadata: {
      ...member.metadata,
      labels: { ...labels, ...(req.owner ? { [LABEL_OWNER]: req.owner } : {}), [LABEL_CLAIMED_FROM]: pool },
      annotations: { ...member.metadata.annotations, [ANNOTATION_CLAIMED_BY]: req.conversation, [ANNOTATION_CLAIMED_AT]: req.nowIso, [ANNOTATION_LAST_ACTIVITY]: req.nowIso },
      ownerReferences: (member.metadata.ownerReferences ?? []).filter((r) => r.kind !== SandboxWarmPoolKind.kind),
    },
    spec: { ...member.spec, ...(req.owner ? { owner: req.owner } : {}) },
  };
}

/** A sandbox an earlier pass of this conversation's start claimed (it died before recording the choice). */
export function earlierClaim(sandboxes: readonly Sandbox[], conversation: string, owner: string | undefined): Sandbox | undefined {
  return sandboxes.find((sb) => sb.metadata.annotations?.[ANNOTATION_CLAIMED_BY] === conversation && (sb.spec.owner ?? '') === (owner ?? '') && !sb.metadata.deletionTimestamp);
}
