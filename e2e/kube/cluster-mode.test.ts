// Cluster mode on a real API server: Sandbox and Conversation custom resources reconciled by the
// shared controller into Pods, PVCs, Services and Ingresses (KubernetesRuntime), Pods run by the
// test node agent, sandboxes reached through their `<id>-runtime.<base>` host, and a conversation
// driven end to end through the REST API backed by KubeStore.
import { mkdtempSync, rmSync, readFileSync, existsSync, readdirSync } from 'node:fs';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, NetworkingV1Api, StorageV1Api } from '@kubernetes/client-node';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { ConversationKind } from '../../src/api/conversation.ts';
import { API_VERSION } from '../../src/api/meta.ts';
import { modelGatewayUrl } from '../../src/api/model-gateway.ts';
import { SandboxKind, type Sandbox } from '../../src/api/sandbox.ts';
import { systemClock } from '../../src/controller/clock.ts';
import { createController } from '../../src/controller/embedded.ts';
import type { Controller } from '../../src/controller/manager.ts';
import { SqliteAppStore, startApiServer, type ApiServer } from '../../src/facade/index.ts';
import { loadRuntimeAddressing } from '../../src/runtime/kubernetes/addressing.ts';
import { KubernetesRuntime } from '../../src/runtime/kubernetes/kubernetes-runtime.ts';
import { loadSandboxPodSettings } from '../../src/runtime/kubernetes/pod-settings.ts';
import { KubeStore } from '../../src/store/kube/kube-store.ts';
import { startScriptedLlm, type ScriptedLlm } from '../../src/testing/scripted-llm/server.ts';
import { eventually } from '../embedded/harness.ts';
import { createLogger } from '../../src/util/log.ts';
import { kubeEventRecorder } from '../../src/controller/kube-events.ts';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { kubeBinDir, startTestCluster, type TestCluster } from './cluster.ts';
import { routeTestHostsToLoopback, startHostProxy, type HostProxy } from './host-proxy.ts';
import { NodeAgent, TEST_IMAGE } from './node-agent.ts';

const NS = 'agentyard-sandboxes';
/** As the chart passes sandbox.resources and sandbox.imagePullSecrets to the controller. */
const POD_SETTINGS = loadSandboxPodSettings({
  AGENTYARD_SANDBOX_RESOURCES: JSON.stringify({ requests: { cpu: '50m', memory: '64Mi' }, limits: { cpu: 1, memory: '1Gi' } }),
  AGENTYARD_SANDBOX_IMAGE_PULL_SECRETS: 'sandbox-registry',
});
const DOMAIN = 'sandboxes.test';
const PROVIDER_KEY = 'sk-provider-cluster-0123456789';

