// The controller as `agentyard up` (and `agentyard controller`) runs it: both reconcilers over one store.
import type { LlmConfig } from '../agent/types.ts';
import { ConversationKind } from '../api/conversation.ts';
import type { KubeObject, ResourceKind } from '../api/meta.ts';
import { SandboxKind } from '../api/sandbox.ts';
import type { SandboxRuntime } from '../runtime/types.ts';
import type { ResourceStore } from '../store/types.ts';
import type { Logger } from '../util/log.ts';
import type { Clock } from './clock.ts';
import { ConversationReconciler } from './conversation/reconciler.ts';
import type { LifecycleSettings } from './lifecycle.ts';
import { Controller, PlacementIndex, sandboxKeysOfConversation } from './manager.ts';
import { SandboxReconciler } from './sandbox/reconciler.ts';

export interface ControllerDeps {
  store: ResourceStore;
  runtime: SandboxRuntime;
  clock: Clock;
  settings: LifecycleSettings;
  namespace?: string;
  llm?: LlmConfig;
  log?: Logger;
}

export function createController(deps: ControllerDeps): Controller {
  const sandboxes = new SandboxReconciler(deps);
  const conversations = new ConversationReconciler(deps);
  const placements = new PlacementIndex();
  return new Controller({ store: deps.store, ...(deps.namespace ? { namespace: deps.namespace } : {}), ...(deps.log ? { log: deps.log } : {}) })
    .register({
      name: 'sandbox',
      kind: SandboxKind,
      reconcile: (key) => sandboxes.reconcile(key),
      watches: [{ kind: ConversationKind as ResourceKind, map: sandboxKeysOfConversation }],
    })
    .register({
      name: 'conversation',
      kind: ConversationKind,
      reconcile: (key) => conversations.reconcile(key),
      observe: (obj: KubeObject, deleted: boolean) => placements.observe(obj, deleted),
      watches: [{ kind: SandboxKind as ResourceKind, map: (sb) => placements.conversationsOf(sb) }],
    });
}
