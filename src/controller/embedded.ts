// The controller as `agentyard up` (and `agentyard controller`) runs it: both reconcilers over one store.
import type { LlmConfig } from '../agent/types.ts';
import { ConversationKind } from '../api/conversation.ts';
import type { KubeObject, ResourceKind } from '../api/meta.ts';
import { SandboxKind, type Sandbox } from '../api/sandbox.ts';
import type { SandboxRuntime } from '../runtime/types.ts';
import type { ResourceStore } from '../store/types.ts';
import type { Logger } from '../util/log.ts';
import type { Clock } from './clock.ts';
import { logRecorder, type EventRecorder } from './events.ts';
import { ConversationReconciler } from './conversation/reconciler.ts';
import type { GitSettings } from './conversation/repository.ts';
import { nextDeadline, type LifecycleSettings } from './lifecycle.ts';
import { CachedStore } from './cache.ts';
import { objectKey } from './keys.ts';
import { Controller, ConversationCounts, PlacementIndex, type Source } from './manager.ts';
import { sandboxKeysOnPlacementChange } from './placement-changes.ts';
import { changedBeyondStatus } from './predicates.ts';
import { SandboxReconciler } from './sandbox/reconciler.ts';
import { LiveLifecycleSettings, sandboxConfigurationSource } from './sandbox-configuration.ts';
import { SandboxWarmPoolKind } from '../api/warm-pool.ts';
import { defaultRegistry, type Registry } from '../util/metrics.ts';
import { warmPoolMetrics } from './warm-pool/metrics.ts';
import { poolKeysOfSandbox, WarmPoolReconciler } from './warm-pool/reconciler.ts';

export interface ControllerDeps {
  store: ResourceStore;
  runtime: SandboxRuntime;
  clock: Clock;
  settings: LifecycleSettings;
  namespace?: string;
  llm?: LlmConfig;
  log?: Logger;
  /** Where the controller's events go; the log by default, core/v1 Events in a cluster. */
  recorder?: EventRecorder;
  /** Git hosts and configuration repository naming (gitSettingsFromEnv). */
  git?: GitSettings;
  /** Where reconcile, work-queue and warm-pool metrics go (default: the process's registry). */
  metrics?: Registry;
}

export function createController(deps: ControllerDeps): Controller {
  // deps.settings are the defaults; the SandboxConfiguration object overrides them while it exists.
  const settings = new LiveLifecycleSettings(deps.settings);
  const configuration = sandboxConfigurationSource(deps.store, deps.namespace ?? 'default', settings, deps.log, () => deps.clock.now().toUTC().toISO({ suppressMilliseconds: true })!);
  const registry = deps.metrics ?? defaultRegistry();
  const withRecorder = { ...deps, settings, recorder: deps.recorder ?? logRecorder(deps.log), warmPools: warmPoolMetrics(registry) };
  const counts = new ConversationCounts();
  // The Sandbox reconciler reads Sandboxes from the controller's informer cache (every pass starts
  // with a read of its Sandbox: a GET per pass on a cluster). The conversation reconciler keeps
  // reading the store: its placement admits against capacity from a list of all Sandboxes, which
  // must include the ones it created a moment before (a cache may not show them yet).
  const cached = new CachedStore(deps.store, (kind) => (kind.kind === SandboxKind.kind ? controller.cache(kind) : undefined));
  const sandboxes = new SandboxReconciler({ ...withRecorder, store: cached, conversationCount: (sb) => counts.of(sb), runningConversations: (sb) => counts.runningOn(sb) });
  const conversations = new ConversationReconciler(withRecorder);
  const pools = new WarmPoolReconciler({ ...withRecorder, metrics: withRecorder.warmPools });
  const placements = new PlacementIndex();
  const runtime = deps.runtime;
  // The runtime tells of agent-server deaths as they happen: the Sandbox is looked at within seconds.
  const liveness: Source[] = runtime.watch ? [(enqueue, signal) => runtime.watch!((ref) => enqueue(objectKey(ref.namespace ?? deps.namespace, ref.name)), signal)] : [];
  const controller = new Controller({ store: deps.store, metrics: registry, ...(deps.namespace ? { namespace: deps.namespace } : {}), ...(deps.log ? { log: deps.log } : {}) });
  return controller
    .register({
      name: 'sandbox',
      kind: SandboxKind,
      reconcile: (key) => sandboxes.reconcile(key),
      // Each Sandbox seen gets a timer at its next lifecycle deadline at once: after a restart the
      // first pass over 10,000 of them takes a while (in the low-priority lane), and a deadline that
      // falls due meanwhile must not wait for it. The pass itself sets the same timer again.
      observe: (obj: KubeObject, deleted: boolean) => {
        if (deleted) return;
        const ms = nextDeadline(obj as Sandbox, deps.clock.now(), settings);
        if (ms !== undefined) controller.queue('sandbox')?.addAfter(objectKey(obj.metadata.namespace, obj.metadata.name), ms);
      },
      // A Sandbox's status is written by this reconciler only: a change of the status alone is a pass's
      // own write, which that pass has acted on (its result holds the next deadline or poll). Queuing
      // the key again cost a pass and a /ready probe of the agent server per status write — a
      // warm-pool claim wrote two, on the same event loop and agent server as the claim (issue #16).
      updatePredicate: changedBeyondStatus,
      watches: [{ kind: ConversationKind as ResourceKind, map: sandboxKeysOnPlacementChange() }],
      sources: [...liveness, configuration],
    })
    .register({
      name: 'conversation',
      kind: ConversationKind,
      reconcile: (key) => conversations.reconcile(key),
      observe: (obj: KubeObject, deleted: boolean) => {
        placements.observe(obj, deleted);
        counts.observe(obj, deleted);
      },
      watches: [{ kind: SandboxKind as ResourceKind, map: (sb) => placements.conversationsOf(sb) }],
    })
    .register({
      name: 'warmpool',
      kind: SandboxWarmPoolKind,
      reconcile: (key) => pools.reconcile(key),
      watches: [{ kind: SandboxKind as ResourceKind, map: poolKeysOfSandbox }],
      workers: 1,
    });
}

/** The name the `agentyard up` wiring was briefed with; the same controller. */
export const createEmbeddedController = createController;
