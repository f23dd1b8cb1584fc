// Shared pieces of the ResourceStore conformance suite. Everything here goes through the
// ResourceStore interface only, and every object gets a fresh name (and a per-test `run` label),
// because a cluster run shares one API server and one namespace across all tests.
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { Conversation, ConversationSpec } from '../../api/conversation.ts';
import { API_VERSION, type KubeObject } from '../../api/meta.ts';
import type { Sandbox, SandboxSpec, SandboxStatus } from '../../api/sandbox.ts';
import type { Secret } from '../../api/secret.ts';
import type { ResourceStore, WatchEvent } from '../types.ts';

export interface ConformanceStore {
  store: ResourceStore;
  /** Every test writes here. It must exist (on a cluster) and may hold other objects. */
  namespace: string;
  /** A second namespace for the namespace-isolation tests; those are skipped without it. */
  otherNamespace?: string;
  cleanup(): Promise<void>;
}

export interface ConformanceOptions {
  /**
   * Makes the store forget every change before its current resourceVersion, so that a watch from
   * an older one must fail with Gone. Leave it out where compaction cannot be forced (a real API
   * server compacts etcd on its own schedule and its watch cache hides it): the Gone test is then
   * reported as skipped rather than passing vacuously.
   */
  canForceCompaction?: (store: ResourceStore) => Promise<void>;
}

/** What a test part sees; filled in by the suite's beforeAll. */
export type Ctx = () => ConformanceStore;

/** A DNS-label-safe unique suffix. */
export function uniq(): string {
  return randomUUID().slice(0, 8);
}

export function uniqueName(prefix: string): string {
  return `${prefix}-${uniq()}`;
}

interface MetaInput {
  namespace: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
}

function meta(name: string, m: MetaInput): KubeObject['metadata'] {
  return {
    name,
    namespace: m.namespace,
    ...(m.labels ? { labels: m.labels } : {}),
    ...(m.annotations ? { annotations: m.annotations } : {}),
    ...(m.finalizers ? { finalizers: m.finalizers } : {}),
  };
}

export function sandbox(name: string, m: MetaInput & { spec?: SandboxSpec; status?: SandboxStatus }): Sandbox {
  return {
    apiVersion: API_VERSION,
    kind: 'Sandbox',
    metadata: meta(name, m),
    spec: m.spec ?? { paused: false },
    ...(m.status ? { status: m.status } : {}),
  };
}

export function conversation(name: string, m: MetaInput & { spec?: ConversationSpec }): Conversation {
  return { apiVersion: API_VERSION, kind: 'Conversation', metadata: meta(name, m), spec: m.spec ?? { title: 'hello' } };
}

export function secret(name: string, m: MetaInput & { data: Record<string, string> }): Secret {
  return { apiVersion: 'v1', kind: 'Secret', metadata: meta(name, m), data: m.data };
}

export function b64(s: string): string {
  return Buffer.from(s, 'utf8').toString('base64');
}

/** Pulls events until `count` of them pass `keep`; fails if the watch ends first. */
export async function collect<T extends KubeObject>(
  it: AsyncIterator<WatchEvent<T>>,
  count: number,
  keep: (e: WatchEvent<T>) => boolean = () => true,
): Promise<WatchEvent<T>[]> {
  const out: WatchEvent<T>[] = [];
  while (out.length < count) {
    const r = await it.next();
    if (r.done) throw new Error(`watch ended after ${out.length} of ${count} events`);
    if (keep(r.value)) out.push(r.value);
  }
  return out;
}

/** `ADDED a`, `MODIFIED b`, ...: readable in a failing toEqual. */
export function summary(events: WatchEvent<KubeObject>[]): string[] {
  return events.map((e) => `${e.type} ${e.object.metadata.name}`);
}

/** Awaits a rejection and checks its class; returns the error for further checks. */
export async function rejection<E extends Error>(p: Promise<unknown>, cls: abstract new (...args: never[]) => E): Promise<E> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(cls);
    return err as E;
  }
  return expect.unreachable(`expected ${cls.name}, but it resolved`);
}

/** metav1.Time on the wire: RFC 3339, UTC, whole seconds. */
export const WIRE_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

/** A watch that the test aborts in `finally`, so no connection or cursor outlives it. */
export function watching<T extends KubeObject>(
  store: ResourceStore,
  ...args: Parameters<ResourceStore['watch']>
): { it: AsyncIterator<WatchEvent<T>>; stop(): void } {
  const ac = new AbortController();
  const [kind, ns, opts] = args;
  const iterable = store.watch(kind, ns, { ...opts, signal: ac.signal }) as AsyncIterable<WatchEvent<T>>;
  return { it: iterable[Symbol.asyncIterator](), stop: () => ac.abort() };
}
