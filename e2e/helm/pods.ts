// Runs what the chart's Pods would run, as local processes: there is no kubelet or container engine
// here. Each process gets the Pod's arguments and environment (Secret references resolved) and a
// kubeconfig whose client certificate names the Pod's service account, so the API server applies
// exactly the RBAC the chart grants that account.
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api, type V1Pod, type V1PodSpec } from '@kubernetes/client-node';
import type { TestCluster } from '../kube/cluster.ts';
import { CLI } from './helm.ts';

export interface PodProcess {
  child: ChildProcess;
  /** The environment it was given, Secret references resolved. */
  env: Record<string, string>;
  exited: Promise<number | null>;
  output(): string;
  stop(): Promise<void>;
}

/** A kubeconfig file for `system:serviceaccount:<namespace>:<name>`. */
export async function serviceAccountKubeconfig(cluster: TestCluster, dir: string, namespace: string, name: string): Promise<string> {
  const user = `system:serviceaccount:${namespace}:${name}`;
  const kc = await cluster.userKubeConfig(user, ['system:serviceaccounts', `system:serviceaccounts:${namespace}`]);
  const path = join(dir, `${namespace}-${name}.kubeconfig`);
  writeFileSync(path, kc.exportConfig(), { mode: 0o600 });
  return path;
}

export async function runPodSpec(cluster: TestCluster, dir: string, namespace: string, spec: V1PodSpec, overrides: Record<string, string> = {}): Promise<PodProcess> {
  const core = cluster.kubeConfig.makeApiClient(CoreV1Api);
  const container = spec.containers[0]!;
  if (container.command?.length) throw new Error('the chart relies on the image entrypoint (agentyard); a command would bypass it');
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', AGENTYARD_LOG_LEVEL: 'warn' };
  for (const e of container.env ?? []) {
    const ref = e.valueFrom?.secretKeyRef;
    if (!ref) env[e.name] = e.value ?? '';
    else env[e.name] = Buffer.from((await core.readNamespacedSecret({ name: ref.name!, namespace })).data?.[ref.key] ?? '', 'base64').toString();
  }
  env.KUBECONFIG = await serviceAccountKubeconfig(cluster, dir, namespace, spec.serviceAccountName ?? 'default');
  const child = spawn(process.execPath, [CLI, ...(container.args ?? [])], { env: { ...env, ...overrides }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return {
    child,
    env: { ...env, ...overrides },
    exited,
    output: () => out,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * Plays kubelet for `helm test` Pods: runs each new Pod with the given label once and reports
 * Succeeded or Failed by its exit code, which is what `helm test` waits for.
 */
export class TestPodRunner {
  readonly outputs: string[] = [];
  readonly #cluster: TestCluster;
  readonly #dir: string;
  readonly #namespace: string;
  readonly #selector: string;
  readonly #seen = new Set<string>();
  #timer: NodeJS.Timeout | undefined;
  #busy: Promise<void> = Promise.resolve();

  constructor(cluster: TestCluster, dir: string, namespace: string, selector: string) {
    this.#cluster = cluster;
    this.#dir = dir;
    this.#namespace = namespace;
    this.#selector = selector;
  }

  start(): void {
    this.#timer = setInterval(() => {
      this.#busy = this.#busy.then(() => this.#tick()).catch(() => undefined);
    }, 200);
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#busy;
  }

  async #tick(): Promise<void> {
    const core = this.#cluster.kubeConfig.makeApiClient(CoreV1Api);
    const { items } = await core.listNamespacedPod({ namespace: this.#namespace, labelSelector: this.#selector });
    for (const pod of items) {
      const uid = pod.metadata!.uid!;
      if (this.#seen.has(uid) || pod.metadata?.deletionTimestamp) continue;
      this.#seen.add(uid);
      const proc = await runPodSpec(this.#cluster, this.#dir, this.#namespace, pod.spec!);
      const code = (await proc.exited) ?? 1;
      this.outputs.push(proc.output());
      await this.#report(core, pod, code);
    }
  }

  async #report(core: CoreV1Api, pod: V1Pod, code: number): Promise<void> {
    const latest = await core.readNamespacedPod({ name: pod.metadata!.name!, namespace: this.#namespace });
    const container = pod.spec!.containers[0]!;
    latest.status = {
      phase: code === 0 ? 'Succeeded' : 'Failed',
      startTime: new Date(),
      containerStatuses: [{ name: container.name, image: container.image!, imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: code, reason: code === 0 ? 'Completed' : 'Error' } } }],
    };
    await core.replaceNamespacedPodStatus({ name: latest.metadata!.name!, namespace: this.#namespace, body: latest });
  }
}
