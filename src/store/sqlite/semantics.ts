// The API server's write rules for custom resources with a status subresource (and for plain
// kinds like Secret), as pure functions over plain JSON objects: what a create, an update, a
// status update and a delete turn the stored object into. SqliteStore adds only the I/O.
import { isDeepStrictEqual } from 'node:util';
import type { DateTime } from 'luxon';
import { Value } from 'typebox/value';
import { BadRequest, Conflict, Invalid, type ValidationIssue } from '../../api/errors.ts';
import Type from 'typebox';
import { ObjectMeta, type KubeObject, type ResourceKind } from '../../api/meta.ts';
import { validateObject } from '../kube/validate.ts';

export const DEFAULT_NAMESPACE = 'default';

/** A deep copy as plain JSON: no undefined members, no shared references with the caller. */
export function toJson<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** metav1.Time: RFC 3339 in UTC with second precision. */
export function formatTime(t: DateTime): string {
  return t.toUTC().startOf('second').toISO({ suppressMilliseconds: true }) ?? '';
}

export function namespaceOf(obj: KubeObject): string {
  return obj.metadata.namespace || DEFAULT_NAMESPACE;
}

/** Server-assigned metadata; a client cannot set these on create. */
const SERVER_OWNED = ['uid', 'resourceVersion', 'generation', 'creationTimestamp', 'deletionTimestamp'] as const;

/** The object as stored by a create, before the resourceVersion is assigned. */
export function prepareCreate<T extends KubeObject>(kind: ResourceKind<T>, input: T, now: string, uid: string): T {
  const obj = toJson({ ...input, apiVersion: kind.apiVersion, kind: kind.kind, metadata: { ...input.metadata } });
  const meta: ObjectMeta = obj.metadata;
  for (const key of SERVER_OWNED) delete meta[key];
  meta.namespace = namespaceOf(obj);
  meta.uid = uid;
  meta.generation = 1;
  meta.creationTimestamp = now;
  if (kind.hasStatus) delete obj.status;
  applyDefaults(kind, obj);
  return obj;
}

/**
 * The update path requires optimistic concurrency. The API server refuses an update without
 * resourceVersion for custom resources (AllowUnconditionalUpdate is false for them), and
 * KubeStore refuses it for every kind, so SqliteStore does the same.
 */
export function requireResourceVersion(kind: ResourceKind, obj: KubeObject): string {
  const rv = obj.metadata?.resourceVersion;
  if (!rv) throw new Conflict(`${kind.kind} ${obj.metadata?.name}: metadata.resourceVersion is required for an update`);
  return rv;
}

/** An update replaces metadata and spec; status (for kinds with a status subresource) is kept. */
export function prepareUpdate<T extends KubeObject>(kind: ResourceKind<T>, old: T, input: T): T {
  const next = toJson({ ...input, apiVersion: kind.apiVersion, kind: kind.kind });
  const meta: ObjectMeta = next.metadata;
  const was = old.metadata;
  // A uid in the body is a precondition, as on the API server: it names one incarnation of the object.
  if (meta.uid && meta.uid !== was.uid) {
    throw new Conflict(`${kind.kind} ${was.namespace}/${was.name}: precondition failed: uid ${meta.uid}, stored object has uid ${was.uid}`);
  }
  if (was.deletionTimestamp) {
    const added = (meta.finalizers ?? []).filter((f) => !(was.finalizers ?? []).includes(f));
    if (added.length > 0) {
      throw new Invalid([
        { loc: ['metadata', 'finalizers'], msg: `no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`, type: 'value_error.forbidden' },
      ]);
    }
  }
  // Identity and server-owned fields always come from the stored object; an update can neither
  // set nor clear a deletionTimestamp.
  next.metadata = { ...meta, name: was.name, namespace: was.namespace };
  for (const key of SERVER_OWNED) {
    if (was[key] === undefined) delete next.metadata[key];
    else (next.metadata as Record<string, unknown>)[key] = was[key];
  }
  if (kind.hasStatus) {
    if (old.status === undefined) delete next.status;
    else next.status = toJson(old.status);
  }
  applyDefaults(kind, next);
  if (!isDeepStrictEqual(content(old, kind), content(next, kind))) next.metadata.generation = (was.generation ?? 0) + 1;
  return next;
}

