// Durability in cluster mode (spec part 4 rule 5): `agentyard api` and `agentyard controller` run
// as real processes against a real API server; each is SIGKILLed while a start task is in a middle
// step and started again, and the start goes on to READY with nothing lost or done twice.
// The start is held deterministically by the test's own cluster parts: in WAITING_FOR_SANDBOX by
// the node agent not starting the sandbox's Pod, in STARTING_CONVERSATION by the host proxy (the
// ingress) holding the agent server's answer to the create, which the agent server did carry out.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, StorageV1Api, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConversationKind } from '../../src/api/conversation.ts';
import { SandboxKind } from '../../src/api/sandbox.ts';
import { KubeStore } from '../../src/store/kube/kube-store.ts';
import { startScriptedLlm, type ScriptedLlm } from '../../src/testing/scripted-llm/server.ts';
import { persistedEvents, userMessage, type ConversationRecord, type EventItem as FlowEvent, type StartTask } from '../embedded/flows.ts';
import { eventually } from '../embedded/harness.ts';
import { apiUrlOf, leading, runClusterApi, runClusterController, type ClusterPlane, type CliProcess } from './cli.ts';
import { kubeBinDir, startTestCluster, type TestCluster } from './cluster.ts';
import { routeTestHostsToLoopback, startHostProxy, type HostProxy } from './host-proxy.ts';
import { NodeAgent } from './node-agent.ts';
import { freePort } from './processes.ts';

const NS = 'agentyard-sandboxes';
const PROVIDER_KEY = 'sk-provider-kube-0123456789';
const DOMAIN = 'sandboxes.test';
const KEY = 'ay_restart_test_key';

type EventItem = FlowEvent & { id: string };
const persisted = persistedEvents;

