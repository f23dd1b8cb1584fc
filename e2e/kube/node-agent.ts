// A test-only kubelet: there is no container engine here, so this node agent registers a Node,
// binds pending Pods to it (there is no scheduler either), runs each Pod's command as a local
// process with its volumes mapped to directories, and reports real Pod status back. Init
// containers are not run: the one sandbox Pods have copies the agent bundle, and here the bundle
// is this checkout (its Node 24 and sources), mapped in place of the bundle's paths.
// As a kubelet does for restartPolicy Always, it restarts a container that died, after a back-off
// that doubles per restart (CrashLoopBackOff meanwhile, with the death as lastState.terminated),
// and counts the restarts (restartPolicy OnFailure: the same after a failure, Succeeded after exit 0); the back-off is short here (restartBackoffMs) so tests stay fast.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api, type KubeConfig, type V1Pod, type V1EnvVar } from '@kubernetes/client-node';
import { BUNDLE_DIR, BUNDLE_NODE } from '../../src/runtime/kubernetes/bundle.ts';
import { freePort } from './processes.ts';

const REPO = new URL('../../', import.meta.url).pathname;
export const TEST_IMAGE = 'agentyard:test';
const NODE = 'agentyard-test-node';

interface Running {
  process: ChildProcess;
  port: number;
  restarts: number;
  ready: boolean;
  exitedWith?: number | null;
  signal?: NodeJS.Signals | null;
  finishedAt?: Date;
  /** The previous run's end, reported as lastState.terminated. */
  last?: { exitCode: number; signal?: number; reason: string; finishedAt: Date };
}

const SIGNALS: Record<string, number> = { SIGKILL: 9, SIGTERM: 15, SIGSEGV: 11, SIGABRT: 6 };

export class NodeAgent {
  readonly #core: CoreV1Api;
  readonly #namespace: string;
  readonly #workDir: string;
  readonly #pods = new Map<string, Running>();
  #timer: NodeJS.Timeout | undefined;
  #busy = false;
  #stopped = false;
  #held = false;
  readonly #restartBackoffMs: number;

  constructor(kc: KubeConfig, namespace: string, workDir: string, opts: { restartBackoffMs?: number } = {}) {
    this.#restartBackoffMs = opts.restartBackoffMs ?? 500;
    this.#core = kc.makeApiClient(CoreV1Api);
    this.#namespace = namespace;
    this.#workDir = workDir;
  }

  /** Local port serving the agent server of a sandbox's Pod. */
  portOf(podName: string): number | undefined {
    return this.#pods.get(podName)?.port;
  }

  /** Process id of a Pod's running container (for kill -9 in fault tests). */
  pidOf(podName: string): number | undefined {
    const run = this.#pods.get(podName);
    return run && run.exitedWith === undefined ? run.process.pid : undefined;
  }

  /**
   * While held, new Pods are bound but their container is not started: the sandbox stays
   * STARTING and a start task on it waits in WAITING_FOR_SANDBOX, for as long as a test needs.
   */
  hold(held: boolean): void {
    this.#held = held;
  }