/** A status update replaces status and nothing else. */
export function prepareStatusUpdate<T extends KubeObject>(old: T, input: T): T {
  const next = toJson(old);
  if (input.status === undefined) delete next.status;
  else next.status = toJson(input.status);
  return next;
}

/**
 * Delete of an object with finalizers: mark it once (deletionTimestamp, and a generation bump as
 * the API server does, because its controllers now have work). Undefined when already marked.
 */
export function markDeleting<T extends KubeObject>(old: T, now: string): T | undefined {
  if (old.metadata.deletionTimestamp) return undefined;
  const next = toJson(old);
  next.metadata.deletionTimestamp = now;
  next.metadata.generation = (old.metadata.generation ?? 0) + 1;
  return next;
}

export function hasFinalizers(obj: KubeObject): boolean {
  return (obj.metadata.finalizers ?? []).length > 0;
}

/** True when a write would change nothing: the API server then skips it (no new resourceVersion, no event). */
export function sameObject(a: KubeObject, b: KubeObject): boolean {
  const strip = (o: KubeObject) => ({ ...o, metadata: { ...o.metadata, resourceVersion: undefined } });
  return isDeepStrictEqual(toJson(strip(a)), toJson(strip(b)));
}

export function sameLabels(a: KubeObject, b: KubeObject): boolean {
  return isDeepStrictEqual(a.metadata.labels ?? {}, b.metadata.labels ?? {});
}

/** What generation tracks: everything but metadata (and status, for kinds that have one). */
function content(obj: KubeObject, kind: ResourceKind): unknown {
  const { metadata: _m, ...rest } = obj;
  if (kind.hasStatus) delete rest.status;
  return rest;
}

/**
 * Defaulting the API server applies on every write: the schema's `default`s (a CRD's structural
 * defaulting fills a missing property only where its parent object exists, and so does
 * Value.Default), and core defaults for Secrets.
 */
function applyDefaults(kind: ResourceKind, obj: KubeObject): void {
  if (kind.schema) Value.Default(kind.schema, obj);
  if (kind.apiVersion === 'v1' && kind.kind === 'Secret') {
    const secret = obj as KubeObject & { type?: string };
    secret.type ??= 'Opaque';
  }
}

const MetadataOnly = Type.Object({ metadata: ObjectMeta });
const SECRET_KEY = /^[-._a-zA-Z0-9]+$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * The kind schema when there is one; otherwise what the API server checks for the kinds
 * SqliteStore holds without a schema (Secrets): object metadata, data keys, base64 values.
 */
export function validate(kind: ResourceKind, obj: KubeObject): void {
  validateObject(kind.schema ? kind : { ...kind, schema: MetadataOnly }, obj);
  if (kind.apiVersion !== 'v1' || kind.kind !== 'Secret') return;
  const data = (obj as KubeObject & { data?: unknown }).data ?? {};
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new Invalid([{ loc: ['data'], msg: 'must be a map of base64 strings', type: 'type_error' }]);
  }
  const issues: ValidationIssue[] = [];
  for (const [key, value] of Object.entries(data)) {
    // The API server fails to decode a non-base64 value before it validates anything (400).
    if (typeof value !== 'string' || !BASE64.test(value)) throw new BadRequest(`Secret data[${key}]: illegal base64 data`);
    if (!SECRET_KEY.test(key) || key.length > 253) {
      issues.push({ loc: ['data', key], msg: "a valid config key must consist of alphanumeric characters, '-', '_' or '.'", type: 'value_error' });
    }
  }
  if (issues.length > 0) throw new Invalid(issues);
}
