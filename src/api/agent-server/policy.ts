// Confirmation policies and secret sources (OpenHands `security/confirmation_policy.py`, `secret/`).
import Type, { type Static } from 'typebox';
import { Nullable, STRICT } from '../events/common.ts';

export const NeverConfirm = Type.Object({ kind: Type.Literal('NeverConfirm') }, STRICT);
export type NeverConfirm = Static<typeof NeverConfirm>;

export const AlwaysConfirm = Type.Object({ kind: Type.Literal('AlwaysConfirm') }, STRICT);
export type AlwaysConfirm = Static<typeof AlwaysConfirm>;

/** Confirm when risk >= threshold, or when risk is UNKNOWN and confirm_unknown is set. */
export const ConfirmRisky = Type.Object(
  {
    kind: Type.Literal('ConfirmRisky'),
    /** UNKNOWN is not a valid threshold (OpenHands rejects it). */
    threshold: Type.Optional(
      Type.Union([Type.Literal('LOW'), Type.Literal('MEDIUM'), Type.Literal('HIGH')], { default: 'HIGH' }),
    ),
    confirm_unknown: Type.Optional(Type.Boolean({ default: true })),
  },
  STRICT,
);
export type ConfirmRisky = Static<typeof ConfirmRisky>;

export const ConfirmationPolicy = Type.Union([NeverConfirm, AlwaysConfirm, ConfirmRisky]);
export type ConfirmationPolicy = Static<typeof ConfirmationPolicy>;

/** A secret given by value. The value is write-only: responses show it masked or omit it. */
export const StaticSecret = Type.Object(
  {
    kind: Type.Literal('StaticSecret'),
    value: Nullable(Type.String()),
    description: Nullable(Type.String()),
  },
  STRICT,
);
export type StaticSecret = Static<typeof StaticSecret>;

/** A secret fetched from a URL when needed. */
export const LookupSecret = Type.Object(
  {
    kind: Type.Literal('LookupSecret'),
    url: Type.String(),
    headers: Type.Optional(Type.Record(Type.String(), Type.String())),
    description: Nullable(Type.String()),
  },
  STRICT,
);
export type LookupSecret = Static<typeof LookupSecret>;

export const SecretSource = Type.Union([StaticSecret, LookupSecret]);
export type SecretSource = Static<typeof SecretSource>;

/** On input a secret may also be a plain string (coerced to StaticSecret) or `{value}`. */
export const SecretInput = Type.Union([
  Type.String(),
  SecretSource,
  Type.Object({ value: Type.String(), description: Nullable(Type.String()) }, STRICT),
]);
export type SecretInput = Static<typeof SecretInput>;

/** The canonical SecretSource for any accepted input form. */
export function toSecretSource(input: SecretInput): SecretSource {
  if (typeof input === 'string') return { kind: 'StaticSecret', value: input };
  if (!('kind' in input)) {
    return input.description == null
      ? { kind: 'StaticSecret', value: input.value }
      : { kind: 'StaticSecret', value: input.value, description: input.description };
  }
  return input;
}
