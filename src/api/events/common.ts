// Small schema helpers shared by the event, action, observation and tool schemas.
import Type, {
  type TLiteral,
  type TNull,
  type TOptional,
  type TProperties,
  type TSchema,
  type TSchemaOptions,
  type TUnion,
} from 'typebox';

/** `X | null`, omissible. Pydantic's `x: X | None = None`; absent and null mean the same. */
export function Nullable<T extends TSchema>(schema: T): TOptional<TUnion<[T, TNull]>> {
  return Type.Optional(Type.Union([schema, Type.Null()]));
}

/** Object schemas for wire models reject unknown properties (OpenHands models are `extra="forbid"`). */
export const STRICT = { additionalProperties: false } as const;

/** A free-form JSON object (`dict[str, Any]`). */
export const JsonObject = Type.Record(Type.String(), Type.Unknown());

/** Builds a strict object with a `kind` literal discriminator (serialized last, as OpenHands does). */
export function kinded<K extends string, P extends TProperties>(kind: K, props: P) {
  return Type.Object({ ...props, kind: Type.Literal(kind) }, STRICT);
}


/** A union of string literals from a const list, keeping the literal types for `Static`. */
export function LiteralUnion<const T extends readonly string[]>(
  values: T,
  options?: TSchemaOptions,
): TUnion<{ -readonly [K in keyof T]: TLiteral<T[K]> }> {
  return Type.Union(
    values.map((v) => Type.Literal(v)),
    options,
  ) as unknown as TUnion<{ -readonly [K in keyof T]: TLiteral<T[K]> }>;
}
