// A controller test environment: a real SQLite store, a fake runtime, a clock tests move by hand.
import type { LlmConfig } from '../../agent/types.ts';
import { ConversationKind, type Conversation, type ConversationSpec } from '../../api/conversation.ts';
import { API_VERSION, LABEL_OWNER } from '../../api/meta.ts';
import { SandboxKind, type Sandbox } from '../../api/sandbox.ts';
import { SqliteStore } from '../../store/sqlite/sqlite-store.ts';
import type { ResourceStore } from '../../store/types.ts';
import { ManualClock } from '../clock.ts';
import { ConversationReconciler } from '../conversation/reconciler.ts';
import type { LifecycleSettings } from '../lifecycle.ts';
import { SandboxReconciler } from '../sandbox/reconciler.ts';
import { FakeRuntime } from './fake-runtime.ts';
import type { WarmPoolMetrics } from '../warm-pool/metrics.ts';
import { WarmPoolReconciler } from '../warm-pool/reconciler.ts';

export const NS = 'default';

export function controllerEnv(settings: Partial<LifecycleSettings> = {}, opts: { llm?: LlmConfig } = {}) {
  const clock = new ManualClock('2026-01-01T00:00:00Z');
  const store = new SqliteStore(':memory:', { clock });
  const runtime = new FakeRuntime();
  const full: LifecycleSettings = { idleTimeMs: 60_000, deletionTimeMs: 3_600_000, capacity: 10, ...settings };
  const sandboxes = new SandboxReconciler({ store, runtime, clock, settings: full });
  const warmPoolCounts = { hits: [] as string[], misses: 0 };
  const warmPools: WarmPoolMetrics = { hit: (pool) => warmPoolCounts.hits.push(pool), miss: () => void warmPoolCounts.misses++, pool: () => undefined, poolGone: () => undefined };
  const conversations = new ConversationReconciler({ store, clock, settings: full, runtime, warmPools, ...(opts.llm ? { llm: opts.llm } : {}) });
  const pools = new WarmPoolReconciler({ store, clock, settings: full });
  return {
    clock,
    store,
    settings: full,
    runtime,
    sandboxes,
    conversations,
    pools,
    warmPoolCounts,
    /** Reconciles a sandbox until its status stops changing (at most `max` passes). */
    async settleSandbox(name: string, max = 6) {
      let result = {};
      for (let i = 0; i < max; i++) {
        const before = JSON.stringify(await store.get(SandboxKind, NS, name));
        result = await sandboxes.reconcile(`${NS}/${name}`);
        if (JSON.stringify(await store.get(SandboxKind, NS, name)) === before) break;
      }
      return result;
    },
    async settleConversation(name: string, max = 12) {
      for (let i = 0; i < max; i++) {
        const before = JSON.stringify(await store.get(ConversationKind, NS, name));
        await conversations.reconcile(`${NS}/${name}`);
        if (JSON.stringify(await store.get(ConversationKind, NS, name)) === before) break;
      }
      return store.get(ConversationKind, NS, name);
    },
    sandbox: (name: string) => store.get(SandboxKind, NS, name),
    async createSandbox(name: string, owner = 'alice', spec: Partial<Sandbox['spec']> = {}) {
      return store.create(SandboxKind, { apiVersion: API_VERSION, kind: 'Sandbox', metadata: { name, namespace: NS, labels: { [LABEL_OWNER]: owner } }, spec: { owner, paused: false, ...spec } });
    },
    async createConversation(name: string, spec: Partial<ConversationSpec> = {}, owner = 'alice') {
      const conv: Conversation = { apiVersion: API_VERSION, kind: 'Conversation', metadata: { name, namespace: NS, labels: { [LABEL_OWNER]: owner } }, spec: { owner, ...spec } };
      return store.create(ConversationKind, conv);
    },
  };
}

/** A store whose methods are the real ones except those overridden: failures injected by wrapping, as agent-sandbox's interceptor does. */
export function interceptStore(store: ResourceStore, overrides: Partial<ResourceStore>): ResourceStore {
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop in overrides) return overrides[prop as keyof ResourceStore];
      const value = Reflect.get(target, prop, receiver) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
