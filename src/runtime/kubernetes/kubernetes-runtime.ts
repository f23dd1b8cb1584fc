// KubernetesRuntime: a Sandbox as a Pod + PVC + Service + Ingress in the sandbox namespace. Pause
// deletes the Pod and keeps the PVC (compute released, workspace kept); resume recreates the Pod.
// Liveness: the kubelet restarts a dead or hung (liveness probe) agent-server container on the same
// volume; observe() reports each such death once (Pod uid + death count), a watch on the sandbox
// Pods tells the controller at once, and a Pod that failed as a whole (evicted) is replaced.
import { conversationFilesUploadKey, keyStamp, workspaceArchiveKey } from '../../objstore/keys.ts';
import { unpackConversationFiles } from './conversation-files.ts';
import { CoreV1Api, NetworkingV1Api, StorageV1Api, Watch, type KubeConfig, type V1ContainerStatus, type V1Pod } from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { NotFound, Conflict, Unavailable } from '../../api/errors.ts';
import { LABEL_SANDBOX } from '../../api/meta.ts';
import type { Sandbox } from '../../api/sandbox.ts';
import { fromKube } from '../../store/kube/errors.ts';
import type { AgentServerDeath, RuntimeState, SandboxRef, SandboxRuntime } from '../types.ts';
import { ANNOTATION_ARCHIVE_STAMP, archivePodName, archivePvc, desiredArchivePod, desiredIngress, desiredPod, desiredPvc, desiredService, internalUrl, pvcName, serviceName, type KubeRuntimeSettings } from './desired.ts';
import { apiClient } from '../../store/kube/api-client.ts';

/**
 * Container waiting reasons that will not heal without a change: the sandbox is ERROR.
 * CrashLoopBackOff is not one: the kubelet restarts the container and the controller counts the
 * deaths (crash loop = too many within its window).
 */
const FATAL_WAITING = new Set(['ImagePullBackOff', 'ErrImagePull', 'InvalidImageName', 'CreateContainerConfigError', 'CreateContainerError']);
const WATCH_RETRY_MS = 1_000;

export class KubernetesRuntime implements SandboxRuntime {
  readonly #core: CoreV1Api;
  readonly #net: NetworkingV1Api;
  readonly #storage: StorageV1Api;
  readonly #s: KubeRuntimeSettings;
  readonly #watch: Watch;

  constructor(kubeConfig: KubeConfig, settings: KubeRuntimeSettings) {
    this.#watch = new Watch(kubeConfig);
    this.#core = apiClient(kubeConfig, CoreV1Api);
    this.#net = apiClient(kubeConfig, NetworkingV1Api);
    this.#storage = apiClient(kubeConfig, StorageV1Api);
    this.#s = settings;
  }

  /** STORAGE_CLASS must exist: sandboxes never start otherwise (spec part 1 item 3). */
  async checkStorageClass(): Promise<void> {
    try {
      await this.#storage.readStorageClass({ name: this.#s.storageClass });
    } catch (err) {
      const mapped = fromKube(err, `StorageClass ${this.#s.storageClass}`);
      if (mapped instanceof NotFound) {
        throw new Error(`STORAGE_CLASS '${this.#s.storageClass}' does not exist in the cluster; sandboxes could never start. Set it to one of \`kubectl get storageclass\`.`);
      }
      throw mapped;
    }
  }

