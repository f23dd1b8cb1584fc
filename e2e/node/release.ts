// agentyard installed with Helm on the real node (node.ts), for the suites and benches that need
// only a running release: the image of this checkout, the scripted model on the node's address,
// the app host routed to the node, the API key and the model key as story.test.ts sets them up.
// The story keeps its own setup (its steps upgrade and uninstall the release it installed).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { startScriptedLlm, type ScriptedLlm } from '../../src/testing/scripted-llm/server.ts';
import { CHART, helm, writeValues } from '../helm/helm.ts';
import { TRAEFIK_CLASS } from './addons.ts';
import { NODE_IP, POD_CIDR, SERVICE_CIDR } from './host.ts';
import { agentyardImage, routeDomainToNode, startRealNode, type NodeTools, type RealNode } from './node.ts';

export const NS = 'agentyard';
export const SANDBOXES = 'agentyard-sandboxes';
const DOMAIN = 'agentyard.test';
const API_KEY = 'ay_node_admin_key_0123456789';
export const APP = `http://app.${DOMAIN}`;

export interface NodeRelease {
  node: RealNode;
  llm: ScriptedLlm;
  /** Milliseconds per setup step (image, node start, helm install). */
  timings: Record<string, number>;
  /** The application API through the node's ingress, as its administrator. */
  api<T = any>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }>;
  /** Tears the node down (`failed`: keeps its logs). */
  stop(failed?: boolean): Promise<void>;
}

/**
 * The chart values every real-node suite installs with: this checkout's image (imported, never
 * pulled), Traefik's ingress class, local-path volumes, the scripted model, and the cluster ranges
 * the NetworkPolicy needs. Suites spread their own values over it.
 */
export function nodeChartValues(domain: string, imageRef: string, llmUrl: string): Record<string, unknown> {
  const [repository, tag] = imageRef.split(/:(?=[^:]+$)/);
  return {
    baseDomain: domain,
    image: { repository, tag, pullPolicy: 'Never' },
    ingress: { className: TRAEFIK_CLASS },
    runtime: { storageClass: 'local-path' },
    llm: { model: 'openai/scripted', baseUrl: llmUrl },
    networkPolicy: {
      // Traefik runs on the node's address (host network): it is not a Pod any selector matches.
      ingressController: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } } },
      podCidrs: [POD_CIDR],
      serviceCidrs: [SERVICE_CIDR],
      nodeCidrs: [`${NODE_IP}/32`],
    },
  };
}

/** Starts the node and installs the chart (`--wait`); `values` are merged over the defaults below. */
export async function installRelease(tools: NodeTools, values: Record<string, unknown> = {}): Promise<NodeRelease> {
  const timings: Record<string, number> = {};
  const timed = async <T>(step: string, fn: () => Promise<T>): Promise<T> => {
    const t = Date.now();
    try {
      return await fn();
    } finally {
      timings[step] = Date.now() - t;
    }
  };
  const image = await timed('agentyard image', () => agentyardImage());
  const node = await timed('node start', () => startRealNode({ tools, baseDomain: DOMAIN, images: [image] }));
  const dir = mkdtempSync(join(tmpdir(), 'agentyard-node-release-'));
  let llm: ScriptedLlm | undefined;
  let undoRouting: () => void = () => {};
  const stop = async (failed = false) => {
    undoRouting();
    await llm?.close();
    await node.stop(failed);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const core = node.cluster.kubeConfig.makeApiClient(CoreV1Api);
    llm = await startScriptedLlm([], { host: NODE_IP });
    undoRouting = routeDomainToNode(DOMAIN);
    await core.createNamespace({ body: { metadata: { name: NS } } });
    await core.createNamespace({ body: { metadata: { name: SANDBOXES } } });
    await core.createNamespacedSecret({ namespace: NS, body: { metadata: { name: 'agentyard-api-key' }, stringData: { 'api-key': API_KEY } } });
    await core.createNamespacedSecret({ namespace: NS, body: { metadata: { name: 'agentyard-llm' }, stringData: { 'api-key': 'sk-scripted-node-key' } } });
    const file = writeValues(dir, 'values.yaml', JSON.stringify({ ...nodeChartValues(DOMAIN, image.ref, llm.url), uninstall: { deleteArchives: true }, ...values }));
    const installed = await timed('helm install', () => helm(['install', 'agentyard', CHART, '-n', NS, '-f', file, '--wait', '--timeout', '5m', '--kubeconfig', node.kubeconfigPath]));
    if (!installed.ok) throw new Error(`helm install failed:\n${installed.out}`);
  } catch (err) {
    await stop(true);
    throw err;
  }
  const api = async <T = any>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> => {
    const res = await fetch(`${APP}${path}`, { method, headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
  };
  return { node, llm: llm!, timings, api, stop };
}
