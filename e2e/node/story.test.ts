// agentyard on a REAL single-node Kubernetes cluster (node.ts): the chart installed with Helm from
// the image built from this checkout's Dockerfile, Pods run by kubelet + containerd + runc, the app
// and sandbox hosts served by Traefik, names answered by CoreDNS, NetworkPolicy enforced by
// kube-network-policies, volumes from local-path-provisioner. The model is the scripted one, on the
// node's address so that sandbox Pods reach it. One story, in order: each step builds on the last.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedLlm, type ScriptedLlm } from '../../src/testing/scripted-llm/server.ts';
import { CHART, helm, writeValues } from '../helm/helm.ts';
import { TRAEFIK_CLASS } from './addons.ts';
import { leftovers, NODE_IP, POD_CIDR, SERVICE_CIDR } from './host.ts';
import { agentyardImage, KEPT_LOGS, realNodeTools, routeDomainToNode, startRealNode, type RealNode } from './node.ts';

const tools = realNodeTools();
const NS = 'agentyard';
const SANDBOXES = 'agentyard-sandboxes';
const DOMAIN = 'agentyard.test';
const API_KEY = 'ay_node_admin_key_0123456789';
const APP = `http://app.${DOMAIN}`;

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
  let failed = false;
  const timings: Record<string, number> = {};
  const dir = mkdtempSync(join(tmpdir(), 'agentyard-node-'));
  const kube = (args: string[]) => helm([...args, '--kubeconfig', node.kubeconfigPath]);
  const timed = async <T>(step: string, fn: () => Promise<T>): Promise<T> => {
    const t = Date.now();
    try {
      return await fn();
    } catch (err) {
      failed = true;
      throw err;
    } finally {
      timings[step] = Date.now() - t;
    }
  };
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
    await core.createNamespacedSecret({ namespace: SANDBOXES, body: { metadata: { name: 'agentyard-llm' }, stringData: { 'api-key': 'sk-scripted-node-key' } } });
  }, 30 * 60_000);

  afterAll(async () => {
    undoRouting();
    await llm?.close();
    const t = Date.now();
    await node?.stop(failed);
    timings['node stop'] = Date.now() - t;
    rmSync(dir, { recursive: true, force: true });
    console.log(`e2e/node timings (ms): ${JSON.stringify({ ...node?.timings, ...timings })}${failed ? `\nlogs of the failed run: ${KEPT_LOGS}` : ''}`);
    // Nothing of the node is left on the host: processes, containers' mounts, rules, cgroups, the bridge.
    if (node) expect(await leftovers()).toEqual([]);
  }, 5 * 60_000);

  const values = () => {
    const [repository, tag] = image.ref.split(/:(?=[^:]+$)/);
    return writeValues(
      dir,
      'values.yaml',
      JSON.stringify({
        baseDomain: DOMAIN,
        image: { repository, tag, pullPolicy: 'Never' },
        ingress: { className: TRAEFIK_CLASS },
        runtime: { storageClass: 'local-path' },
        llm: { model: 'openai/scripted', baseUrl: llm.url },
        controller: { replicas: 2 },
        networkPolicy: {
          // Traefik runs on the node's address (host network): it is not a Pod any selector matches.
          ingressController: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } } },
          podCidrs: [POD_CIDR],
          serviceCidrs: [SERVICE_CIDR],
        },
      }),
    );
  };

  it('helm install --wait brings every Pod of the release up', async () => {
    const installed = await timed('helm install', () => kube(['install', 'agentyard', CHART, '-n', NS, '-f', values(), '--wait', '--timeout', '5m']));
    if (!installed.ok) failed = true;
    expect(installed.ok, installed.out).toBe(true);
    const pods = await node.kubectl('get', 'pods', '-n', NS, '-o', 'jsonpath={range .items[*]}{.metadata.name} {.status.phase}{"\\n"}{end}');
    expect(pods.trim().split('\n').filter((l) => l.endsWith(' Running'))).toHaveLength(3); // the API and two controllers
  });

  it('helm test passes in the cluster', async () => {
    const tested = await timed('helm test', () => kube(['test', 'agentyard', '-n', NS, '--timeout', '3m', '--logs']));
    if (!tested.ok) failed = true;
    expect(tested.ok, tested.out).toBe(true);
    expect(tested.out).toMatch(/all \d+ checks passed/);
  });
});