  volumeDir(claimName: string): string {
    return join(this.#workDir, 'volumes', claimName);
  }

  async start(): Promise<void> {
    await this.#core
      .createNode({ body: { metadata: { name: NODE, labels: { 'kubernetes.io/hostname': NODE } } } })
      .catch((err: { code?: number }) => {
        if (err.code !== 409) throw err;
      });
    const node = await this.#core.readNode({ name: NODE });
    node.status = { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'test node agent', lastHeartbeatTime: new Date(), lastTransitionTime: new Date() }] };
    await this.#core.replaceNodeStatus({ name: NODE, body: node });
    this.#timer = setInterval(() => void this.#tick(), 200);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    while (this.#busy) await new Promise((r) => setTimeout(r, 20));
    await Promise.all([...this.#pods.keys()].map((name) => this.#kill(name)));
  }

  async #tick(): Promise<void> {
    if (this.#busy || this.#stopped) return;
    this.#busy = true;
    try {
      const { items } = await this.#core.listNamespacedPod({ namespace: this.#namespace });
      const seen = new Set<string>();
      for (const pod of items) {
        const name = pod.metadata!.name!;
        seen.add(name);
        if (pod.metadata?.deletionTimestamp) {
          await this.#kill(name);
          await this.#core.deleteNamespacedPod({ name, namespace: this.#namespace, gracePeriodSeconds: 0 }).catch(() => undefined);
          continue;
        }
        if (!pod.spec?.nodeName) {
          await this.#core.createNamespacedPodBinding({ name, namespace: this.#namespace, body: { metadata: { name }, target: { kind: 'Node', name: NODE } } });
          continue;
        }
        if (this.#held && !this.#pods.has(name)) continue;
        await this.#sync(pod);
      }
      for (const name of [...this.#pods.keys()]) if (!seen.has(name)) await this.#kill(name);
    } catch {
      // the API server may be going away at the end of a test
    } finally {
      this.#busy = false;
    }
  }

  async #sync(pod: V1Pod): Promise<void> {
    const name = pod.metadata!.name!;
    const container = pod.spec!.containers[0]!;
    if (container.image !== TEST_IMAGE) {
      return this.#report(pod, { waiting: { reason: 'ImagePullBackOff', message: `Back-off pulling image "${container.image}"` } }, false, 0);
    }
    let run = this.#pods.get(name);
    if (pod.spec?.restartPolicy === 'Never') {
      // A one-shot Pod (the workspace archive): run once, then Succeeded or Failed.
      run ??= await this.#launch(pod, 0);
      if (run.exitedWith === undefined) return this.#report(pod, { running: { startedAt: new Date() } }, false, 0);
      return this.#report(pod, { terminated: { exitCode: run.exitedWith ?? 1, reason: run.exitedWith === 0 ? 'Completed' : 'Error' } }, false, 0, run.exitedWith === 0 ? 'Succeeded' : 'Failed');
    }
    if (pod.spec?.restartPolicy === 'OnFailure' && run?.exitedWith === 0) {
      // A one-shot Pod that retries (the workspace archive upload): done once it succeeds.
      return this.#report(pod, { terminated: { exitCode: 0, reason: 'Completed' } }, false, run.restarts, 'Succeeded');
    }
    if (run && run.exitedWith !== undefined) {
      const ended = { exitCode: run.exitedWith ?? 128 + (SIGNALS[run.signal ?? ''] ?? 0), ...(run.signal ? { signal: SIGNALS[run.signal] } : {}), reason: 'Error', finishedAt: run.finishedAt! };
      const backoff = Math.min(this.#restartBackoffMs * 2 ** run.restarts, 10 * this.#restartBackoffMs);
      if (Date.now() - run.finishedAt!.getTime() < backoff) {
        return this.#report(pod, { waiting: { reason: 'CrashLoopBackOff', message: `back-off restarting failed container (exit ${ended.exitCode})` } }, false, run.restarts, undefined, ended);
      }
      const restarted = await this.#launch(pod, run.restarts + 1);
      restarted.last = ended;
      run = restarted;
    }
    run ??= await this.#launch(pod, 0);
    if (pod.spec?.restartPolicy === 'OnFailure') return this.#report(pod, { running: { startedAt: new Date() } }, false, run.restarts, undefined, run.last);
    if (!run.ready) run.ready = await healthy(run.port);
    await this.#report(pod, { running: { startedAt: new Date() } }, run.ready, run.restarts, undefined, run.last);
  }

  async #launch(pod: V1Pod, restarts: number): Promise<Running> {
    const name = pod.metadata!.name!;
    const container = pod.spec!.containers[0]!;
    const mounts = new Map<string, string>();
    for (const m of container.volumeMounts ?? []) {
      const vol = pod.spec!.volumes?.find((v) => v.name === m.name);
      const dir = this.volumeDir(vol?.persistentVolumeClaim?.claimName ?? `${name}-${m.name}`);
      mkdirSync(dir, { recursive: true });
      mounts.set(m.mountPath, dir);
    }
    mounts.delete(BUNDLE_DIR);
    mounts.set(`${BUNDLE_DIR}/app`, REPO.replace(/\/$/, ''));
    const mapPath = (arg: string) => {
      if (arg === BUNDLE_NODE) return join(REPO, 'node_modules/.bin/node');
      for (const [mountPath, dir] of mounts) if (arg === mountPath || arg.startsWith(`${mountPath}/`)) return dir + arg.slice(mountPath.length);
      return arg;
    };
    const port = await freePort();
    const [cmd, ...args] = [...(container.command ?? []), ...(container.args ?? [])];
    const mapped = args.map((a, i) => (args[i - 1] === '--port' ? String(port) : args[i - 1] === '--host' ? '127.0.0.1' : mapPath(a)));
    const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
    for (const e of container.env ?? []) env[e.name] = mapPath(await this.#envValue(e));
    const child = spawn(mapPath(cmd!), mapped, { env, stdio: 'ignore' });
    const run: Running = { process: child, port, restarts, ready: false };
    child.once('exit', (code, signal) => {
      run.exitedWith = code;
      run.signal = signal;
      run.finishedAt = new Date();
    });
    this.#pods.set(name, run);
    return run;
  }

  async #envValue(e: V1EnvVar): Promise<string> {
    const ref = e.valueFrom?.secretKeyRef;
    if (!ref) return e.value ?? '';
    const secret = await this.#core.readNamespacedSecret({ name: ref.name!, namespace: this.#namespace });
    return Buffer.from(secret.data?.[ref.key] ?? '', 'base64').toString('utf8');
  }

  async #report(
    pod: V1Pod,
    state: NonNullable<V1Pod['status']>['containerStatuses'] extends (infer S)[] | undefined ? S extends { state?: infer T } ? T : never : never,
    ready: boolean,
    restarts: number,
    phase?: 'Succeeded' | 'Failed',
    last?: Running['last'],
  ): Promise<void> {
    const latest = await this.#core.readNamespacedPod({ name: pod.metadata!.name!, namespace: this.#namespace });
    const was = latest.status?.conditions?.find((c) => c.type === 'Ready')?.status;
    const waiting = (state as { waiting?: { reason?: string } }).waiting?.reason;
    if (phase && latest.status?.phase === phase) return;
    if (!phase && latest.status?.phase === 'Running' && was === (ready ? 'True' : 'False') && latest.status.containerStatuses?.[0]?.state?.waiting?.reason === waiting && latest.status.containerStatuses?.[0]?.restartCount === restarts) return;
    latest.status = {
      phase: phase ?? (waiting === 'ImagePullBackOff' ? 'Pending' : 'Running'),
      podIP: '127.0.0.1',
      hostIP: '127.0.0.1',
      startTime: latest.status?.startTime ?? new Date(),
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: new Date() }],
      containerStatuses: [{ name: pod.spec!.containers[0]!.name, image: pod.spec!.containers[0]!.image!, imageID: '', ready, restartCount: restarts, state, ...(last ? { lastState: { terminated: last } } : {}) }],
    };
    await this.#core.replaceNamespacedPodStatus({ name: latest.metadata!.name!, namespace: this.#namespace, body: latest });
  }

  async #kill(name: string): Promise<void> {
    const run = this.#pods.get(name);
    this.#pods.delete(name);
    if (!run || run.exitedWith !== undefined) return;
    const exited = new Promise<void>((r) => run.process.once('exit', () => r()));
    run.process.kill('SIGTERM');
    const timer = setTimeout(() => run.process.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  }
}

async function healthy(port: number): Promise<boolean> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(1_000) });
    await res.body?.cancel();
    return res.ok;
  } catch {
    return false;
  }
}
