// `agentyard uninstall-cleanup`: run by the chart's pre-delete hook, while the controller still
// runs. It deletes every Conversation and Sandbox in the sandbox namespace and waits until the
// controller has finalized them (archive taken, finalizer removed); their Pods, PVCs, Services,
// Ingresses and session Secrets go with them through owner references. Then it deletes what no
// object owns: the shared archive PVC, only when asked (--delete-archives; see the chart README).
import { parseArgs } from 'node:util';
import { ApiException, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { NotFound } from '../api/errors.ts';
import type { KubeObject, ResourceKind } from '../api/meta.ts';
import { ConversationKind } from '../api/conversation.ts';
import { SandboxKind } from '../api/sandbox.ts';
import { SandboxWarmPoolKind } from '../api/warm-pool.ts';
import { ARCHIVE_PVC } from '../runtime/kubernetes/desired.ts';
import { KubeStore } from '../store/kube/kube-store.ts';
import type { ResourceStore } from '../store/types.ts';

export interface UninstallCleanupOptions {
  namespace: string;
  /** How long to wait for the controller to finalize everything before giving up. */
  timeoutMs: number;
  deleteArchives: boolean;
  pollMs?: number;
  log?: (line: string) => void;
}

export interface UninstallCleanupResult {
  /** Conversations and Sandboxes still present at the deadline (`kind/name`); empty when done. */
  left: string[];
  archiveDeleted: boolean;
}

async function deleteAll<T extends KubeObject>(store: ResourceStore, kind: ResourceKind<T>, namespace: string): Promise<number> {
  const { items } = await store.list(kind, namespace);
  for (const o of items) {
    if (o.metadata.deletionTimestamp) continue; // already being finalized
    try {
      await store.delete(kind, namespace, o.metadata.name);
    } catch (err) {
      if (!(err instanceof NotFound)) throw err;
    }
  }
  return items.length;
}

async function remaining(store: ResourceStore, namespace: string): Promise<string[]> {
  const [conversations, sandboxes] = await Promise.all([store.list(ConversationKind, namespace), store.list(SandboxKind, namespace)]);
  return [...conversations.items.map((c) => `conversation/${c.metadata.name}`), ...sandboxes.items.map((s) => `sandbox/${s.metadata.name}`)];
}

export async function uninstallCleanup(kc: KubeConfig, opts: UninstallCleanupOptions): Promise<UninstallCleanupResult> {
  const log = opts.log ?? ((l: string) => process.stdout.write(`${l}\n`));
  const store = new KubeStore(kc, { fieldManager: 'agentyard-uninstall' });
  const ns = opts.namespace;
  // Warm pools before anything: a pool left in place would start new members as fast as they go.
  await deleteAll(store, SandboxWarmPoolKind, ns);
  // Conversations first: each one's sandbox is deleted by its controller anyway, and a Sandbox
  // deleted under a running Conversation would only make that Conversation fail first.
  const conversations = await deleteAll(store, ConversationKind, ns);
  const sandboxes = await deleteAll(store, SandboxKind, ns);
  log(`uninstall-cleanup: deleting ${conversations} conversation(s) and ${sandboxes} sandbox(es) in namespace ${ns}; waiting up to ${Math.round(opts.timeoutMs / 1000)}s for the controller to finalize them`);
  const deadline = Date.now() + opts.timeoutMs;
  let left = await remaining(store, ns);
  let lastReport = 0;
  while (left.length > 0 && Date.now() < deadline) {
    if (Date.now() - lastReport >= 10_000) {
      log(`uninstall-cleanup: ${left.length} left: ${left.slice(0, 10).join(', ')}${left.length > 10 ? ', ...' : ''}`);
      lastReport = Date.now();
    }
    await new Promise((r) => setTimeout(r, opts.pollMs ?? 1000));
    // A Sandbox created meanwhile (a Conversation starting) is deleted too.
    await deleteAll(store, SandboxKind, ns);
    left = await remaining(store, ns);
  }
  if (left.length > 0) {
    log(`uninstall-cleanup: gave up after ${Math.round(opts.timeoutMs / 1000)}s, still finalizing: ${left.join(', ')} (is the controller running? kubectl describe these for their events)`);
    return { left, archiveDeleted: false };
  }
  log('uninstall-cleanup: every conversation and sandbox is finalized');
  let archiveDeleted = false;
  if (opts.deleteArchives) {
    try {
      await kc.makeApiClient(CoreV1Api).deleteNamespacedPersistentVolumeClaim({ namespace: ns, name: ARCHIVE_PVC });
      archiveDeleted = true;
      log(`uninstall-cleanup: deleted the archive PVC ${ARCHIVE_PVC}`);
    } catch (err) {
      if (!(err instanceof ApiException && err.code === 404)) throw err;
    }
  } else {
    log(`uninstall-cleanup: kept the archive PVC ${ARCHIVE_PVC} (if any): workspace archives outlive the release; uninstall.deleteArchives=true deletes it`);
  }
  return { left, archiveDeleted };
}

export async function runUninstallCleanupCli(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      namespace: { type: 'string', short: 'n' },
      timeout: { type: 'string', default: '240' },
      'delete-archives': { type: 'boolean', default: false },
    },
  });
  const namespace = values.namespace ?? process.env.AGENTYARD_SANDBOX_NAMESPACE ?? 'agentyard-sandboxes';
  const timeout = Number(values.timeout);
  if (!Number.isFinite(timeout) || timeout <= 0) throw new Error(`--timeout must be a positive number of seconds, got '${values.timeout}'`);
  const kc = new KubeConfig();
  kc.loadFromDefault();
  const result = await uninstallCleanup(kc, { namespace, timeoutMs: timeout * 1000, deleteArchives: values['delete-archives'] });
  return result.left.length === 0 ? 0 : 1;
}
