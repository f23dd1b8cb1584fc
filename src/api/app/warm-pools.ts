// /api/v1/warm-pools (administrators only): the SandboxWarmPool resources of the installation,
// managed through the application API in both modes (in a cluster kubectl works on the same
// resources). Snake case on the wire, as the rest of the application API.
import Type, { type Static } from 'typebox';
import { MAX_WARM_POOL_REPLICAS, SandboxTemplate } from '../warm-pool.ts';

const Name = Type.String({ minLength: 1, maxLength: 63, pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', description: 'DNS label: lower-case letters, digits and "-"' });
const Replicas = Type.Integer({ minimum: 0, maximum: MAX_WARM_POOL_REPLICAS, description: 'Ready sandboxes to keep in the pool' });

export const WarmPoolCreate = Type.Object(
  {
    name: Name,
    replicas: Replicas,
    /** Image and resources of every member; a start claims from a pool whose template equals its own sandbox's (the default: none set). */
    template: Type.Optional(SandboxTemplate),
  },
  { additionalProperties: false },
);
export type WarmPoolCreate = Static<typeof WarmPoolCreate>;

export const WarmPoolUpdate = Type.Object(
  {
    replicas: Type.Optional(Replicas),
    /** A new template replaces every unclaimed member. */
    template: Type.Optional(SandboxTemplate),
  },
  { additionalProperties: false },
);
export type WarmPoolUpdate = Static<typeof WarmPoolUpdate>;

export const WarmPoolParams = Type.Object({ name: Name });
export type WarmPoolParams = Static<typeof WarmPoolParams>;

export const WarmPoolInfo = Type.Object({
  name: Type.String(),
  replicas: Type.Integer({ description: 'Desired ready members' }),
  template: SandboxTemplate,
  ready: Type.Integer({ description: 'Unclaimed members that are RUNNING' }),
  members: Type.Integer({ description: 'Unclaimed members, starting or ready' }),
  claimed: Type.Integer({ description: 'Members claimed by conversation starts so far' }),
  status: Type.Union([Type.Literal('FILLED'), Type.Literal('FILLING'), Type.Literal('AT_CAPACITY'), Type.Literal('PENDING')], { description: 'PENDING until the controller has seen this version of the pool' }),
  message: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.Union([Type.String(), Type.Null()]),
});
export type WarmPoolInfo = Static<typeof WarmPoolInfo>;
