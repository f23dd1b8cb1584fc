// Small pieces every form of the app uses: a refused field's message beside it (from a 422's field
// paths), the attributes that tie a field to its message for screen readers, and a form-wide
// message for what belongs to no one field.
import type { ComponentChildren } from 'preact';
import { ApiError } from './api.ts';

export function asApiError(err: unknown): ApiError {
  return err instanceof ApiError ? err : new ApiError(0, String((err as Error)?.message ?? err), []);
}

/** The message for `field` (a name in the 422's loc), with the element id it is shown under. */
export function FieldError({ error, field, id }: { error: ApiError | undefined; field: string; id: string }) {
  const msg = error?.forField(field);
  return msg ? <p class="field-error" id={id} role="alert">{msg}</p> : null;
}

/** aria-invalid and aria-describedby for a refused field. */
export function invalid(error: ApiError | undefined, field: string, id: string): Record<string, unknown> {
  return error?.forField(field) ? { 'aria-invalid': true, 'aria-describedby': id } : {};
}

/** The error's message when no field in `fields` carries it (403, 409, a network failure...). */
export function FormError({ error, fields, id }: { error: ApiError | undefined; fields: string[]; id?: string }) {
  if (!error || fields.some((f) => error.forField(f))) return null;
  return <p class="field-error" role="alert" {...(id ? { id } : {})}>{error.message}</p>;
}

export function Saved({ children }: { children: ComponentChildren }) {
  return <span class="saved" role="status">{children}</span>;
}
