// API keys and users (/api/v1/users...): a user lists and revokes their own keys; administrators
// list users, disable and enable them, and revoke any user's key. Keys are shown by their display
// prefix only (the key itself is stored hashed and shown once, when issued).
import Type, { type Static } from 'typebox';

const Time = Type.String({ description: 'ISO 8601, UTC' });

export const ApiKeyInfo = Type.Object({
  prefix: Type.String({ description: 'The first characters of the key, as shown when listing' }),
  created_at: Time,
  revoked_at: Type.Union([Time, Type.Null()], { description: 'Set once revoked; a revoked key is refused at once and for good' }),
});
export type ApiKeyInfo = Static<typeof ApiKeyInfo>;

export const UserInfo = Type.Object({
  id: Type.String(),
  name: Type.String(),
  admin: Type.Boolean(),
  created_at: Time,
  disabled_at: Type.Union([Time, Type.Null()], { description: "Set while disabled; every key of a disabled user is refused" }),
});
export type UserInfo = Static<typeof UserInfo>;

export const KeyParams = Type.Object({ prefix: Type.String({ minLength: 1, maxLength: 64 }) });
export type KeyParams = Static<typeof KeyParams>;
export const UserParams = Type.Object({ user_id: Type.String({ minLength: 1, maxLength: 64 }) });
export type UserParams = Static<typeof UserParams>;
export const UserKeyParams = Type.Object({ ...UserParams.properties, ...KeyParams.properties });
export type UserKeyParams = Static<typeof UserKeyParams>;
