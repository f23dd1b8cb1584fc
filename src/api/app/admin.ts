// Requests and responses of the administrators' routes under /api/v1/admin: the license, the
// support bundle upload, the deployment-wide Sandbox Configuration with its audit trail, and
// every user's sandboxes. Administrators only (403 otherwise).
import Type, { type Static } from 'typebox';
import { CONFIG_LIMITS } from '../sandbox-configuration.ts';

export const LicenseStatus = Type.Object({
  status: Type.Union([Type.Literal('valid'), Type.Literal('expired'), Type.Literal('unlicensed')]),
  message: Type.String({ description: 'One paragraph for the admin console: validity, seats, signature' }),
  customer: Type.Optional(Type.String()),
  email: Type.Optional(Type.String()),
  license_id: Type.Optional(Type.String({ description: 'The last four characters only: the id is also the chart registry password' })),
  issued_at: Type.Optional(Type.String()),
  expires_at: Type.Optional(Type.String()),
  days_left: Type.Optional(Type.Integer()),
  seats: Type.Optional(Type.Union([Type.Integer(), Type.Null()], { description: 'null: no seat limit' })),
  seats_used: Type.Integer({ description: 'Enabled users' }),
  seats_exceeded: Type.Boolean(),
  signature: Type.Optional(Type.Union([Type.Literal('verified'), Type.Literal('unverified')])),
});
export type LicenseStatus = Static<typeof LicenseStatus>;

export const SupportBundleUpload = Type.Object({
  uploaded_to: Type.String({ description: 'Origin and path of the receiver (never a token)' }),
  status: Type.Integer({ description: "The receiver's HTTP status" }),
  attempts: Type.Integer(),
  bytes: Type.Integer({ description: 'Size of the uploaded tar.gz' }),
  files: Type.Array(Type.String(), { description: 'What the bundle holds' }),
  receipt: Type.String({ description: "The start of the receiver's answer (e.g. a ticket number)" }),
});
export type SupportBundleUpload = Static<typeof SupportBundleUpload>;

const Time = Type.String({ description: 'ISO 8601, UTC' });
const Seconds = (limits: { minimum: number; maximum: number }, description: string) => Type.Integer({ ...limits, description });

/** null sets a field back to its default (the installation's environment). */
export const SandboxConfigurationUpdate = Type.Object(
  {
    idle_time_seconds: Type.Optional(Type.Union([Seconds(CONFIG_LIMITS.idleTimeSeconds, 'Idle Time in seconds'), Type.Null()])),
    deletion_time_seconds: Type.Optional(Type.Union([Seconds(CONFIG_LIMITS.deletionTimeSeconds, 'Deletion Time in seconds'), Type.Null()])),
    sandbox_capacity: Type.Optional(Type.Union([Type.Integer({ ...CONFIG_LIMITS.sandboxCapacity, description: 'Sandboxes starting or running at once' }), Type.Null()])),
  },
  { additionalProperties: false },
);
export type SandboxConfigurationUpdate = Static<typeof SandboxConfigurationUpdate>;

const Values = Type.Object({ idle_time_seconds: Type.Integer(), deletion_time_seconds: Type.Integer(), sandbox_capacity: Type.Integer() });

export const SandboxConfigurationChange = Type.Object({
  time: Time,
  user_id: Type.Union([Type.String(), Type.Null()], { description: 'null: made outside the API, the user is not known' }),
  user_name: Type.Union([Type.String(), Type.Null()], { description: 'null: made outside the API, the user is not known' }),
  outside_api: Type.Boolean({ description: 'Made outside the API (kubectl edit, a direct write to the resource), recorded by the controller when it saw it' }),
  field_manager: Type.Union([Type.String(), Type.Null()], { description: 'Who wrote it, by its Kubernetes field manager (e.g. kubectl-edit), for a change made outside the API' }),
  object_deleted: Type.Boolean({ description: 'The change was the deletion of the configuration object (kubectl delete): the field went back to its default' }),
  field: Type.Union([Type.Literal('idle_time_seconds'), Type.Literal('deletion_time_seconds'), Type.Literal('sandbox_capacity')]),
  from: Type.Union([Type.Integer(), Type.Null()], { description: 'null: the default' }),
  to: Type.Union([Type.Integer(), Type.Null()], { description: 'null: the default' }),
});
export type SandboxConfigurationChange = Static<typeof SandboxConfigurationChange>;

export const SandboxConfigurationInfo = Type.Object({
  /** The values in force. */
  ...Values.properties,
  /** What applies to a field that is not set (the installation's environment). */
  defaults: Values,
  /** The fields set in the configuration (not defaults). */
  overridden: Type.Array(Type.String()),
  /** Audit trail, newest first. */
  changes: Type.Array(SandboxConfigurationChange),
});
export type SandboxConfigurationInfo = Static<typeof SandboxConfigurationInfo>;

export const AdminSandbox = Type.Object({
  id: Type.String(),
  owner_id: Type.Union([Type.String(), Type.Null()]),
  owner_name: Type.Union([Type.String(), Type.Null()]),
  status: Type.String(),
  status_detail: Type.Union([Type.String(), Type.Null()]),
  conversation_count: Type.Integer({ minimum: 0 }),
  created_at: Type.Union([Time, Type.Null()]),
  last_activity_at: Type.Union([Time, Type.Null()]),
});
export type AdminSandbox = Static<typeof AdminSandbox>;