function textOf(ev: EventItem): string {
  const msg = ev['llm_message'] as { content?: { text?: string }[] } | undefined;
  return (msg?.content ?? []).map((c) => c.text ?? '').join('');
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe.skipIf(!kubeBinDir())('cluster mode: a start survives a SIGKILLed controller or API', () => {
  let cluster: TestCluster;
  let core: CoreV1Api;
  let store: KubeStore;
  let agent: NodeAgent;
  let proxy: HostProxy;
  let undoRouting: (() => void) | undefined;
  let llm: ScriptedLlm;
  let apiPort: number;
  let api: CliProcess;
  let apiUrl: string;
  let controller: CliProcess;
  /** While set, the agent server's answers to POST /api/conversations are held until it resolves. */
  let holdCreate: ReturnType<typeof deferred> | undefined;
  let creates = 0;
  const work = mkdtempSync(join(tmpdir(), 'agentyard-restart-'));

  const plane = (): ClusterPlane => ({
    kubeconfigPath: cluster.kubeconfigPath,
    namespace: NS,
    domain: DOMAIN,
    proxyPort: proxy.port,
    apiPort,
    apiDataDir: join(work, 'api'),
    apiKey: KEY,
    llmUrl: llm.url,
    providerKey: PROVIDER_KEY,
  });
  const startApi = async () => {
    api = runClusterApi(plane());
    apiUrl = await apiUrlOf(api);
  };
  const startController = async () => {
    controller = runClusterController(plane());
    await leading(controller);
  };

  beforeAll(async () => {
    [cluster, llm, apiPort] = await Promise.all([startTestCluster({ controllerManager: false }), startScriptedLlm([], { apiKey: PROVIDER_KEY }), freePort()]);
    core = cluster.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: NS } } });
    await cluster.kubeConfig.makeApiClient(StorageV1Api).createStorageClass({ body: { metadata: { name: 'standard' }, provisioner: 'kubernetes.io/no-provisioner' } });
    store = new KubeStore(cluster.kubeConfig);
    agent = new NodeAgent(cluster.kubeConfig, NS, work);
    await agent.start();
    proxy = await startHostProxy(DOMAIN, (id) => agent.portOf(id), {
      holdAnswer: (req) => {
        if (req.method !== 'POST' || req.url !== '/api/conversations') return undefined;
        creates++;
        return holdCreate?.promise;
      },
    });
    undoRouting = routeTestHostsToLoopback(DOMAIN, proxy.port); // this process reads the agent servers too
    await Promise.all([startApi(), startController()]);
  }, 120_000);

  afterAll(async () => {
    holdCreate?.resolve();
    await controller?.stop();
    await api?.stop();
    await agent?.stop();
    await proxy?.close();
    undoRouting?.();
    await llm?.close();
    await cluster?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(apiUrl + path, {
      method,
      headers: { authorization: `Bearer ${KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  const taskOf = async (id: string) => (await call<(StartTask | null)[]>('GET', `/api/v1/app-conversations/start-tasks?ids=${id}`))[0]!;
  const taskIn = (id: string, status: string) =>
    eventually(async () => {
      const t = await taskOf(id);
      if (t.status === 'ERROR') throw new Error(`start failed: ${t.detail}`);
      return t.status === status ? t : undefined;
    }, `the start task to be ${status}`, 45_000, 100);
  const start = (text: string) => call<StartTask>('POST', '/api/v1/app-conversations', { initial_message: userMessage(text) });
  const boundPod = (name: string) =>
    eventually(async () => {
      const pod = await core.readNamespacedPod({ name, namespace: NS });
      return pod.spec?.nodeName ? pod : undefined;
    }, `Pod ${name} to be bound`, 30_000, 100);

  /** The agent server of a sandbox, read directly (through the ingress) with its session key. */
  const agentServer = async (sandboxId: string) => {
    const secret = await core.readNamespacedSecret({ name: `${sandboxId}-session`, namespace: NS });
    const headers = { 'X-Session-API-Key': Buffer.from(secret.data!.key!, 'base64').toString() };
    const base = `http://${sandboxId}-runtime.${DOMAIN}:${proxy.port}`;
    const get = async <T>(path: string) => (await (await fetch(base + path, { headers })).json()) as T;
    return {
      conversations: async () => (await get<{ items: { id: string; execution_status: string }[] }>('/api/conversations/search')).items,
      events: async (id: string) => (await get<{ items: EventItem[] }>(`/api/conversations/${id}/events/search?limit=100`)).items,
      eventIds: async (id: string) => (await get<{ items: EventItem[] }>(`/api/conversations/${id}/events/search?limit=100`)).items.map((e) => e.id),
    };
  };

  /** Spec part 4 rule 5: the record (not an event) says where the conversation stands now. */
  const recordWhenFinished = (conversationId: string) =>
    eventually(async () => {
      const [rec] = await call<(ConversationRecord | null)[]>('GET', `/api/v1/app-conversations?ids=${conversationId}`);
      return rec?.execution_status === 'finished' ? rec : undefined;
    }, 'the conversation record to show the agent finished', 45_000, 100);

  /** Every event the agent server persisted reaches the API once, in the agent server's order. */
  const expectEventsOnce = async (conversationId: string, sandboxId: string) => {
    const server = await agentServer(sandboxId);
    const [conv] = await server.conversations();
    const expected = await server.eventIds(conv!.id);
    const items = await eventually(async () => {
      const page = await call<{ items: EventItem[] }>('GET', `/api/v1/conversation/${conversationId}/events/search?limit=100`);
      return persisted(page.items).length >= expected.length ? persisted(page.items) : undefined;
    }, 'the API to hold the agent server events', 45_000, 100);
    expect(items.map((e) => e.id)).toEqual(expected);
    return items;
  };

  const expectOneAgentMessage = (items: EventItem[], text: string, reply: string, callsBefore: number) => {
    expect(items.filter((e) => e.kind === 'MessageEvent' && e.source === 'user').map(textOf)).toEqual([text]);
    expect(items.filter((e) => e.kind === 'MessageEvent' && e.source === 'agent').map(textOf)).toEqual([reply]);
    const calls = llm.requests.slice(callsBefore);
    expect(calls).toHaveLength(1); // the model saw the message once, in one call
    expect(JSON.stringify(calls[0]!.messages).split(text).length - 1).toBe(1);
    expect(llm.failures).toEqual([]);
  };

  const podsOf = async (): Promise<V1Pod[]> => (await core.listNamespacedPod({ namespace: NS })).items;

  it('controller SIGKILLed in WAITING_FOR_SANDBOX, then in STARTING_CONVERSATION: READY, the message reaches the model once, one Sandbox and one Pod', async () => {
    const reply = 'Done after two controller restarts.';
    llm.push({ content: reply });
    const callsBefore = llm.requests.length;
    const sandboxesBefore = (await store.list(SandboxKind, NS)).items.map((s) => s.metadata.name);
    const podsBefore = (await podsOf()).map((p) => p.metadata!.name);
    const text = 'please say done, once (controller)';

    agent.hold(true);
    const task = await start(text);
    const waiting = await taskIn(task.id, 'WAITING_FOR_SANDBOX');
    const sandboxId = waiting.sandbox_id!;
    const pod = await boundPod(sandboxId);

    await controller.stop('SIGKILL');
    await startController();
    expect((await taskOf(task.id)).status).toBe('WAITING_FOR_SANDBOX'); // nothing can advance while the Pod is held

    // The Pod starts; the new controller takes the start on, up to the agent server's create,
    // which is carried out but whose answer is held: the controller never learns it succeeded.
    holdCreate = deferred();
    agent.hold(false);
    await eventually(async () => (creates === 1 ? true : undefined), 'the agent server to create the conversation', 45_000, 100);
    expect((await taskOf(task.id)).status).toBe('STARTING_CONVERSATION');

    await controller.stop('SIGKILL');
    await startController();
    expect((await taskOf(task.id)).status).toBe('STARTING_CONVERSATION');
    holdCreate.resolve();
    holdCreate = undefined;

    const ready = await taskIn(task.id, 'READY');
    expect(ready.sandbox_id).toBe(sandboxId);
    const conversationId = ready.app_conversation_id!;
    const record = await recordWhenFinished(conversationId);
    expect(record.sandbox_status).toBe('RUNNING');

    expect(creates).toBe(2); // the third controller asked again, not knowing the second's create had succeeded
    expect(await (await agentServer(sandboxId)).conversations()).toHaveLength(1); // created once on the agent server
    expectOneAgentMessage(await expectEventsOnce(conversationId, sandboxId), text, reply, callsBefore);

    // One Sandbox and one Pod for the start, the very Pod that was held before the first kill.
    const sandboxesNow = (await store.list(SandboxKind, NS)).items.map((s) => s.metadata.name);
    expect(sandboxesNow.filter((n) => !sandboxesBefore.includes(n))).toEqual([sandboxId]);
    const podsNow = (await podsOf()).filter((p) => !podsBefore.includes(p.metadata!.name!));
    expect(podsNow.map((p) => [p.metadata!.name, p.metadata!.uid])).toEqual([[sandboxId, pod.metadata!.uid]]);
  });

  it('API SIGKILLed mid-start and again mid-run: the task stays readable and READY; events pushed while it was down arrive once, in order', async () => {
    // The model is reached through the API's gateway, so the agent can only call it while an API
    // runs. Its first answer runs two commands, each waiting for a file the test creates: the second
    // kill falls between them, so the first one's events are made and pushed while the API is down.
    const reply = 'Done after the API came back twice.';
    const waitFor = (file: string, say: string) => ({ name: 'terminal', arguments: { command: `until [ -e ${file} ]; do sleep 0.1; done; echo ${say}` } });
    llm.push({ toolCalls: [waitFor('gate-1', 'first-done'), waitFor('gate-2', 'second-done')] }, { content: reply });
    const callsBefore = llm.requests.length;
    const text = 'please say done, once (API)';

    agent.hold(true);
    const task = await start(text);
    const sandboxId = (await taskIn(task.id, 'WAITING_FOR_SANDBOX')).sandbox_id!;
    await api.stop('SIGKILL');

    // The controller finishes the start without the API; the agent begins, and its model call
    // (retried, LLM_NUM_RETRIES) gets through once the API, and with it the gateway, is back.
    agent.hold(false);
    const conv = await eventually(async () => {
      const c = (await store.list(ConversationKind, NS)).items.find((c) => c.status?.sandboxName === sandboxId);
      return c?.status?.startTask?.status === 'READY' ? c : undefined;
    }, 'the controller to finish the start', 45_000, 100);
    const conversationId = conv.metadata.name;
    await startApi();
    expect(await taskOf(task.id)).toMatchObject({ status: 'READY', app_conversation_id: conversationId, sandbox_id: sandboxId });
    await eventually(async () => (llm.requests.length > callsBefore ? true : undefined), 'the agent to reach the model through the restarted API', 60_000, 100);

    // What the agent server holds so far (the user's message, the two actions) reaches the API.
    const server = await agentServer(sandboxId);
    const agentId = (await server.conversations())[0]!.id;
    const kinds = async () => (await server.events(agentId)).map((e) => e.kind);
    await eventually(async () => ((await kinds()).filter((k) => k === 'ActionEvent').length === 2 ? true : undefined), 'both actions', 45_000, 100);
    const apiEventIds = async () => persisted((await call<{ items: EventItem[] }>('GET', `/api/v1/conversation/${conversationId}/events/search?limit=100`)).items).map((e) => e.id);
    const early = await eventually(async () => {
      const [expected, got] = [await server.eventIds(agentId), await apiEventIds()];
      return expected.length > 0 && JSON.stringify(got) === JSON.stringify(expected) ? got : undefined;
    }, 'the events so far to reach the restarted API', 45_000, 100);

    // Killed again; the first command ends meanwhile, its observation pushed with retries.
    await api.stop('SIGKILL');
    const project = join(agent.volumeDir(`${sandboxId}-workspace`), 'project');
    writeFileSync(join(project, 'gate-1'), '');
    await eventually(async () => ((await kinds()).includes('ObservationEvent') ? true : undefined), 'the first observation while the API is down', 45_000, 100);
    expect((await server.eventIds(agentId)).length).toBeGreaterThan(early.length);

    await startApi();
    writeFileSync(join(project, 'gate-2'), '');
    const record = await recordWhenFinished(conversationId);
    expect(record.sandbox_status).toBe('RUNNING');
    const items = await expectEventsOnce(conversationId, sandboxId);
    expect(items.slice(0, early.length).map((e) => e.id)).toEqual(early);
    expect(items.filter((e) => e.kind === 'MessageEvent' && e.source === 'user').map(textOf)).toEqual([text]);
    expect(items.filter((e) => e.kind === 'MessageEvent' && e.source === 'agent').map(textOf)).toEqual([reply]);
    const calls = llm.requests.slice(callsBefore);
    expect(calls).toHaveLength(2); // the answer with both commands, then the reply
    expect(JSON.stringify(calls[0]!.messages).split(text).length - 1).toBe(1);
    expect(llm.failures).toEqual([]);
  });
});
