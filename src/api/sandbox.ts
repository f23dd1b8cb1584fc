// The Sandbox resource: where an agent executes (filesystem, processes, credentials, compute).
import Type, { type Static } from 'typebox';
import { API_VERSION, Condition, ObjectMeta, Time, type ResourceKind } from './meta.ts';

/** Spec part 3, `sandbox_status`. Upper case on the wire. */
export const SandboxPhase = Type.Union([
  Type.Literal('STARTING'),
  Type.Literal('RUNNING'),
  Type.Literal('PAUSED'),
  Type.Literal('ERROR'),
  Type.Literal('MISSING'),
]);
export type SandboxPhase = Static<typeof SandboxPhase>;

export const SandboxSpec = Type.Object(
  {
    /** The user that owns the sandbox; empty for sandboxes created with kubectl by an operator. */
    owner: Type.Optional(Type.String({ description: 'Owning user id' })),
    /**
     * Desired state. The user's pause/resume flips it; the controller sets it to true itself when
     * the idle timer or the 12-hour session cap pauses the sandbox, so a resume is always explicit.
     */
    paused: Type.Optional(Type.Boolean({ default: false })),
    /**
     * Container image the sandbox runs (Kubernetes runtime only; default: the installation's
     * sandbox image). Any Linux (glibc) image with `/bin/sh`: the project's toolchain. The agent
     * server is brought into it at start, not baked into it.
     */
    image: Type.Optional(Type.String({ minLength: 1, maxLength: 512, pattern: '^[^\\s]+$', description: 'Container image of the sandbox (any glibc Linux image with /bin/sh); default: the installation sandbox image' })),
    resources: Type.Optional(
      Type.Object(
        {
          cpu: Type.Optional(Type.String()),
          memory: Type.Optional(Type.String()),
          storage: Type.Optional(Type.String()),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type SandboxSpec = Static<typeof SandboxSpec>;

export const SandboxStatus = Type.Object({
  phase: Type.Optional(SandboxPhase),
  observedGeneration: Type.Optional(Type.Integer()),
  conditions: Type.Optional(Type.Array(Condition)),
  /** Base URL of the agent server (`{agent_server_url}`), set while RUNNING: the public address clients get. */
  url: Type.Optional(Type.String()),
  /**
   * Base URL the control plane (controller, API) dials, set while RUNNING where it differs from
   * `url`: in a cluster the sandbox's Service (`http://sandbox-<id>.<namespace>.svc:<port>`), never
   * the ingress, whose public host need not resolve inside the cluster.
   */
  internalUrl: Type.Optional(Type.String()),
  /** The runtime's handle for this sandbox (process id file, pod name, ...). */
  runtimeId: Type.Optional(Type.String()),
  /** Start of the current 12-hour session window. */
  sessionStartTime: Type.Optional(Time),
  pausedAt: Type.Optional(Time),
  /** Why it is paused: UserRequest, IdleTimeout or SessionCap. */
  pauseReason: Type.Optional(Type.String()),
  conversationCount: Type.Optional(Type.Integer({ minimum: 0 })),
  lastActivityTime: Type.Optional(Time),
  message: Type.Optional(Type.String()),
  /** Times the agent server died and was brought back on its intact state (by the controller, or by the kubelet in a cluster). */
  restartCount: Type.Optional(Type.Integer({ minimum: 0 })),
  lastRestartTime: Type.Optional(Time),
  /** The agent server's last death: the runtime's id for it (counted once), when the controller saw it, and why. */
  lastDeath: Type.Optional(
    Type.Object({
      id: Type.String(),
      time: Time,
      reason: Type.String(),
      message: Type.Optional(Type.String()),
      /** The runtime instance that died (a Pod) and how many times it had died by then. */
      instance: Type.Optional(Type.String()),
      ordinal: Type.Optional(Type.Integer({ minimum: 1 })),
    }),
  ),
  /** When the agent server died lately, oldest first, only those inside the crash-loop window: enough of them make the sandbox ERROR. */
  recentDeaths: Type.Optional(Type.Array(Time)),
});
export type SandboxStatus = Static<typeof SandboxStatus>;

export const Sandbox = Type.Object({
  apiVersion: Type.Literal(API_VERSION),
  kind: Type.Literal('Sandbox'),
  metadata: ObjectMeta,
  spec: SandboxSpec,
  status: Type.Optional(SandboxStatus),
});
export type Sandbox = Static<typeof Sandbox>;

export const SandboxKind: ResourceKind<Sandbox> = {
  apiVersion: API_VERSION,
  kind: 'Sandbox',
  plural: 'sandboxes',
  shortNames: ['sb'],
  hasStatus: true,
  schema: Sandbox,
};
