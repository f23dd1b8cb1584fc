// Model usage as the model gateway recorded it (GET /api/v1/usage, GET /api/v1/usage/users): what
// the provider reported for each call a sandbox made, counted for the sandbox's owner. Unlike a
// conversation's `metrics` (which its agent server reports), a sandbox cannot change these numbers.
import Type, { type Static, type TSchema } from 'typebox';

const Count = Type.Integer({ minimum: 0 });
const Nullable = <T extends TSchema>(s: T) => Type.Union([s, Type.Null()]);

export const UsageTotals = Type.Object({
  calls: Count,
  prompt_tokens: Count,
  completion_tokens: Count,
  cache_read_tokens: Count,
  reasoning_tokens: Count,
  cost: Type.Number({ minimum: 0, description: "Sum of what the provider reported in usage.cost (0 when it reports none)" }),
});
export type UsageTotals = Static<typeof UsageTotals>;

export const UsageReport = Type.Object({
  user_id: Type.String(),
  total: UsageTotals,
  by_conversation: Type.Array(Type.Intersect([Type.Object({ conversation_id: Nullable(Type.String({ description: 'null: calls no conversation of the sandbox was named for' })) }), UsageTotals])),
  by_sandbox: Type.Array(Type.Intersect([Type.Object({ sandbox_id: Type.String() }), UsageTotals])),
  by_model: Type.Array(Type.Intersect([Type.Object({ model: Type.String() }), UsageTotals])),
});
export type UsageReport = Static<typeof UsageReport>;

export const UsersUsage = Type.Object({
  total: UsageTotals,
  items: Type.Array(Type.Intersect([Type.Object({ user_id: Nullable(Type.String({ description: 'null: sandboxes without an owner' })) }), UsageTotals])),
});
export type UsersUsage = Static<typeof UsersUsage>;
