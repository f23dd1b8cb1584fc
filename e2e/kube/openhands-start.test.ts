// An OpenHands client's start requests, unchanged, against `agentyard api` and `agentyard controller`
// in cluster mode on a real API server (the chart's processes): the same requests the side-by-side
// suite sends to the OpenHands app server and to `agentyard up` (e2e/app-parity/client.ts,
// START_REQUESTS), accepted with the same meaning here: a first message the agent answers; the
// fields its clients set (caller-chosen id, parent, model, plan agent, suffix, trigger, PR numbers,
// public) kept on the Conversation resource and shown in the record; a stream-start into a running
// sandbox; and an LLM profile, stored in a Kubernetes Secret, giving a new conversation its model.
import { mkdtempSync, rmSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, StorageV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConversationKind } from '../../src/api/conversation.ts';
import { SecretKind } from '../../src/api/secret.ts';
import { llmSettingsSecretName } from '../../src/facade/llm-settings.ts';
import { KubeStore } from '../../src/store/kube/kube-store.ts';
import { startScriptedLlm, type ScriptedLlm } from '../../src/testing/scripted-llm/server.ts';
import { START_REQUESTS } from '../app-parity/client.ts';
import { eventually } from '../embedded/harness.ts';
import { apiUrlOf, leading, runClusterApi, runClusterController, type CliProcess, type ClusterPlane } from './cli.ts';
import { kubeBinDir, startTestCluster, type TestCluster } from './cluster.ts';
import { routeTestHostsToLoopback, startHostProxy, type HostProxy } from './host-proxy.ts';
import { NodeAgent } from './node-agent.ts';
import { freePort } from './processes.ts';

const NS = 'agentyard-sandboxes';
const PROVIDER_KEY = 'sk-provider-openhands-start-0123';
const DOMAIN = 'sandboxes.test';
const KEY = 'ay_openhands_start_key';
const hex = (id: string) => id.replaceAll('-', '');

