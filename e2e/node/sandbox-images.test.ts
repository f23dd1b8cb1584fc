// Sandbox images on a REAL node (node.ts): the sandbox image is the user's, the agent server is
// brought in by the Pod's init container, and the control plane reaches it through the sandbox's
// Service. The chart installed with Helm from this checkout's image; conversations started through
// the API behind the real ingress, and through kubectl on two base images that hold no agentyard:
// the debootstrapped Debian (no Node at all) and the Node 24 image (a Node of its own on the PATH).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SandboxKind } from '../../src/api/sandbox.ts';
import { KubeStore } from '../../src/store/kube/kube-store.ts';
import { startScriptedLlm, type ScriptedLlm } from '../../src/testing/scripted-llm/server.ts';
import { eventually } from '../embedded/harness.ts';
import { CHART, helm, writeValues } from '../helm/helm.ts';
import { NODE_IP } from './host.ts';
import { agentyardImage, imageRef, realNodeTools, routeDomainToNode, startRealNode, type RealNode } from './node.ts';
import { Steps } from './steps.ts';
import { nodeChartValues } from './release.ts';

const tools = realNodeTools();
const NS = 'agentyard';
const SANDBOXES = 'agentyard-sandboxes';
const DOMAIN = 'images.test';
const API_KEY = 'ay_node_images_key_0123456789';
const APP = `http://app.${DOMAIN}`;

interface StartTask {
  id: string;
  status: string;
  detail?: string | null;
  app_conversation_id?: string | null;
  sandbox_id?: string | null;
  agent_server_url?: string | null;
}

