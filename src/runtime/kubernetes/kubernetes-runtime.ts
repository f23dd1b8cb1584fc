// KubernetesRuntime: a Sandbox as a Pod + PVC + Service + Ingress in the sandbox namespace. Pause
// deletes the Pod and keeps the PVC (compute released, workspace kept); resume recreates the Pod.
import { CoreV1Api, NetworkingV1Api, StorageV1Api, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { NotFound, Conflict, Unavailable } from '../../api/errors.ts';
import type { Sandbox } from '../../api/sandbox.ts';
import { fromKube } from '../../store/kube/errors.ts';
import type { RuntimeState, SandboxRuntime } from '../types.ts';
import { archivePodName, archivePvc, desiredArchivePod, desiredIngress, desiredPod, desiredPvc, desiredService, internalUrl, pvcName, serviceName, type KubeRuntimeSettings } from './desired.ts';

/** Container waiting reasons that will not heal without a change: the sandbox is ERROR. */
const FATAL_WAITING = new Set(['CrashLoopBackOff', 'ImagePullBackOff', 'ErrImagePull', 'InvalidImageName', 'CreateContainerConfigError', 'CreateContainerError']);

export class KubernetesRuntime implements SandboxRuntime {
  readonly #core: CoreV1Api;
  readonly #net: NetworkingV1Api;
  readonly #storage: StorageV1Api;
  readonly #s: KubeRuntimeSettings;

  constructor(kubeConfig: KubeConfig, settings: KubeRuntimeSettings) {
    this.#core = kubeConfig.makeApiClient(CoreV1Api);
    this.#net = kubeConfig.makeApiClient(NetworkingV1Api);
    this.#storage = kubeConfig.makeApiClient(StorageV1Api);
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

  async start(sb: Sandbox): Promise<RuntimeState> {
    const namespace = this.#ns(sb);
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
    await this.#ensure(() => this.#core.createNamespacedPersistentVolumeClaim({ namespace, body: archivePvc(namespace, this.#s) }), 'PersistentVolumeClaim');
    const podName = archivePodName(sb.metadata.name);
    const pod = await this.#read(() => this.#core.readNamespacedPod({ name: podName, namespace }));
    if (!pod) {
      const stamp = new Date().toISOString().replace(/[:.]/g, '-');
      await this.#ensure(() => this.#core.createNamespacedPod({ namespace, body: desiredArchivePod(sb, this.#s, stamp) }), 'Pod');
      throw new Unavailable(`Archiving the workspace of ${sb.metadata.name}`);
    }
    const phase = pod.status?.phase;
    if (phase !== 'Succeeded' && phase !== 'Failed') throw new Unavailable(`Archiving the workspace of ${sb.metadata.name} (${phase ?? 'Pending'})`);
    // A failed archive must not keep a deleted sandbox alive forever; it is reported and deletion goes on.
    if (phase === 'Failed') this.#s.log?.warn({ sandbox: sb.metadata.name, reason: pod.status?.reason }, 'the workspace archive failed; deleting anyway');
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

/** Pod status → runtime state: Ready is running; a fatal waiting reason or a Failed pod is failed. */
export function podState(name: string, pod: V1Pod, url: string, internal?: string): RuntimeState {
  const status = pod.status;
  if (status?.phase === 'Failed') return { phase: 'failed', runtimeId: name, reason: status.reason ?? 'PodFailed', message: status.message ?? 'The sandbox pod failed' };
  for (const c of status?.containerStatuses ?? []) {
    const reason = c.state?.waiting?.reason;
    if (reason && FATAL_WAITING.has(reason)) return { phase: 'failed', runtimeId: name, reason, message: c.state?.waiting?.message ?? reason };
  }
  const ready = status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
  if (ready) return { phase: 'running', runtimeId: name, url, ...(internal ? { internalUrl: internal } : {}) };
  return { phase: 'starting', runtimeId: name, message: status?.phase === 'Pending' ? 'Pod pending' : 'Waiting for the agent server to be ready' };
}
