// Responses of the administrators' routes under /api/v1/admin.
import Type, { type Static } from 'typebox';

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