describe.skipIf(!kubeBinDir())("cluster mode: an OpenHands client's start requests, unchanged", () => {
  let cluster: TestCluster;
  let store: KubeStore;
  let agent: NodeAgent;
  let proxy: HostProxy;
  let undoRouting: (() => void) | undefined;
  let llm: ScriptedLlm;
  let api: CliProcess;
  let controller: CliProcess;
  let apiUrl: string;
  const work = mkdtempSync(join(tmpdir(), 'agentyard-openhands-start-'));
  /** The first conversation and its sandbox, which the later starts go into. */
  let first: { conversation: string; sandbox: string };

  beforeAll(async () => {
    let apiPort: number;
    [cluster, llm, apiPort] = await Promise.all([startTestCluster({ controllerManager: false }), startScriptedLlm([], { apiKey: PROVIDER_KEY }), freePort()]);
    const core = cluster.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: NS } } });
    await cluster.kubeConfig.makeApiClient(StorageV1Api).createStorageClass({ body: { metadata: { name: 'standard' }, provisioner: 'kubernetes.io/no-provisioner' } });
    store = new KubeStore(cluster.kubeConfig);
    agent = new NodeAgent(cluster.kubeConfig, NS, work);
    await agent.start();
    proxy = await startHostProxy(DOMAIN, (id) => agent.portOf(id));
    undoRouting = routeTestHostsToLoopback(DOMAIN, proxy.port);
    const plane: ClusterPlane = { kubeconfigPath: cluster.kubeconfigPath, namespace: NS, domain: DOMAIN, proxyPort: proxy.port, apiPort, apiDataDir: join(work, 'api'), apiKey: KEY, llmUrl: llm.url, providerKey: PROVIDER_KEY };
    api = runClusterApi(plane);
    controller = runClusterController(plane);
    [apiUrl] = await Promise.all([apiUrlOf(api), leading(controller)]);
  }, 120_000);

  afterAll(async () => {
    await controller?.stop();
    await api?.stop();
    await agent?.stop();
    await proxy?.close();
    undoRouting?.();
    await llm?.close();
    await cluster?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: any; res: Response }> => {
    const res = await fetch(apiUrl + path, {
      method,
      headers: { authorization: `Bearer ${KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, res };
  };
  const ready = (taskId: string) =>
    eventually(async () => {
      const [t] = (await call('GET', `/api/v1/app-conversations/start-tasks?ids=${taskId}`)).body;
      if (t?.status === 'ERROR') throw new Error(`start failed: ${t.detail}`);
      return t?.status === 'READY' ? t : undefined;
    }, 'the start task to be READY', 90_000, 100);
  const record = async (id: string) => (await call('GET', `/api/v1/app-conversations?ids=${id}`)).body[0];

  it('a first message: READY, and the agent answers it', async () => {
    llm.push({ content: 'Hello back.' });
    const r = await call('POST', '/api/v1/app-conversations', START_REQUESTS.withMessage('Say hello.'));
    expect(r.status).toBe(200);
    const task = await ready(r.body.id);
    first = { conversation: task.app_conversation_id, sandbox: task.sandbox_id };
    const items = await eventually(async () => {
      const page = (await call('GET', `/api/v1/conversation/${first.conversation}/events/search?limit=100`)).body;
      return page.items.some((e: any) => e.kind === 'MessageEvent' && e.source === 'agent') ? page.items : undefined;
    }, "the agent's answer in the app's event log", 60_000, 100);
    // The log opens with the full_state snapshot, then the system prompt, as OpenHands' app log does.
    expect(items[0]).toMatchObject({ kind: 'ConversationStateUpdateEvent', key: 'full_state' });
    expect(items.map((e: any) => e.kind)).toContain('SystemPromptEvent');
    expect(llm.requests.at(-1)!.body).toMatchObject({ stream: true }); // streamed, as OpenHands' app asks
    expect(llm.failures).toEqual([]);
  }, 120_000);

  it("the fields OpenHands clients set: taken unchanged, kept on the Conversation resource, shown in the record", async () => {
    const chosen = randomUUID();
    const r = await call('POST', '/api/v1/app-conversations', START_REQUESTS.clientFields(first.sandbox, chosen, first.conversation));
    expect(r.status).toBe(200);
    const task = await ready(r.body.id);
    expect(hex(task.app_conversation_id)).toBe(hex(chosen));
    const rec = await record(hex(chosen));
    expect(rec).toMatchObject({ llm_model: 'openai/scripted', trigger: 'openhands_api', pr_number: [12, 13], public: true, agent_type: 'plan', sandbox_id: first.sandbox });
    expect(hex(rec.parent_conversation_id)).toBe(hex(first.conversation));
    expect((await record(first.conversation)).sub_conversation_ids.map(hex)).toContain(hex(chosen));
    const conv = (await store.get(ConversationKind, NS, hex(chosen)))!;
    expect(conv.spec).toMatchObject({ llmModel: 'openai/scripted', agentType: 'plan', systemMessageSuffix: 'Answer in French.', parentConversation: hex(first.conversation), sandboxName: first.sandbox });
    // The same id again is taken.
    expect((await call('POST', '/api/v1/app-conversations', START_REQUESTS.clientFields(first.sandbox, chosen, first.conversation))).status).toBe(409);
  }, 120_000);

  it('stream-start into the running sandbox: one JSON array of snapshots, ending READY', async () => {
    const r = await call('POST', '/api/v1/app-conversations/stream-start', START_REQUESTS.inSandbox(first.sandbox));
    expect(r.status).toBe(200);
    expect(r.res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(r.body.at(-1)).toMatchObject({ status: 'READY', sandbox_id: first.sandbox });
    expect(r.body.map((t: any) => t.status)[0]).toBe('WORKING');
  }, 120_000);

  it("an LLM profile is kept in the user's Kubernetes Secret (its key never shown) and gives new conversations its model", async () => {
    const saved = await call('POST', '/api/v1/settings/profiles/fast', { llm: { model: 'openai/scripted-fast', api_key: 'sk-profile-in-a-secret' } });
    expect(saved.status).toBe(201);
    const list = await call('GET', '/api/v1/settings/profiles');
    expect(list.body).toEqual({ profiles: [{ name: 'fast', model: 'openai/scripted-fast', base_url: null, api_key_set: true }], active_profile: null });
    expect(JSON.stringify(list.body)).not.toContain('sk-profile-in-a-secret');
    const users = await call('GET', '/api/v1/users/me');
    const secret = (await store.get(SecretKind, NS, llmSettingsSecretName(users.body.id)))!;
    expect(Object.values(secret.data!).map((v) => Buffer.from(v, 'base64').toString())).toContain('sk-profile-in-a-secret');
    expect((await call('POST', '/api/v1/settings/profiles/fast/activate')).body.model).toBe('openai/scripted-fast');
    const r = await call('POST', '/api/v1/app-conversations', START_REQUESTS.inSandbox(first.sandbox));
    const task = await ready(r.body.id);
    expect((await store.get(ConversationKind, NS, task.app_conversation_id))!.spec.llmModel).toBe('openai/scripted-fast');
  }, 120_000);
});
