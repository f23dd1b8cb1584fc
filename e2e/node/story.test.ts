// agentyard on a REAL single-node Kubernetes cluster (node.ts): the chart installed with Helm from
// the image built from this checkout's Dockerfile, Pods run by kubelet + containerd + runc, the app
// and sandbox hosts served by Traefik, names answered by CoreDNS, NetworkPolicy enforced by
// kube-router's firewall, volumes from local-path-provisioner. The model is the scripted one, on the
// node's address so that sandbox Pods reach it. One story, in order: each step builds on the last.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { startScriptedLlm, type ScriptedLlm } from '../../src/testing/scripted-llm/server.ts';
import { eventually } from '../embedded/harness.ts';
import { agentyard, CHART, helm, run, writeValues } from '../helm/helm.ts';
import { BRIDGE, containerPids, leftovers, NODE_IP, sh } from './host.ts';
import { agentyardImage, realNodeTools, routeDomainToNode, startRealNode, type RealNode } from './node.ts';
import { Steps } from './steps.ts';
import { nodeChartValues } from './release.ts';

const tools = realNodeTools();
const NS = 'agentyard';
const SANDBOXES = 'agentyard-sandboxes';
const DOMAIN = 'agentyard.test';
const API_KEY = 'ay_node_admin_key_0123456789';
const APP = `http://app.${DOMAIN}`;
/** A link-local address the NetworkPolicy step listens on (the chart denies 169.254.0.0/16 to sandboxes). */
const LINK_LOCAL = '169.254.123.45';

interface StartTask {
  id: string;
  status: string;
  detail?: string | null;
  app_conversation_id?: string | null;
  sandbox_id?: string | null;
}