describe.skipIf(!tools)('sandbox images on a real node', { timeout: 10 * 60_000 }, () => {
  let node: RealNode;
  let core: CoreV1Api;
  let llm: ScriptedLlm;
  let undoRouting: () => void = () => {};
  let image: { ref: string; archive: string };
  const steps = new Steps();
  const { timings } = steps;
  const dir = mkdtempSync(join(tmpdir(), 'agentyard-node-images-'));
  const timed = <T>(step: string, fn: () => Promise<T>) => steps.timed(step, fn);
  const api = async <T = any>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> => {
    const res = await fetch(`${APP}${path}`, { method, headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
    const text = await res.text();
    return { status: res.status, body: (res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text) as T };
  };

  beforeAll(async () => {
    image = await timed('agentyard image', () => agentyardImage());
    node = await timed('node start', () => startRealNode({ tools: tools!, baseDomain: DOMAIN, images: [image] }));
    core = node.cluster.kubeConfig.makeApiClient(CoreV1Api);
    llm = await startScriptedLlm([], { host: NODE_IP });
    undoRouting = routeDomainToNode(DOMAIN);
    await core.createNamespace({ body: { metadata: { name: NS } } });
    await core.createNamespace({ body: { metadata: { name: SANDBOXES, labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } } } });
    await core.createNamespacedSecret({ namespace: NS, body: { metadata: { name: 'agentyard-api-key' }, stringData: { 'api-key': API_KEY } } });
    await core.createNamespacedSecret({ namespace: NS, body: { metadata: { name: 'agentyard-llm' }, stringData: { 'api-key': 'sk-scripted-node-key' } } });
    const values = writeValues(
      dir,
      'values.yaml',
      JSON.stringify({
        ...nodeChartValues(DOMAIN, image.ref, llm.url),
        sandbox: { image: { pullPolicy: 'Never' } },
        controller: { replicas: 1 },
      }),
    );
    const installed = await timed('helm install', () => helm(['install', 'agentyard', CHART, '-n', NS, '-f', values, '--wait', '--timeout', '5m', '--kubeconfig', node.kubeconfigPath]));
    expect(installed.ok, installed.out).toBe(true);
    // The ingress serves the app host once Traefik has seen the Ingress: a moment after --wait.
    await eventually(async () => ((await api('GET', '/api/v1/users/me')).status === 200 ? true : undefined), 'the app host through the ingress', 60_000);
  }, 30 * 60_000);

  afterAll(async () => {
    undoRouting();
    await llm?.close();
    await node?.stop(steps.failed);
    rmSync(dir, { recursive: true, force: true });
    console.log(steps.report('sandbox images', node?.timings));
  }, 5 * 60_000);

  it('the control plane reaches the agent server through its Service; clients get the public host', async () => {
    llm.push(
      { toolCalls: [{ name: 'terminal', arguments: { command: 'echo service-ok > proof.txt && id -u' } }] },
      { toolCalls: [{ name: 'finish', arguments: { message: 'done' } }] },
    );
    const ready = await timed('conversation READY', async () => {
      const started = await api<StartTask>('POST', '/api/v1/app-conversations', { initial_message: { role: 'user', content: [{ type: 'text', text: 'go' }], run: true } });
      expect(started.status, JSON.stringify(started.body)).toBe(200);
      let last: StartTask | undefined;
      return eventually(async () => {
        const { body } = await api<(StartTask | null)[]>('GET', `/api/v1/app-conversations/start-tasks?ids=${started.body.id}`);
        last = body[0] ?? undefined;
        if (last?.status === 'ERROR') throw new Error(`start task ERROR: ${last.detail}`);
        return last?.status === 'READY' ? last : undefined;
      }, 'the start task to be READY', 180_000).catch((err: Error) => {
        throw new Error(`${err.message}; last seen: ${JSON.stringify(last)}`);
      });
    });
    const sb = (await new KubeStore(node.cluster.kubeConfig).get(SandboxKind, SANDBOXES, ready.sandbox_id!))!;
    expect(sb.status?.internalUrl).toBe(`http://sandbox-${ready.sandbox_id}.${SANDBOXES}.svc:80`);
    expect(sb.status?.url).toBe(`http://${ready.sandbox_id}-runtime.${DOMAIN}`);
    expect(ready.agent_server_url).toBe(sb.status?.url);
    // The events came back through the API's sink; the command ran as the sandbox user.
    const events = await eventually(async () => {
      const { body } = await api<{ items: { kind: string; tool_name?: string; observation?: { content: { text: string }[] } }[] }>('GET', `/api/v1/conversation/${ready.app_conversation_id}/events/search?limit=100`);
      return body.items?.some((e) => e.kind === 'ObservationEvent' && e.tool_name === 'finish') ? body.items : undefined;
    }, 'the finish to reach the API', 120_000);
    expect(events.find((e) => e.tool_name === 'terminal' && e.observation)?.observation?.content[0]?.text).toMatch(/\b1000\b/);
    // The public host answers through the real ingress too (Traefik), with the session key only.
    expect((await fetch(`${sb.status!.url}/api/conversations/search`)).status).toBe(401);
  });

  it.each([
    ['img-debian', () => imageRef('debian'), 'no-node-on-path'],
    ['img-node', () => imageRef('node'), '/usr/local/bin/node'],
  ])('%s: a base image without agentyard is a sandbox image; the agent runs its commands in it', async (name, ref, nodeOnPath) => {
    const img = ref();
    expect(llm.remaining(), 'no scripted answer left over from an earlier step').toBe(0);
    llm.push(
      { toolCalls: [{ name: 'terminal', arguments: { command: `echo ${name} > image.txt && id -u && (command -v node || echo no-node-on-path)` } }] },
      { toolCalls: [{ name: 'finish', arguments: { message: `${name} done` } }] },
    );
    const sandbox = writeValues(dir, `${name}.json`, JSON.stringify({ apiVersion: 'agentyard.dev/v1alpha1', kind: 'Sandbox', metadata: { name, namespace: SANDBOXES }, spec: { image: img } }));
    const conversation = writeValues(
      dir,
      `${name}-conv.json`,
      JSON.stringify({ apiVersion: 'agentyard.dev/v1alpha1', kind: 'Conversation', metadata: { name: `${name}-conv`, namespace: SANDBOXES }, spec: { sandboxName: name, initialMessage: { role: 'user', content: [{ type: 'text', text: `run in ${name}` }], run: true } } }),
    );
    await timed(`sandbox on ${name} RUNNING`, async () => {
      await node.kubectl('apply', '-f', sandbox);
      // A conversation names a sandbox that must be RUNNING (as with kubectl, an operator waits for it).
      await eventually(async () => ((await node.kubectl('get', 'sandbox', name, '-n', SANDBOXES, '-o', 'jsonpath={.status.phase}')) === 'RUNNING' ? true : undefined), `${name} RUNNING`, 180_000).catch(async (err: Error) => {
        throw new Error(`${err.message}\n${await node.kubectl('describe', 'pod', name, '-n', SANDBOXES).catch((e: Error) => e.message)}`);
      });
    });
    await timed(`conversation on ${name}`, async () => {
      await node.kubectl('apply', '-f', conversation);
      await eventually(async () => {
        const out = await node.kubectl('get', 'conversation', `${name}-conv`, '-n', SANDBOXES, '-o', 'jsonpath={.status.startTask.status} {.status.executionStatus}');
        if (out.startsWith('ERROR')) throw new Error(`${name}: ${await node.kubectl('get', 'conversation', `${name}-conv`, '-n', SANDBOXES, '-o', 'yaml')}`);
        return out.startsWith('READY') && out.includes('finished') ? true : undefined;
      }, `the conversation in ${name} to finish`, 240_000).catch(async (err: Error) => {
        throw new Error(`${err.message}\n${await node.kubectl('describe', 'pod', name, '-n', SANDBOXES).catch((e: Error) => e.message)}`);
      });
    });
    const pod = await core.readNamespacedPod({ name, namespace: SANDBOXES });
    expect(pod.spec?.containers[0]?.image).toBe(img);
    expect(pod.spec?.initContainers?.[0]?.image).toBe(image.ref);
    // The command ran in that image as uid 1000 and wrote to the workspace volume; the agent
    // server's own Node stays off the image's PATH.
    expect(await node.kubectl('exec', '-n', SANDBOXES, name, '--', 'cat', '/workspace/project/image.txt')).toBe(`${name}\n`);
    const found = await node.kubectl('exec', '-n', SANDBOXES, name, '--', 'sh', '-c', 'id -u; command -v node || echo no-node-on-path');
    expect(found.trim().split('\n')).toEqual(['1000', nodeOnPath]);
  });
});
