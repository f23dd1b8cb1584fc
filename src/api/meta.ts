// Kubernetes-shaped object metadata and conditions, shared by every agentyard resource.
import Type, { type Static, type TSchema } from 'typebox';

export const GROUP = 'agentyard.dev';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;

export const Time = Type.String({ format: 'date-time' });

export const OwnerReference = Type.Object({
  apiVersion: Type.String(),
  kind: Type.String(),
  name: Type.String(),
  uid: Type.String(),
  controller: Type.Optional(Type.Boolean()),
  blockOwnerDeletion: Type.Optional(Type.Boolean()),
});
export type OwnerReference = Static<typeof OwnerReference>;

export const ObjectMeta = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 253, pattern: '^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$' }),
  namespace: Type.Optional(Type.String()),
  uid: Type.Optional(Type.String()),
  resourceVersion: Type.Optional(Type.String()),
  generation: Type.Optional(Type.Integer()),
  creationTimestamp: Type.Optional(Time),
  deletionTimestamp: Type.Optional(Time),
  labels: Type.Optional(Type.Record(Type.String(), Type.String())),
  annotations: Type.Optional(Type.Record(Type.String(), Type.String())),
  finalizers: Type.Optional(Type.Array(Type.String())),
  ownerReferences: Type.Optional(Type.Array(OwnerReference)),
});
export type ObjectMeta = Static<typeof ObjectMeta>;

/** metav1.Condition, as controllers write it. */
export const Condition = Type.Object({
  type: Type.String(),
  status: Type.Union([Type.Literal('True'), Type.Literal('False'), Type.Literal('Unknown')]),
  reason: Type.String(),
  message: Type.String(),
  lastTransitionTime: Time,
  observedGeneration: Type.Optional(Type.Integer()),
});
export type Condition = Static<typeof Condition>;

/** One entry of a Kubernetes object's metadata.managedFields: a writer and the fields it last set. */
export interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  time?: string;
  subresource?: string;
  fieldsV1?: Record<string, unknown>;
}

/** The smallest shape every stored object has. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec?: unknown;
  status?: unknown;
}

/** Everything a store needs to know about one resource type. */
export interface ResourceKind<T extends KubeObject = KubeObject> {
  apiVersion: string;
  kind: string;
  plural: string;
  shortNames?: string[];
  /** Kinds with a status subresource ignore `status` on update and `spec` on updateStatus. */
  hasStatus: boolean;
  /**
   * KubeStore keeps `metadata.managedFields` (who wrote which field) on the objects it reads, for
   * an audit of writes made around agentyard; never sent back. SqliteStore has none.
   */
  keepManagedFields?: boolean;
  schema?: TSchema;
  /** Phantom field so that `ResourceKind<Sandbox>` carries its object type. */
  readonly __type?: T;
}

export const LABEL_OWNER = `${GROUP}/owner`;
export const LABEL_SANDBOX = `${GROUP}/sandbox`;
export const LABEL_START_TASK = `${GROUP}/start-task`;
/** The id the agent server knows a conversation by, when its resource name is not a UUID (kubectl). */
export const LABEL_AGENT_CONVERSATION = `${GROUP}/agent-conversation`;
export const ANNOTATION_LAST_ACTIVITY = `${GROUP}/last-activity-time`;
/**
 * When agentyard created the object, in milliseconds: creationTimestamp has whole seconds only (as in
 * Kubernetes), so two sandboxes created within one second would tie for "newest" and "oldest".
 */
export const ANNOTATION_CREATED_AT = `${GROUP}/created-at`;

/** When the object was created: agentyard's millisecond annotation, else creationTimestamp (objects made with kubectl). */
export function createdAtOf(obj: { metadata: ObjectMeta }): string | undefined {
  return obj.metadata.annotations?.[ANNOTATION_CREATED_AT] ?? obj.metadata.creationTimestamp;
}
export const FINALIZER_RUNTIME = `${GROUP}/runtime`;
