// SandboxConfiguration: the deployment-wide Sandbox Configuration of the admin console (spec part
// 8: Idle Time, Deletion Time; plus the sandbox capacity). One object named `default` in the
// namespace of the Sandbox and Conversation resources — cluster state the controller watches and
// takes up at once. Unset fields fall back to the environment (AGENTYARD_IDLE_TIME_SECONDS,
// AGENTYARD_DELETION_TIME_SECONDS, AGENTYARD_SANDBOX_CAPACITY), which are the defaults.
//
// Namespaced, not cluster-scoped: an installation lives in its namespace (two chart releases in one
// cluster each have their own), and the store, the chart's Roles and the API server's schema
// validation then work as for Sandboxes. A custom resource rather than a ConfigMap: the API server
// refuses a bad `kubectl edit` against the same schema the API validates with.
//
// The audit trail (`spec.changes`) is written in the same update as the change it records, so no
// change made through the API exists without its record; a change written around the API gets its
// record from the controller (controller/sandbox-configuration-audit.ts). It keeps the newest
// MAX_CHANGES entries, and always the newest of each field (the trail accounts for every value).
import Type, { type Static } from 'typebox';
import { API_VERSION, ObjectMeta, Time, type ResourceKind } from './meta.ts';

export const SANDBOX_CONFIGURATION_NAME = 'default';
export const MAX_CHANGES = 100;

/** Bounds of the admin console's fields (seconds; the capacity in sandboxes). */
export const CONFIG_LIMITS = {
  idleTimeSeconds: { minimum: 1, maximum: 30 * 24 * 3600 },
  deletionTimeSeconds: { minimum: 1, maximum: 3650 * 24 * 3600 },
  sandboxCapacity: { minimum: 1, maximum: 100_000 },
} as const;

export const ConfigField = Type.Union([Type.Literal('idleTimeSeconds'), Type.Literal('deletionTimeSeconds'), Type.Literal('sandboxCapacity')]);
export type ConfigField = Static<typeof ConfigField>;

/**
 * One audited change of one field: null `from`/`to` means the default (unset). A change made through
 * the API names its user; one made around it (`kubectl edit`, any direct write) is recorded by the
 * controller when it sees it, with `outsideApi` and the writer's field manager instead: the user is
 * not known there.
 */
export const ConfigChange = Type.Object({
  time: Time,
  userId: Type.Optional(Type.String()),
  userName: Type.Optional(Type.String()),
  field: ConfigField,
  from: Type.Union([Type.Integer(), Type.Null()]),
  to: Type.Union([Type.Integer(), Type.Null()]),
  outsideApi: Type.Optional(Type.Boolean({ description: 'Made outside the API (kubectl edit, a direct write): the user is not known' })),
  fieldManager: Type.Optional(Type.String({ description: 'The field manager of a change made outside the API (metadata.managedFields), e.g. kubectl-edit' })),
  objectDeleted: Type.Optional(Type.Boolean({ description: 'The configuration object was deleted (kubectl delete): the field went back to its default; the controller keeps the trail in the object it writes in its place' })),
});
export type ConfigChange = Static<typeof ConfigChange>;

export const SandboxConfigurationSpec = Type.Object(
  {
    idleTimeSeconds: Type.Optional(Type.Integer({ ...CONFIG_LIMITS.idleTimeSeconds, description: 'Idle Time: no agent or user activity this long pauses a running sandbox' })),
    deletionTimeSeconds: Type.Optional(Type.Integer({ ...CONFIG_LIMITS.deletionTimeSeconds, description: 'Deletion Time: paused this long, a sandbox and its conversations are deleted permanently' })),
    sandboxCapacity: Type.Optional(Type.Integer({ ...CONFIG_LIMITS.sandboxCapacity, description: 'Sandboxes that may be starting or running at once' })),
    changes: Type.Optional(Type.Array(ConfigChange, { maxItems: MAX_CHANGES, description: 'Audit trail, oldest first: who changed which field, when' })),
  },
  { additionalProperties: false },
);
export type SandboxConfigurationSpec = Static<typeof SandboxConfigurationSpec>;

export const SandboxConfiguration = Type.Object({
  apiVersion: Type.Literal(API_VERSION),
  kind: Type.Literal('SandboxConfiguration'),
  metadata: ObjectMeta,
  spec: SandboxConfigurationSpec,
});
export type SandboxConfiguration = Static<typeof SandboxConfiguration>;

export const SandboxConfigurationKind: ResourceKind<SandboxConfiguration> = {
  apiVersion: API_VERSION,
  kind: 'SandboxConfiguration',
  plural: 'sandboxconfigurations',
  shortNames: ['sbconfig'],
  hasStatus: false,
  schema: SandboxConfiguration,
  keepManagedFields: true,
};