describe.skipIf(!tools)('agentyard on a real node', { timeout: 10 * 60_000 }, () => {
  let node: RealNode;
  let core: CoreV1Api;
  let llm: ScriptedLlm;
  let undoRouting: () => void = () => {};
  let image: { ref: string; archive: string };
  const steps = new Steps();
  const { timings } = steps;
  const dir = mkdtempSync(join(tmpdir(), 'agentyard-node-'));
  const kube = (args: string[]) => helm([...args, '--kubeconfig', node.kubeconfigPath]);
  const timed = <T>(step: string, fn: () => Promise<T>) => steps.timed(step, fn);
  const api = async <T = any>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> => {
    const res = await fetch(`${APP}${path}`, { method, headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
  };

  beforeAll(async () => {
    image = await timed('agentyard image', () => agentyardImage());
    node = await timed('node start', () => startRealNode({ tools: tools!, baseDomain: DOMAIN, images: [image] }));
    core = node.cluster.kubeConfig.makeApiClient(CoreV1Api);
    llm = await startScriptedLlm([], { host: NODE_IP });
    undoRouting = routeDomainToNode(DOMAIN);
    await core.createNamespace({ body: { metadata: { name: NS } } });
    await core.createNamespace({ body: { metadata: { name: SANDBOXES } } });
    await core.createNamespacedSecret({ namespace: NS, body: { metadata: { name: 'agentyard-api-key' }, stringData: { 'api-key': API_KEY } } });
    // The model key is the API's (its model gateway calls the model), never in the sandbox namespace.
    await core.createNamespacedSecret({ namespace: NS, body: { metadata: { name: 'agentyard-llm' }, stringData: { 'api-key': 'sk-scripted-node-key' } } });
  }, 30 * 60_000);

  afterAll(async () => {
    undoRouting();
    await llm?.close();
    const t = Date.now();
    await node?.stop(steps.failed);
    timings['node stop'] = Date.now() - t;
    rmSync(dir, { recursive: true, force: true });
    console.log(steps.report('story', node?.timings));
    // Nothing of the node is left on the host: processes, containers' mounts, rules, cgroups, the bridge.
    if (node) expect(await leftovers()).toEqual([]);
  }, 5 * 60_000);

  const values = () => {
    return writeValues(
      dir,
      'values.yaml',
      JSON.stringify({
        ...nodeChartValues(DOMAIN, image.ref, llm.url),
        // A shorter Lease than the chart's 15 s: the SIGKILL step below waits for the dead leader's
        // Lease to expire before the other replica takes over. Still duration > renew deadline >
        // retry, with seconds of margin for renewals on a loaded machine.
        controller: { replicas: 2, lease: { durationSeconds: 6, renewDeadlineSeconds: 4, retryPeriodSeconds: 1 } },
        uninstall: { deleteArchives: true },   // the last step wants nothing left in the sandbox namespace
        // The controller serves nothing else: with its metrics port open, the NetworkPolicy step has a
        // listener to be refused, and shows the refusal is the policy's (the port opens without it).
        metrics: { enabled: true },
      }),
    );
  };

  it('helm install --wait brings every Pod of the release up', async () => {
    const installed = await timed('helm install', () => kube(['install', 'agentyard', CHART, '-n', NS, '-f', values(), '--wait', '--timeout', '5m']));
    if (!installed.ok) steps.failed = true;
    expect(installed.ok, installed.out).toBe(true);
    const pods = await node.kubectl('get', 'pods', '-n', NS, '-o', 'jsonpath={range .items[*]}{.metadata.name} {.status.phase}{"\\n"}{end}');
    expect(pods.trim().split('\n').filter((l) => l.endsWith(' Running'))).toHaveLength(3); // the API and two controllers
  });

  it('helm test passes in the cluster', async () => {
    const tested = await timed('helm test', () => kube(['test', 'agentyard', '-n', NS, '--timeout', '3m', '--logs']));
    if (!tested.ok) steps.failed = true;
    expect(tested.ok, tested.out).toBe(true);
    expect(tested.out).toMatch(/all \d+ checks passed/);
  });

  let conversationId = '';
  let sandboxId = '';

  it('a conversation through the real ingress reaches READY; the agent runs a command in the sandbox container and writes a file', async () => {
    llm.push(
      { toolCalls: [{ name: 'terminal', arguments: { command: 'echo node-ok > proof.txt && cat proof.txt && id -u && hostname' } }] },
      { toolCalls: [{ name: 'finish', arguments: { message: 'done' } }] },
    );
    const ready = await timed('conversation READY', async () => {
      const started = await api<StartTask>('POST', '/api/v1/app-conversations', { initial_message: { role: 'user', content: [{ type: 'text', text: 'prove it runs' }], run: true } });
      expect(started.status, JSON.stringify(started.body)).toBe(200);
      let last: StartTask | undefined;
      return eventually(async () => {
        const { body } = await api<(StartTask | null)[]>('GET', `/api/v1/app-conversations/start-tasks?ids=${started.body.id}`);
        last = body[0] ?? undefined;
        if (last?.status === 'ERROR') throw new Error(`start task ERROR: ${last.detail}`);
        return last?.status === 'READY' ? last : undefined;
      }, 'the start task to be READY', 180_000).catch((err: Error) => {
        steps.failed = true;
        throw new Error(`${err.message}; last seen: ${JSON.stringify(last)}`);
      });
    });
    conversationId = ready.app_conversation_id!;
    sandboxId = ready.sandbox_id!;
    const events = await eventually(async () => {
      const { body } = await api<{ items: { kind: string; tool_name?: string; observation?: { content: { text: string }[] } }[] }>('GET', `/api/v1/conversation/${conversationId}/events/search?limit=100`);
      return body.items?.some((e) => e.kind === 'ObservationEvent' && e.tool_name === 'finish') ? body.items : undefined;
    }, 'the finish to reach the API', 120_000);
    const terminal = events.find((e) => e.kind === 'ObservationEvent' && e.tool_name === 'terminal');
    const output = terminal?.observation?.content[0]?.text ?? '';
    expect(output).toContain('node-ok');
    expect(output).toMatch(/\b1000\b/); // the sandbox's uid, not root
    expect(output).toContain(sandboxId); // the Pod's hostname: the command ran in the sandbox container
    // The file is on the sandbox's volume, read through the API server and kubelet (exec).
    expect(await node.kubectl('exec', '-n', SANDBOXES, sandboxId, '--', 'cat', '/workspace/project/proof.txt')).toBe('node-ok\n');
  });

  const sandboxStatus = async (id: string) => (await api<({ status: string } | null)[]>('GET', `/api/v1/sandboxes?id=${id}`)).body[0]?.status;
  const podGone = async (name: string) => core.readNamespacedPod({ name, namespace: SANDBOXES }).then(() => undefined, () => true);

  it('the app holds the events in order: the message, the terminal action and its observation, the finish', async () => {
    const { body } = await api<{ items: { kind: string; source: string; tool_name?: string; timestamp: string }[] }>('GET', `/api/v1/conversation/${conversationId}/events/search?limit=100`);
    const story = body.items.filter((e) => e.kind === 'MessageEvent' || e.tool_name).map((e) => `${e.kind}:${e.tool_name ?? e.source}`);
    expect(story).toEqual(['MessageEvent:user', 'ActionEvent:terminal', 'ObservationEvent:terminal', 'ActionEvent:finish', 'ObservationEvent:finish']);
    const times = body.items.map((e) => Date.parse(e.timestamp));
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  it('pause removes the Pod and keeps the volume; resume brings the same files back', async () => {
    await timed('pause', async () => {
      expect((await api('POST', `/api/v1/sandboxes/${sandboxId}/pause`)).status).toBe(200);
      await eventually(async () => ((await sandboxStatus(sandboxId)) === 'PAUSED' ? true : undefined), 'PAUSED', 120_000);
      await eventually(() => podGone(sandboxId), 'the sandbox Pod to be gone', 120_000);
    });
    const pvc = await core.readNamespacedPersistentVolumeClaim({ name: `${sandboxId}-workspace`, namespace: SANDBOXES });
    expect(pvc.status?.phase).toBe('Bound');
    await timed('resume', async () => {
      expect((await api('POST', `/api/v1/sandboxes/${sandboxId}/resume`)).status).toBe(200);
      await eventually(async () => ((await sandboxStatus(sandboxId)) === 'RUNNING' ? true : undefined), 'RUNNING again', 180_000);
    });
    expect(await node.kubectl('exec', '-n', SANDBOXES, sandboxId, '--', 'cat', '/workspace/project/proof.txt')).toBe('node-ok\n');
  });

  it('kill -9 of the agent server in its container: the kubelet restarts it, the conversation carries on, nothing lost or repeated', async () => {
    type Ev = { id: string; kind: string; tool_name?: string };
    const eventsNow = async () => (await api<{ items: Ev[] }>('GET', `/api/v1/conversation/${conversationId}/events/search?limit=100`)).body.items;
    const before = await eventsNow();
    const restarts = async () => (await core.readNamespacedPod({ name: sandboxId, namespace: SANDBOXES })).status?.containerStatuses?.find((c) => c.name === 'agent-server')?.restartCount ?? 0;
    const restartsBefore = await restarts();
    const containerId = (await node.crictl('ps', '--quiet', '--no-trunc', '--label', `io.kubernetes.pod.name=${sandboxId}`, '--name', 'agent-server')).trim();
    const pids = containerPids(containerId);
    expect(pids.length, `processes of container ${containerId}`).toBeGreaterThan(0);
    for (const pid of pids) process.kill(pid, 'SIGKILL');
    await timed('agent-server container restarted and serving', async () => {
      await eventually(async () => ((await restarts()) > restartsBefore ? true : undefined), 'the kubelet to restart the container', 120_000);
      await eventually(async () => ((await sandboxStatus(sandboxId)) === 'RUNNING' ? true : undefined), 'RUNNING after the restart', 120_000);
    });
    llm.push({ toolCalls: [{ name: 'terminal', arguments: { command: 'cat proof.txt' } }] }, { toolCalls: [{ name: 'finish', arguments: { message: 'still here' } }] });
    const sent = await api('POST', `/api/v1/app-conversations/${conversationId}/send-message`, { role: 'user', content: [{ type: 'text', text: 'are you back?' }] });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const after = await eventually(async () => {
      const items = await eventsNow();
      return items.filter((e) => e.kind === 'ObservationEvent' && e.tool_name === 'finish').length === 2 ? items : undefined;
    }, 'the follow-up to finish after the restart', 180_000);
    // Everything from before the kill is still there, in place, and nothing arrived twice.
    expect(after.slice(0, before.length).map((e) => e.id)).toEqual(before.map((e) => e.id));
    expect(new Set(after.map((e) => e.id)).size).toBe(after.length);
    const terminal = after.slice(before.length).find((e) => e.kind === 'ObservationEvent' && e.tool_name === 'terminal') as { observation?: { content: { text: string }[] } } | undefined;
    expect(terminal?.observation?.content[0]?.text).toContain('node-ok'); // the volume survived the restart
  });

  it('delete runs the archive Pod, removes every child, and the transcript stays readable', async () => {
    await timed('delete', async () => {
      expect((await api('DELETE', `/api/v1/sandboxes/${sandboxId}`)).status).toBe(200);
      await eventually(async () => ((await node.kubectl('get', 'sandboxes.agentyard.dev', '-n', SANDBOXES, '-o', 'name')).includes(`/${sandboxId}\n`) ? undefined : true), 'the Sandbox to be gone', 180_000);
    });
    // The archive Pod ran to completion (kubelet's events say so), then went with the sandbox.
    const events = await node.kubectl('get', 'events', '-n', SANDBOXES, '--field-selector', `involvedObject.name=${sandboxId}-archive`, '-o', 'jsonpath={range .items[*]}{.reason}{"\\n"}{end}');
    expect(events.split('\n')).toEqual(expect.arrayContaining(['Started']));
    for (const kind of ['pod', 'pvc', 'service', 'ingress', 'secret']) {
      expect(await node.kubectl('get', kind, '-n', SANDBOXES, '-l', `agentyard.dev/sandbox=${sandboxId}`, '-o', 'name'), kind).toBe('');
    }
    const { body } = await api<{ items: { kind: string }[] }>('GET', `/api/v1/conversation/${conversationId}/events/search?limit=100`);
    expect(body.items.filter((e) => e.kind === 'ObservationEvent')).toHaveLength(4); // two runs: terminal and finish each
  });

  const startSandbox = async (): Promise<StartTask & { sandbox_id: string; app_conversation_id: string }> => {
    const started = await api<StartTask>('POST', '/api/v1/app-conversations', {});
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    return eventually(async () => {
      const { body } = await api<(StartTask | null)[]>('GET', `/api/v1/app-conversations/start-tasks?ids=${started.body.id}`);
      if (body[0]?.status === 'ERROR') throw new Error(`start task ERROR: ${body[0].detail}`);
      return body[0]?.status === 'READY' ? (body[0] as StartTask & { sandbox_id: string; app_conversation_id: string }) : undefined;
    }, 'a sandbox to be READY', 180_000);
  };
  const podIp = async (namespace: string, selector: string) =>
    (await core.listNamespacedPod({ namespace, labelSelector: selector })).items.find((p) => p.status?.phase === 'Running')?.status?.podIP;
  /** From inside a sandbox container: can it open a TCP connection within 3 s? (bash's /dev/tcp, coreutils' timeout) */
  /** The chart's controller metrics port (metrics.enabled, in the values above). */
  const CONTROLLER_METRICS_PORT = 8080;
  const connects = async (sandbox: string, ip: string, port: number) =>
    node
      .kubectl('exec', '-n', SANDBOXES, sandbox, '--', 'timeout', '3', 'bash', '-c', `exec 3<>/dev/tcp/${ip}/${port}`)
      .then(() => true, () => false);

  let other = '';

  it('NetworkPolicy is enforced: a sandbox reaches DNS and the API, not another sandbox or the controller', async () => {
    // The enforcer runs on every real node: a refusal below is the policy's only while it does.
    const enforcer = await node.networkPolicy();
    expect(enforcer.enforced, enforcer.reason).toBe(true);
    const [a, b] = await timed('two sandboxes READY', () => Promise.all([startSandbox(), startSandbox()]));
    const bIp = await podIp(SANDBOXES, `agentyard.dev/sandbox=${b.sandbox_id}`);
    const apiIp = await podIp(NS, 'app.kubernetes.io/component=api');
    const controllerIp = await podIp(NS, 'app.kubernetes.io/component=controller');
    expect([bIp, apiIp, controllerIp].every(Boolean)).toBe(true);
    // DNS works (CoreDNS on the node), and names the API's Service.
    const resolved = await node.kubectl('exec', '-n', SANDBOXES, a.sandbox_id, '--', 'getent', 'hosts', `agentyard-api.${NS}.svc.cluster.local`);
    expect(resolved).toMatch(/^10\.0\.0\.\d+\s/);
    // The API's port (the event sink path) is open to sandboxes; the other sandbox's agent server and
    // the controller are not, though the API and the controller reach that agent server.
    expect(await connects(a.sandbox_id, apiIp!, 3000)).toBe(true);
    expect(await connects(a.sandbox_id, bIp!, 8000)).toBe(false);
    expect(await connects(a.sandbox_id, controllerIp!, CONTROLLER_METRICS_PORT)).toBe(false);
    // Nor the other sandbox through its Service, nor a host service on the node's address (the
    // scripted model listens there; sandboxes reach the model through the API's gateway only).
    const bService = (await core.listNamespacedService({ namespace: SANDBOXES, labelSelector: `agentyard.dev/sandbox=${b.sandbox_id}` })).items[0]?.spec;
    expect(bService?.clusterIP).toMatch(/^10\.0\.0\.\d+$/);
    const bServicePort = bService!.ports![0]!.port;
    const llmPort = Number(new URL(llm.url).port);
    expect(await connects(a.sandbox_id, bService!.clusterIP!, bServicePort)).toBe(false);
    expect(await connects(a.sandbox_id, NODE_IP, llmPort)).toBe(false);
    // Nor a link-local address (where clouds serve instance metadata): a listener on the host stands
    // in for one. Not 169.254.169.254 itself, which would hide the machine's real one from the host;
    // the address goes with the bridge at the node's cleanup.
    await sh('ip', ['addr', 'add', `${LINK_LOCAL}/32`, 'dev', BRIDGE]);
    const metadata = createServer((socket) => socket.end());
    await new Promise<void>((resolve) => metadata.listen(0, LINK_LOCAL, resolve));
    const metadataPort = (metadata.address() as AddressInfo).port;
    onTestFinished(() => void metadata.close());
    expect(await connects(a.sandbox_id, LINK_LOCAL, metadataPort)).toBe(false);
    // Without the policies the same connections go through: the refusals above are the policies'.
    // (The controller's is its own, in the release namespace: it admits nobody but scrapers.)
    await node.kubectl('delete', 'networkpolicy', '-n', SANDBOXES, '--all');
    await node.kubectl('delete', 'networkpolicy', '-n', NS, '-l', 'app.kubernetes.io/component=controller');
    await eventually(async () => ((await connects(a.sandbox_id, bIp!, 8000)) ? true : undefined), 'the connection once the policy is gone', 30_000);
    expect(await connects(a.sandbox_id, bService!.clusterIP!, bServicePort)).toBe(true);
    expect(await connects(a.sandbox_id, NODE_IP, llmPort)).toBe(true);
    expect(await connects(a.sandbox_id, LINK_LOCAL, metadataPort)).toBe(true);
    await eventually(async () => ((await connects(a.sandbox_id, controllerIp!, CONTROLLER_METRICS_PORT)) ? true : undefined), "the controller's metrics port once its policy is gone", 30_000);
    await kube(['upgrade', 'agentyard', CHART, '-n', NS, '-f', values(), '--reuse-values']).then((r) => expect(r.ok, r.out).toBe(true));
    await eventually(async () => ((await connects(a.sandbox_id, bIp!, 8000)) ? undefined : true), 'the policy back', 30_000);
    await eventually(async () => ((await connects(a.sandbox_id, controllerIp!, CONTROLLER_METRICS_PORT)) ? undefined : true), "the controller's policy back", 30_000);
  });

  it('SIGKILL of the leading controller mid-start: another replica finishes the start', async () => {
    const lease = JSON.parse(await node.kubectl('get', 'lease', '-n', NS, 'agentyard-controller', '-o', 'json')) as { spec: { holderIdentity: string } };
    const leader = (await core.listNamespacedPod({ namespace: NS, labelSelector: 'app.kubernetes.io/component=controller' })).items.find((p) => lease.spec.holderIdentity.startsWith(`${p.metadata!.name}-`));
    expect(leader, lease.spec.holderIdentity).toBeDefined();
    const started = await api<StartTask>('POST', '/api/v1/app-conversations', {});
    // Mid-start: the sandbox exists but is not ready yet.
    await eventually(async () => {
      const { body } = await api<(StartTask | null)[]>('GET', `/api/v1/app-conversations/start-tasks?ids=${started.body.id}`);
      return body[0]?.sandbox_id && body[0].status !== 'READY' ? true : undefined;
    }, 'the start to be under way', 60_000);
    const containerId = (await node.crictl('ps', '--quiet', '--no-trunc', '--label', `io.kubernetes.pod.name=${leader!.metadata!.name}`, '--name', 'controller')).trim();
    const pids = containerPids(containerId);
    expect(pids.length, `processes of container ${containerId}`).toBeGreaterThan(0);
    for (const pid of pids) process.kill(pid, 'SIGKILL');
    await timed('start finished by another replica', () =>
      eventually(async () => {
        const { body } = await api<(StartTask | null)[]>('GET', `/api/v1/app-conversations/start-tasks?ids=${started.body.id}`);
        if (body[0]?.status === 'ERROR') throw new Error(`start task ERROR: ${body[0].detail}`);
        if (body[0]?.status === 'READY') other = body[0].sandbox_id!;
        return body[0]?.status === 'READY' ? true : undefined;
      }, 'the start to be READY after the leader died', 180_000),
    );
    const after = JSON.parse(await node.kubectl('get', 'lease', '-n', NS, 'agentyard-controller', '-o', 'json')) as { spec: { holderIdentity: string } };
    expect(after.spec.holderIdentity).not.toBe(lease.spec.holderIdentity);
  });

  it('kubectl get sandboxes,conversations tells the story', async () => {
    const out = await node.kubectl('get', 'sandboxes,conversations', '-n', SANDBOXES);
    expect(out).toMatch(/NAME\s+STATUS\s+CONVERSATIONS\s+LAST-ACTIVITY\s+AGE/);
    expect(out).toMatch(new RegExp(`sandbox\\.agentyard\\.dev/${other}\\s+RUNNING\\s+1\\s`));
    expect(out).toMatch(/NAME\s+START\s+SANDBOX\s+EXECUTION\s+AGE/);
    // The first conversation (its sandbox deleted, still READY) and the one the second replica finished.
    expect(out).toMatch(new RegExp(`conversation\\.agentyard\\.dev/${conversationId}\\s+READY\\s`));
    expect(out.match(/\sREADY\s/g)?.length).toBeGreaterThanOrEqual(2);
  });

  it('a support bundle holds the real containers\' logs', async () => {
    const bundle = join(dir, 'bundle.tar.gz');
    const made = await agentyard(['support-bundle', '-n', NS, '--output', bundle], { KUBECONFIG: node.kubeconfigPath });
    expect(made.code, made.out).toBe(0);
    await run('tar', ['-xzf', bundle, '-C', dir]);
    const logs = join(dir, 'agentyard-support', NS, 'logs');
    const files = readdirSync(logs);
    expect(files.filter((f) => /^agentyard-controller-.*-controller\.log$/.test(f)).length).toBeGreaterThanOrEqual(2);
    const controllerLogs = files.filter((f) => f.includes('controller')).map((f) => readFileSync(join(logs, f), 'utf8')).join('\n');
    expect(controllerLogs).toContain('"leading"');
  });

  it('helm upgrade to a new image tag rolls the Pods and keeps the conversations', async () => {
    const [repository] = image.ref.split(/:(?=[^:]+$)/);
    const newTag = 'upgraded';
    await node.tagImage(image.ref, `${repository}:${newTag}`);
    const before = (await api<{ items: { id: string }[] }>('GET', '/api/v1/app-conversations/search?limit=100')).body.items.map((c) => c.id).sort();
    expect(before).toContain(conversationId);
    const upgraded = await timed('helm upgrade', () => kube(['upgrade', 'agentyard', CHART, '-n', NS, '-f', values(), '--set', `image.tag=${newTag}`, '--wait', '--timeout', '5m']));
    expect(upgraded.ok, upgraded.out).toBe(true);
    // `--wait` returns once the new Pods are ready; the old ones may still be terminating, so the
    // listing is asked again until only the new tag is left.
    const images = await eventually(async () => {
      const listed = (await node.kubectl('get', 'pods', '-n', NS, '-l', 'app.kubernetes.io/component in (api,controller)', '-o', 'jsonpath={.items[*].spec.containers[0].image}')).split(' ');
      return listed.every((i) => i.endsWith(`:${newTag}`)) ? listed : undefined;
    }, 'only upgraded api and controller Pods', 60_000);
    expect(images.length).toBeGreaterThan(0);
    const after = await eventually(async () => {
      const r = await api<{ items: { id: string }[] }>('GET', '/api/v1/app-conversations/search?limit=100');
      return r.status === 200 ? r.body.items.map((c) => c.id).sort() : undefined;
    }, 'the API after the upgrade', 60_000);
    expect(after).toEqual(before);
  });

  // The chart's pre-delete hook (Job agentyard-uninstall: `agentyard uninstall-cleanup`) deletes the
  // Conversations and Sandboxes while the controller still runs: archives are taken, and each
  // sandbox's Pod, workspace PVC, Service, Ingress and session Secret go with it. The archive PVC goes
  // too because these values set uninstall.deleteArchives (the chart keeps it by default).
  it('helm uninstall leaves nothing of agentyard in the sandbox namespace', async () => {
    const removed = await timed('helm uninstall', () => kube(['uninstall', 'agentyard', '-n', NS, '--wait', '--timeout', '3m']));
    expect(removed.ok, removed.out).toBe(true);
    const left = await eventually(async () => {
      const out = await node.kubectl('get', 'pods,pvc,services,ingresses,networkpolicies,sandboxes,conversations,secrets', '-n', SANDBOXES, '-o', 'name');
      const ours = out.split('\n').filter(Boolean);
      return ours.length === 0 ? ours : undefined;
    }, 'the sandbox namespace to be empty', 60_000).catch(async (err: Error) => {
      throw new Error(`${err.message}\n${await node.kubectl('get', 'all,pvc,ingresses,networkpolicies,sandboxes,conversations,secrets', '-n', SANDBOXES)}`);
    });
    expect(left).toEqual([]);
  });
});