  async observe(sb: Sandbox): Promise<RuntimeState> {
    const name = sb.metadata.name;
    const pod = await this.#read(() => this.#core.readNamespacedPod({ name, namespace: this.#ns(sb) }));
    if (!pod || pod.metadata?.deletionTimestamp) {
      const pvc = await this.#read(() => this.#core.readNamespacedPersistentVolumeClaim({ name: pvcName(name), namespace: this.#ns(sb) }));
      return pvc ? { phase: 'paused', runtimeId: name } : { phase: 'absent' };
    }
    return podState(name, pod, this.#s.addressing.urlFor(name), internalUrl(name, this.#ns(sb)));
  }

  /**
   * Every change of a sandbox Pod (a container died or restarted, readiness flipped, the Pod went)
   * or of its workspace archive Pod (it finished: delete() can go on) pokes that sandbox, as
   * controller-runtime's Owns() does. Without the archive Pods a deletion waited for the queue's
   * retry backoff, which doubles while the archive runs: a minute or more after the archive was done.
   * List, then watch from the list's resourceVersion; when the watch ends (timeout, error, 410) list
   * again, which also pokes every sandbox once: nothing missed in between.
   */
  async watch(changed: (sandbox: SandboxRef) => void, signal: AbortSignal): Promise<void> {
    const namespace = this.#s.namespace;
    const labelSelector = 'app.kubernetes.io/managed-by=agentyard,app.kubernetes.io/component in (sandbox,sandbox-archive)';
    const poke = (pod: V1Pod | undefined) => {
      const name = pod?.metadata?.labels?.[LABEL_SANDBOX];
      if (name) changed({ namespace: pod?.metadata?.namespace ?? namespace, name });
    };
    while (!signal.aborted) {
      try {
        const list = await this.#core.listNamespacedPod({ namespace, labelSelector });
        list.items.forEach(poke);
        const err = await new Promise<unknown>((resolve) => {
          this.#watch
            .watch(
              `/api/v1/namespaces/${namespace}/pods`,
              { labelSelector, resourceVersion: list.metadata?.resourceVersion, allowWatchBookmarks: true },
              (type: string, obj: V1Pod) => {
                if (type === 'ERROR') resolve(new Error(`sandbox Pod watch: ${(obj as { message?: string }).message ?? 'error'}`));
                else poke(obj);
              },
              resolve,
            )
            .then((req) => (signal.aborted ? req.abort() : signal.addEventListener('abort', () => req.abort(), { once: true })), resolve);
        });
        if (signal.aborted) return;
        if (!err || (err as { name?: string }).name === 'TimeoutError') continue; // a quiet watch ends after 30 s: list and watch again
        this.#s.log?.warn({ err }, 'sandbox Pod watch failed; listing again');
      } catch (err) {
        if (signal.aborted) return;
        this.#s.log?.warn({ err }, 'listing sandbox Pods failed; trying again');
      }
      await sleep(WATCH_RETRY_MS, undefined, { signal }).catch(() => undefined);
    }
  }

  /** The Pod's OH_SECRET_KEY is the session key itself (desired.ts). */
  secretKeyFor(sessionKey: string): string {
    return sessionKey;
  }

  async start(sb: Sandbox): Promise<RuntimeState> {
    const namespace = this.#ns(sb);
    // A Pod that failed as a whole (evicted, its node gone) never runs again: replaced, on the same volume.
    const old = await this.#read(() => this.#core.readNamespacedPod({ name: sb.metadata.name, namespace }));
    if (old && !old.metadata?.deletionTimestamp && (old.status?.phase === 'Failed' || old.status?.phase === 'Succeeded')) {
      await this.#ignoreMissing(() => this.#core.deleteNamespacedPod({ name: sb.metadata.name, namespace, gracePeriodSeconds: 0 }));
      return { phase: 'starting', runtimeId: sb.metadata.name, message: 'Replacing the failed Pod' };
    }
    await this.#ensure(() => this.#core.createNamespacedPersistentVolumeClaim({ namespace, body: desiredPvc(sb, this.#s) }), 'PersistentVolumeClaim');
    await this.#ensure(() => this.#core.createNamespacedService({ namespace, body: desiredService(sb) }), 'Service');
    await this.#ensure(() => this.#net.createNamespacedIngress({ namespace, body: desiredIngress(sb, this.#s) }), 'Ingress');
    await this.#ensure(() => this.#core.createNamespacedPod({ namespace, body: desiredPod(sb, this.#s) }), 'Pod');
    return this.observe(sb);
  }

  async pause(sb: Sandbox): Promise<RuntimeState> {
    await this.#ignoreMissing(() => this.#core.deleteNamespacedPod({ name: sb.metadata.name, namespace: this.#ns(sb) }));
    const pvc = await this.#read(() => this.#core.readNamespacedPersistentVolumeClaim({ name: pvcName(sb.metadata.name), namespace: this.#ns(sb) }));
    return pvc ? { phase: 'paused', runtimeId: sb.metadata.name } : { phase: 'absent' };
  }

  /**
   * Archives the workspace, then removes everything. Called again until it returns (it throws
   * Unavailable while the archive is being taken), so it keeps no state of its own.
   */
  async delete(sb: Sandbox): Promise<void> {
    const name = sb.metadata.name;
    const namespace = this.#ns(sb);
    await this.#ignoreMissing(() => this.#core.deleteNamespacedPod({ name, namespace }));
    await this.#archive(sb);
    await this.#ignoreMissing(() => this.#net.deleteNamespacedIngress({ name, namespace }));
    await this.#ignoreMissing(() => this.#core.deleteNamespacedService({ name: serviceName(name), namespace }));
    await this.#ignoreMissing(() => this.#core.deleteNamespacedPersistentVolumeClaim({ name: pvcName(name), namespace }));
  }

  async #archive(sb: Sandbox): Promise<void> {
    const namespace = this.#ns(sb);
    const workspace = await this.#read(() => this.#core.readNamespacedPersistentVolumeClaim({ name: pvcName(sb.metadata.name), namespace }));
    if (!workspace || workspace.metadata?.deletionTimestamp) return; // nothing (left) to archive
    if (await this.#read(() => this.#core.readNamespacedPod({ name: sb.metadata.name, namespace }))) {
      throw new Unavailable(`Waiting for the agent server of ${sb.metadata.name} to stop before archiving its workspace`);
    }
    const upload = this.#s.archiveUploadUrl;
    if (!upload) await this.#ensure(() => this.#core.createNamespacedPersistentVolumeClaim({ namespace, body: archivePvc(namespace, this.#s) }), 'PersistentVolumeClaim');
    const podName = archivePodName(sb.metadata.name);
    const pod = await this.#read(() => this.#core.readNamespacedPod({ name: podName, namespace }));
    const files = this.#s.conversationFiles;
    if (!pod) {
      const stamp = keyStamp(new Date());
      // Into the object store through URLs for these keys only, or onto the archive PVC.
      const target = upload
        ? { url: await upload(workspaceArchiveKey(sb.metadata.name, stamp)), ...(files ? { conversationFilesUrl: await upload(conversationFilesUploadKey(sb.metadata.name, stamp)) } : {}) }
        : undefined;
      await this.#ensure(() => this.#core.createNamespacedPod({ namespace, body: desiredArchivePod(sb, this.#s, stamp, target) }), 'Pod');
      throw new Unavailable(`Archiving the workspace of ${sb.metadata.name}`);
    }
    const phase = pod.status?.phase;
    if (phase !== 'Succeeded' && phase !== 'Failed') throw new Unavailable(`Archiving the workspace of ${sb.metadata.name} (${phase ?? 'Pending'})`);
    // A failed archive must not keep a deleted sandbox alive forever; it is reported and deletion goes on.
    if (phase === 'Failed') this.#s.log?.warn({ sandbox: sb.metadata.name, reason: pod.status?.reason }, 'the workspace archive failed; deleting anyway');
    const stamp = pod.metadata?.annotations?.[ANNOTATION_ARCHIVE_STAMP];
    if (upload && files && stamp) {
      // Before the Pod goes: while it is there, a restarted controller finds the upload's key again.
      // A failed Pod may have uploaded them too; what is there is kept.
      const name = sb.metadata.name;
      const kept = await unpackConversationFiles(files.objects, conversationFilesUploadKey(name, stamp), { keep: (id) => files.keep(id, name), ...(this.#s.log ? { log: this.#s.log } : {}) });
      if (kept.stored || kept.skipped) this.#s.log?.info({ sandbox: name, conversationFiles: kept.stored, skipped: kept.skipped }, 'conversation files kept in the object store');
    }
    await this.#ignoreMissing(() => this.#core.deleteNamespacedPod({ name: podName, namespace }));
  }

  #ns(sb: Sandbox): string {
    return sb.metadata.namespace ?? this.#s.namespace;
  }

  async #read<T>(call: () => Promise<T>): Promise<T | undefined> {
    try {
      return await call();
    } catch (err) {
      const mapped = fromKube(err, 'read');
      if (mapped instanceof NotFound) return undefined;
      throw mapped;
    }
  }

  async #ensure(call: () => Promise<unknown>, what: string): Promise<void> {
    try {
      await call();
    } catch (err) {
      const mapped = fromKube(err, what);
      if (!(mapped instanceof Conflict)) throw mapped; // AlreadyExists: keep what is there
    }
  }

