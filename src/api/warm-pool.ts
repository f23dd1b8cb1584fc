// The SandboxWarmPool resource: a number of started, READY sandboxes of one template, owned by the
// pool and by no user, kept ready so that a conversation start can claim one instead of waiting for
// a cold start (in the spirit of kubernetes-sigs/agent-sandbox's SandboxWarmPool/SandboxClaim; here
// the claim is made by the controller when it places a conversation, not by a separate resource).
import Type, { type Static } from 'typebox';
import { API_VERSION, Condition, GROUP, ObjectMeta, type ResourceKind } from './meta.ts';
import { SandboxSpec } from './sandbox.ts';

/** Most members one pool may ask for: a pool is a latency buffer, not a fleet. */
export const MAX_WARM_POOL_REPLICAS = 100;

/**
 * What every member runs: the fields of a Sandbox's spec that shape the sandbox itself (image and
 * resources). A start claims from a pool whose template equals what its own new sandbox would get.
 */
export const SandboxTemplate = Type.Object(
  {
    image: SandboxSpec.properties.image,
    resources: SandboxSpec.properties.resources,
  },
  { additionalProperties: false },
);
export type SandboxTemplate = Static<typeof SandboxTemplate>;

export const SandboxWarmPoolSpec = Type.Object(
  {
    /** Ready, unclaimed members to keep. 0 empties the pool (members are deleted, claimed ones stay with their users). */
    replicas: Type.Integer({ minimum: 0, maximum: MAX_WARM_POOL_REPLICAS, description: 'Ready sandboxes to keep in the pool' }),
    template: Type.Optional(SandboxTemplate),
  },
  { additionalProperties: false },
);
export type SandboxWarmPoolSpec = Static<typeof SandboxWarmPoolSpec>;

export const SandboxWarmPoolStatus = Type.Object({
  observedGeneration: Type.Optional(Type.Integer()),
  conditions: Type.Optional(Type.Array(Condition)),
  /** Unclaimed members, starting or ready (the scale subresource's status replicas). */
  replicas: Type.Optional(Type.Integer({ minimum: 0 })),
  /** Unclaimed members that are RUNNING: what a start can claim now. */
  readyReplicas: Type.Optional(Type.Integer({ minimum: 0 })),
  /** Members claimed by starts since the pool was created. */
  claimed: Type.Optional(Type.Integer({ minimum: 0 })),
  /** Label selector of the members (the scale subresource's selector). */
  selector: Type.Optional(Type.String()),
});
export type SandboxWarmPoolStatus = Static<typeof SandboxWarmPoolStatus>;

export const SandboxWarmPool = Type.Object({
  apiVersion: Type.Literal(API_VERSION),
  kind: Type.Literal('SandboxWarmPool'),
  metadata: ObjectMeta,
  spec: SandboxWarmPoolSpec,
  status: Type.Optional(SandboxWarmPoolStatus),
});
export type SandboxWarmPool = Static<typeof SandboxWarmPool>;

export const SandboxWarmPoolKind: ResourceKind<SandboxWarmPool> = {
  apiVersion: API_VERSION,
  kind: 'SandboxWarmPool',
  plural: 'sandboxwarmpools',
  shortNames: ['swp'],
  hasStatus: true,
  schema: SandboxWarmPool,
};

/** On a pool member while it is unclaimed: the pool it belongs to. Removed by the claim. */
export const LABEL_WARM_POOL = `${GROUP}/warm-pool`;
/** On a claimed sandbox: the pool it came from (for the pool's claim count and for operators). */
export const LABEL_CLAIMED_FROM = `${GROUP}/claimed-from`;
/** On a claimed sandbox: the conversation whose start claimed it, so a repeated pass finds its claim again. */
export const ANNOTATION_CLAIMED_BY = `${GROUP}/claimed-by`;
/** On a claimed sandbox: when it was claimed; its idle and session timers count from then, not from its start in the pool. */
export const ANNOTATION_CLAIMED_AT = `${GROUP}/claimed-at`;