describe.skipIf(!kubeBinDir())('cluster mode on a real API server', () => {
  let cluster: TestCluster;
  let agent: NodeAgent;
  let proxy: HostProxy;
  let undoRouting: () => void;
  let store: KubeStore;
  let controller: Controller;
  let api: ApiServer;
  let db: SqliteAppStore;
  let llm: ScriptedLlm;
  let apiKey: string;
  let core: CoreV1Api;
  const work = mkdtempSync(join(tmpdir(), 'agentyard-cluster-'));
  /** The conversation the REST API test started (sandbox and id), for the live-stream test after it. */
  let restConversation: { id: string; sandbox: string } | undefined;

  beforeAll(async () => {
    cluster = await startTestCluster();
    core = cluster.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: NS } } });
    await cluster.kubeConfig.makeApiClient(StorageV1Api).createStorageClass({ body: { metadata: { name: 'standard' }, provisioner: 'kubernetes.io/no-provisioner' } });
    agent = new NodeAgent(cluster.kubeConfig, NS, work);
    await agent.start();
    proxy = await startHostProxy(DOMAIN, (id) => agent.portOf(id));
    undoRouting = routeTestHostsToLoopback(DOMAIN, proxy.port);
    llm = await startScriptedLlm([], { apiKey: PROVIDER_KEY });
    store = new KubeStore(cluster.kubeConfig);
    db = new SqliteAppStore(join(work, 'app.db'));
    const user = await db.createUser('alice', 'alice');
    apiKey = await db.createApiKey(user.id);
    // The model gateway holds the provider key; sandbox Pods get only their own model token.
    api = await startApiServer({ store, db, clock: systemClock, namespace: NS, settings: { capacity: 10 }, port: 0, host: '127.0.0.1', modelUpstream: { model: 'openai/scripted', baseUrl: llm.url, apiKey: PROVIDER_KEY } });
    const addressing = loadRuntimeAddressing({ RUNTIME_BASE_URL: `${DOMAIN}:${proxy.port}` });
    const runtime = new KubernetesRuntime(cluster.kubeConfig, { namespace: NS, image: TEST_IMAGE, storageClass: 'standard', addressing, sinkBaseUrl: api.url, llm: { model: 'openai/scripted', gatewayUrl: modelGatewayUrl(api.url) }, ...POD_SETTINGS });
    await runtime.checkStorageClass();
    controller = createController({ store, runtime, clock: systemClock, settings: { idleTimeMs: 3_600_000, deletionTimeMs: 3_600_000, capacity: 10 }, namespace: NS, log: createLogger('cluster-controller', process.env.AGENTYARD_TEST_LOG ?? 'silent'), recorder: kubeEventRecorder(cluster.kubeConfig, 'agentyard-controller') });
    await controller.start();
  }, 120_000);

  afterAll(async () => {
    await controller?.stop();
    await api?.close();
    await agent?.stop();
    await proxy?.close();
    undoRouting?.();
    await llm?.close();
    db?.close();
    await cluster?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  const sandboxCr = (name: string, spec: Partial<Sandbox['spec']> = {}): Sandbox => ({ apiVersion: API_VERSION, kind: 'Sandbox', metadata: { name, namespace: NS }, spec: { paused: false, ...spec } });
  const phase = async (name: string) => (await store.get(SandboxKind, NS, name))?.status?.phase;

  it('a kubectl-applied Sandbox becomes a running Pod with a PVC, Service and Ingress host; pause keeps the PVC; delete removes all', async () => {
    await store.create(SandboxKind, sandboxCr('kubectl-sb'));
    await store.create(SandboxKind, sandboxCr('0digit-first', { resources: { memory: '512Mi' } })); // ids may start with a digit; Service names may not
    await eventually(async () => ((await phase('kubectl-sb')) === 'RUNNING' ? true : undefined), 'RUNNING', 60_000);
    await eventually(async () => ((await phase('0digit-first')) === 'RUNNING' ? true : undefined), 'RUNNING with a leading digit', 60_000);
    // A sandbox's own memory replaces the installation's request and limit.
    const own = await core.readNamespacedPod({ name: '0digit-first', namespace: NS });
    expect(own.spec?.containers[0]?.resources).toEqual({ requests: { cpu: '50m', memory: '512Mi' }, limits: { cpu: '1', memory: '512Mi' } });
    await store.delete(SandboxKind, NS, '0digit-first');
    const sb = (await store.get(SandboxKind, NS, 'kubectl-sb'))!;
    expect(sb.status?.url).toBe(`http://kubectl-sb-runtime.${DOMAIN}:${proxy.port}`);
    expect(sb.status?.internalUrl).toBe(`http://sandbox-kubectl-sb.${NS}.svc:80`);
    expect(sb.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True', observedGeneration: sb.metadata.generation });

    const pod = await core.readNamespacedPod({ name: 'kubectl-sb', namespace: NS });
    expect(pod.spec?.automountServiceAccountToken).toBe(false);
    expect(pod.spec?.securityContext?.runAsNonRoot).toBe(true);
    // The installation's sandbox resources and pull secrets, as the API server stored them.
    expect(pod.spec?.containers[0]?.resources).toEqual({ requests: { cpu: '50m', memory: '64Mi' }, limits: { cpu: '1', memory: '1Gi' } });
    expect(pod.spec?.imagePullSecrets).toEqual([{ name: 'sandbox-registry' }]);
    expect(JSON.stringify(pod.spec?.containers[0]?.env)).not.toMatch(/"value":"[A-Za-z0-9_-]{40,}"/); // keys by secretKeyRef only
    const ingress = await cluster.kubeConfig.makeApiClient(NetworkingV1Api).readNamespacedIngress({ name: 'kubectl-sb', namespace: NS });
    expect(ingress.spec?.rules?.[0]?.host).toBe(`kubectl-sb-runtime.${DOMAIN}`);

    // The agent server answers on its own host, with the session key only.
    const key = Buffer.from((await core.readNamespacedSecret({ name: 'kubectl-sb-session', namespace: NS })).data!.key!, 'base64').toString();
    expect((await fetch(`${sb.status!.url}/api/conversations/search`)).status).toBe(401);
    expect((await fetch(`${sb.status!.url}/api/conversations/search`, { headers: { 'x-session-api-key': key } })).status).toBe(200);
    // Its model token (from the same Secret, as the Pod gets it) works at the gateway until the sandbox is deleted.
    const token = Buffer.from((await core.readNamespacedSecret({ name: 'kubectl-sb-session', namespace: NS })).data!['model-token']!, 'base64').toString();
    const chat = () =>
      fetch(`${modelGatewayUrl(api.url)}/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'scripted', messages: [{ role: 'user', content: 'hi' }] }) });
    llm.push({ content: 'hello' });
    expect((await chat()).status).toBe(200);

    // Pause: the Pod goes, the PVC stays; resume brings the Pod back.
    await store.update(SandboxKind, { ...sb, spec: { ...sb.spec, paused: true } });
    await eventually(async () => ((await phase('kubectl-sb')) === 'PAUSED' ? true : undefined), 'PAUSED', 60_000);
    await eventually(async () => (await core.readNamespacedPod({ name: 'kubectl-sb', namespace: NS }).then(() => undefined, () => true)), 'the Pod to be deleted', 60_000);
    await core.readNamespacedPersistentVolumeClaim({ name: 'kubectl-sb-workspace', namespace: NS });
    const paused = (await store.get(SandboxKind, NS, 'kubectl-sb'))!;
    await store.update(SandboxKind, { ...paused, spec: { ...paused.spec, paused: false } });
    await eventually(async () => ((await phase('kubectl-sb')) === 'RUNNING' ? true : undefined), 'RUNNING again', 60_000);

    await store.delete(SandboxKind, NS, 'kubectl-sb');
    await eventually(async () => ((await store.get(SandboxKind, NS, 'kubectl-sb')) ? undefined : true), 'the Sandbox to be gone', 60_000);
    expect((await chat()).status).toBe(401);
    // An internal archive of the workspace was taken first, onto the archive volume.
    expect(readdirSync(agent.volumeDir('agentyard-archive')).some((f) => f.startsWith('kubectl-sb-') && f.endsWith('.tar.gz'))).toBe(true);
    // Deleted; the pvc-protection finalizer would be lifted by a controller this test cluster does not run.
    const pvc = await core.readNamespacedPersistentVolumeClaim({ name: 'kubectl-sb-workspace', namespace: NS }).catch(() => undefined);
    expect(pvc === undefined || pvc.metadata?.deletionTimestamp !== undefined).toBe(true);
    await expect(core.readNamespacedService({ name: 'sandbox-kubectl-sb', namespace: NS })).rejects.toThrow();
  });

  it('a killed agent-server container is noticed through the Pod watch within seconds, counted, and RUNNING again on its volume', async () => {
    await store.create(SandboxKind, sandboxCr('dies'));
    await eventually(async () => ((await phase('dies')) === 'RUNNING' ? true : undefined), 'RUNNING', 60_000);
    const t0 = Date.now();
    process.kill(agent.pidOf('dies')!, 'SIGKILL');
    // Noticed at all shows the watch: nothing else would look before the idle deadline, an hour here.
    await eventually(async () => ((await phase('dies')) !== 'RUNNING' ? true : undefined), 'noticed', 30_000, 20);
    const noticed = Date.now() - t0;
    await eventually(async () => ((await phase('dies')) === 'RUNNING' ? true : undefined), 'RUNNING again', 60_000, 20);
    const back = Date.now() - t0;
    console.log(`cluster, agent-server container kill -9: noticed after ${noticed} ms, RUNNING again after ${back} ms`);
    const sb = (await store.get(SandboxKind, NS, 'dies'))!;
    expect(sb.status).toMatchObject({ restartCount: 1, lastDeath: { reason: 'Error', instance: expect.stringMatching(/^pod /), ordinal: 1 } });
    expect(sb.status?.lastDeath?.message).toMatch(/signal 9/);
    await store.delete(SandboxKind, NS, 'dies');
  });

  it('an image that cannot be pulled turns the sandbox ERROR with the reason in a condition', async () => {
    await store.create(SandboxKind, sandboxCr('bad-image', { image: 'example.invalid/nope:1' }));
    await eventually(async () => ((await phase('bad-image')) === 'ERROR' ? true : undefined), 'ERROR', 60_000);
    const sb = (await store.get(SandboxKind, NS, 'bad-image'))!;
    expect(sb.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'ImagePullBackOff' });
  });

  it('a conversation started through the REST API runs the agent in a Pod; its events are readable through the API', async () => {
    llm.push({ toolCalls: [{ name: 'terminal', arguments: { command: 'echo cluster-ok > proof.txt && cat proof.txt && echo "token: $DEPLOY_TOKEN"' } }] }, { toolCalls: [{ name: 'finish', arguments: { message: 'done' } }] });
    const callsBefore = llm.requests.length;
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(api.url + path, { method, headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
      return (await res.json()) as any;
    };
    const task = await call('POST', '/api/v1/app-conversations', {
      initial_message: { role: 'user', content: [{ type: 'text', text: 'prove it' }], run: true },
      secrets: { DEPLOY_TOKEN: 'tok-cluster-0123456789' },
    });
    // Per-conversation secrets become a Kubernetes Secret; responses only ever show them masked.
    expect(JSON.stringify(task)).not.toContain('tok-cluster-0123456789');
    let last: unknown;
    const ready = await eventually(async () => {
      const [t] = await call('GET', `/api/v1/app-conversations/start-tasks?ids=${task.id}`);
      last = { task: t, sandbox: t?.sandbox_id ? (await store.get(SandboxKind, NS, t.sandbox_id))?.status : undefined };
      if (t?.status === 'ERROR') throw new Error(t.detail);
      return t?.status === 'READY' ? t : undefined;
    }, 'READY', 90_000).catch((err: Error) => {
      throw new Error(`${err.message}; last seen: ${JSON.stringify(last)}`);
    });
    const conv = (await store.get(ConversationKind, NS, ready.app_conversation_id))!;
    expect(conv.status?.sandboxName).toBe(ready.sandbox_id);
    restConversation = { id: ready.app_conversation_id, sandbox: ready.sandbox_id };
    // The controller started it through the sandbox's Service, never through the public ingress host;
    // clients still get the public host.
    const creates = proxy.requests.filter((r) => r.method === 'POST' && r.path === '/api/conversations');
    expect(creates.map((r) => r.host)).toEqual([`sandbox-${ready.sandbox_id}.${NS}.svc`]);
    expect(ready.agent_server_url).toBe(`http://${ready.sandbox_id}-runtime.${DOMAIN}:${proxy.port}`);
    const secret = await core.readNamespacedSecret({ name: conv.spec.secretsRef!, namespace: NS });
    expect(Buffer.from(secret.data!.DEPLOY_TOKEN!, 'base64').toString()).toBe('tok-cluster-0123456789');
    expect(JSON.stringify(conv)).not.toContain('tok-cluster-0123456789');
    const events = await eventually(async () => {
      const page = await call('GET', `/api/v1/conversation/${ready.app_conversation_id}/events/search`);
      return page.items?.some((e: { kind: string; tool_name?: string }) => e.kind === 'ObservationEvent' && e.tool_name === 'finish') ? page.items : undefined;
    }, 'the finish to reach the API', 90_000);
    expect(JSON.stringify(events)).not.toContain('tok-cluster-0123456789');
    const obs = events.find((e: { kind: string }) => e.kind === 'ObservationEvent');
    expect(obs.observation.content[0].text).toContain('cluster-ok');
    expect(obs.observation.content[0].text).toContain('token: <secret-hidden>'); // there before the first action, and masked
    const volume = agent.volumeDir(`${ready.sandbox_id}-workspace`);
    expect(existsSync(join(volume, 'project', 'proof.txt')) && readFileSync(join(volume, 'project', 'proof.txt'), 'utf8')).toBe('cluster-ok\n');

    // The model was reached through the gateway: the provider saw its own key (it refuses any other),
    // the Pod has none, and the usage is recorded for the conversation's owner.
    const calls = llm.requests.length - callsBefore;
    expect(calls).toBe(2);
    const pod = await core.readNamespacedPod({ name: ready.sandbox_id, namespace: NS });
    const env = pod.spec!.containers[0]!.env!;
    expect(env.find((e) => e.name === 'LLM_BASE_URL')?.value).toBe(modelGatewayUrl(api.url));
    expect(env.find((e) => e.name === 'LLM_API_KEY')?.valueFrom?.secretKeyRef).toEqual({ name: `${ready.sandbox_id}-session`, key: 'model-token', optional: true }); // optional: warm-pool members get theirs at claim
    expect(JSON.stringify(pod)).not.toContain(PROVIDER_KEY);
    const usage = await call('GET', '/api/v1/usage');
    expect(usage.total.calls).toBe(calls);
    expect(usage.by_conversation).toEqual([expect.objectContaining({ conversation_id: ready.app_conversation_id, calls })]);
  });

  it("the web app's live stream goes through the facade's relay, which dials the sandbox's Service", async () => {
    const { id, sandbox } = restConversation ?? expect.fail('the REST API conversation test did not run');
    type Frame = { id: string; kind: string; key?: string; tool_name?: string; llm_message?: { role: string } };
    const frames: Frame[] = [];
    const ws = new WebSocket(`${api.url.replace('http', 'ws')}/api/v1/conversation/${id}/events/socket?resend_mode=all`);
    const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
    ws.on('open', () => ws.send(JSON.stringify({ type: 'auth', api_key: apiKey })));
    ws.on('message', (data) => frames.push(JSON.parse(data.toString()) as Frame));
    const stored = () => frames.filter((f) => !(f.kind === 'ConversationStateUpdateEvent' && f.key === 'full_state'));
    await eventually(async () => stored().some((f) => f.kind === 'ObservationEvent' && f.tool_name === 'finish') || undefined, 'the replay through the relay', 30_000);
    // The replay is the app's event log, in order, each event once.
    const log = await (await fetch(`${api.url}/api/v1/conversation/${id}/events/search?limit=100`, { headers: { authorization: `Bearer ${apiKey}` } })).json() as { items: { id: string }[] };
    // (The log opens with the full_state snapshot the agent server pushed at seq 0: a state frame too.)
    const logged = (log.items as Frame[]).filter((e) => !(e.kind === 'ConversationStateUpdateEvent' && e.key === 'full_state'));
    expect(stored().map((f) => f.id).slice(0, logged.length)).toEqual(logged.map((e) => e.id));

    // A follow-up's events arrive live over the same socket.
    llm.push({ content: 'live in the cluster', toolCalls: [{ name: 'finish', arguments: { message: 'live' } }] });
    const sent = await fetch(`${api.url}/api/v1/app-conversations/${id}/send-message`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ role: 'user', content: [{ type: 'text', text: 'still there?' }], run: true }) });
    expect(sent.status).toBe(200);
    await eventually(async () => stored().filter((f) => f.kind === 'ObservationEvent' && f.tool_name === 'finish').length === 2 || undefined, 'the live events through the relay', 60_000);
    const ids = stored().map((f) => f.id);
    expect(new Set(ids).size).toBe(ids.length);
    ws.close();
    await closed;
    // The relay reached the agent server by its Service name, never by the public ingress host.
    const upgrades = proxy.requests.filter((r) => r.method === 'GET upgrade' && r.path.startsWith(`/sockets/events/${id}`));
    expect(upgrades.length).toBeGreaterThan(0);
    expect(new Set(upgrades.map((r) => r.host))).toEqual(new Set([`sandbox-${sandbox}.${NS}.svc`]));

    // And the app itself, in Chromium, shows the transcript live from the facade alone.
    if (!existsSync('/usr/bin/chromium')) return;
    const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--no-first-run'] });
    try {
      const page = await browser.newPage();
      await page.addInitScript({ content: `sessionStorage.setItem('agentyard.apiKey', ${JSON.stringify(apiKey)})` });
      await page.goto(`${api.url}/#/c/${id}`);
      await eventually(async () => (await page.textContent('#feed-state')) === 'live' || undefined, 'the app to go live', 30_000);
      await eventually(async () => (await page.textContent('#transcript'))?.includes('live in the cluster') || undefined, 'the transcript in the app', 30_000);
      expect(await page.locator('.result.observation').allTextContents()).toEqual(expect.arrayContaining([expect.stringContaining('cluster-ok')]));
    } finally {
      await browser.close();
    }
  });

  it('kubectl get shows the printer columns: STATUS, CONVERSATIONS, LAST-ACTIVITY for sandboxes; start, sandbox, execution for conversations', async () => {
    // What `kubectl get sandboxes` / `kubectl get conv` ask the API server for: a Table.
    const table = async (plural: string) => {
      const url = new URL(`${cluster.server}/apis/agentyard.dev/v1alpha1/namespaces/${NS}/${plural}`);
      const opts: RequestOptions = { hostname: url.hostname, port: url.port, path: url.pathname, headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } };
      await cluster.kubeConfig.applyToHTTPSOptions(opts);
      return new Promise<{ columnDefinitions: { name: string }[]; rows: { cells: unknown[] }[] }>((resolve, reject) => {
        httpsRequest(opts, (res) => {
          let body = '';
          res.on('data', (c) => (body += c));
          res.on('end', () => resolve(JSON.parse(body)));
        })
          .on('error', reject)
          .end();
      });
    };
    const sandboxes = await table('sandboxes');
    expect(sandboxes.columnDefinitions.map((c) => c.name)).toEqual(['Name', 'Status', 'Conversations', 'Last-Activity', 'URL', 'Age']);
    await eventually(async () => ((await table('sandboxes')).rows.some((r) => r.cells[1] === 'RUNNING' && r.cells[2] === 1) ? true : undefined), 'a RUNNING row with one conversation');
    const conversations = await table('conversations');
    expect(conversations.columnDefinitions.map((c) => c.name)).toEqual(['Name', 'Start', 'Sandbox', 'Execution', 'Owner', 'Age']);
    // The execution status arrives from the agent server a moment after its last event.
    await eventually(async () => ((await table('conversations')).rows.some((r) => r.cells[1] === 'READY' && r.cells[3] === 'finished') ? true : undefined), 'a READY, finished row');
  });

  it('works with kubectl as people use it: apply the CRDs and the examples, get, describe', async () => {
    const kubectl = async (...args: string[]) =>
      (await promisify(execFile)(join(kubeBinDir()!, 'kubectl'), ['--kubeconfig', cluster.kubeconfigPath, ...args], { cwd: join(import.meta.dirname, '../..') })).stdout;
    expect(await kubectl('apply', '-f', 'crds/')).toMatch(/sandboxes\.agentyard\.dev (unchanged|configured)/);
    llm.push(
      { toolCalls: [{ name: 'terminal', arguments: { command: 'echo "hello from kubectl" > hello.txt' } }] },
      { toolCalls: [{ name: 'finish', arguments: { message: 'hello.txt written' } }] },
    );
    await kubectl('apply', '-n', NS, '-f', 'examples/sandbox.yaml');
    await eventually(async () => ((await kubectl('get', 'sb', 'example', '-n', NS, '-o', 'jsonpath={.status.phase}')) === 'RUNNING' ? true : undefined), 'kubectl: RUNNING', 60_000);
    await kubectl('apply', '-n', NS, '-f', 'examples/conversation.yaml');
    const conv = await eventually(async () => {
      const out = await kubectl('get', 'conv', '-n', NS, 'example-conversation');
      return /READY\s+example\s+finished/.test(out) ? out : undefined;
    }, 'kubectl get conv: READY and finished', 90_000);
    expect(conv).toMatch(/NAME\s+START\s+SANDBOX\s+EXECUTION\s+AGE/);
    const sandboxes = await kubectl('get', 'sandboxes', '-n', NS);
    expect(sandboxes).toMatch(/NAME\s+STATUS\s+CONVERSATIONS\s+LAST-ACTIVITY\s+AGE/);
    expect(sandboxes).toMatch(/example\s+RUNNING\s+1\s/);
    const described = await kubectl('describe', 'sandbox', 'example', '-n', NS);
    expect(described).toMatch(/Conditions:[\s\S]*Reason:\s+Running\s+Status:\s+True\s+Type:\s+Ready/);
    expect(described).toMatch(/Events:[\s\S]*Normal\s+Running\s/);
    expect(await kubectl('describe', 'conversation', 'example-conversation', '-n', NS)).toMatch(/Normal\s+Ready\s/);
    // The agent really ran in the sandbox's workspace, and its events reached the API.
    expect(readFileSync(join(agent.volumeDir('example-workspace'), 'project', 'hello.txt'), 'utf8')).toBe('hello from kubectl\n');
    expect(await db.events.count('example-conversation', {})).toBeGreaterThan(3);
  });
});