  async #ignoreMissing(call: () => Promise<unknown>): Promise<void> {
    try {
      await call();
    } catch (err) {
      const mapped = fromKube(err, 'delete');
      if (!(mapped instanceof NotFound)) throw mapped;
    }
  }
}

/**
 * Pod status → runtime state: Ready is running; a fatal waiting reason is failed; a Failed Pod is
 * exited (replaced by start()); a container the kubelet restarted carries its last death.
 */
export function podState(name: string, pod: V1Pod, url: string, internal?: string): RuntimeState {
  const status = pod.status;
  const uid = pod.metadata?.uid ?? name;
  if (status?.phase === 'Failed' || status?.phase === 'Succeeded') {
    return { phase: 'exited', runtimeId: name, death: { id: `pod ${uid} ${status.phase}`, reason: status.reason ?? 'PodFailed', message: status.message ?? `The sandbox Pod ${status.phase === 'Failed' ? 'failed' : 'ended'}` } };
  }
  for (const c of status?.containerStatuses ?? []) {
    const reason = c.state?.waiting?.reason;
    if (reason && FATAL_WAITING.has(reason)) return { phase: 'failed', runtimeId: name, reason, message: c.state?.waiting?.message ?? reason };
  }
  const agent = status?.containerStatuses?.find((c) => c.name === 'agent-server') ?? status?.containerStatuses?.[0];
  const death = agent ? containerDeath(uid, agent) : undefined;
  const ready = status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
  if (ready) return { phase: 'running', runtimeId: name, url, ...(internal ? { internalUrl: internal } : {}), ...(death ? { death } : {}) };
  const message = death && !agent?.state?.running ? `The agent server container died (${death.reason}); the kubelet restarts it` : status?.phase === 'Pending' ? 'Pod pending' : 'Waiting for the agent server to be ready';
  return { phase: 'starting', runtimeId: name, message, ...(death ? { death } : {}) };
}

/**
 * The container's latest death, if it ever died: deaths so far are the restarts done plus the
 * current one while it is not running (terminated, or waiting out the kubelet's back-off).
 */
function containerDeath(podUid: string, c: V1ContainerStatus): AgentServerDeath | undefined {
  const current = c.state?.terminated ?? (c.state?.running ? undefined : c.lastState?.terminated);
  const dead = c.state?.running === undefined && (c.state?.terminated !== undefined || c.lastState?.terminated !== undefined || c.restartCount > 0);
  const deaths = (c.restartCount ?? 0) + (dead ? 1 : 0);
  if (deaths === 0) return undefined;
  const last = current ?? c.lastState?.terminated;
  const how = last ? `${last.reason ?? 'Terminated'}${last.signal ? `, signal ${last.signal}` : ''}, exit code ${last.exitCode}` : 'restarted by the kubelet';
  return { id: `pod ${podUid} death ${deaths}`, instance: `pod ${podUid}`, ordinal: deaths, reason: last?.reason ?? 'ContainerRestarted', message: `The agent server container ended (${how})${last?.message ? `: ${last.message}` : ''}` };
}
