// The chart's bundled object store on a REAL node (node.ts): objectStore.mode=bundled runs SeaweedFS
// (the `weed` binary hack/seaweedfs.sh builds from Go modules, in an image of its own) as a
// StatefulSet on a local-path volume. One story, in order: a conversation's browser recording and its
// sandbox's workspace archive land in the store when the sandbox is deleted (the archive Pod uploads
// through presigned URLs, the controller unpacks the recording); the download serves the recording
// from the store, also after the store's Pod was deleted and came back on its volume; internal/ is
// served to no one (not in downloads, not to anonymous S3 requests, not reachable from sandboxes);
// deleting the conversation deletes its objects and keeps the internal archive. Then the admin
// console's support bundle, sent to an HTTPS receiver on the node's address, carries the real Pods'
// logs, redacted.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { unzipSync, strFromU8 } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3ObjectStore } from '../../src/objstore/s3-store.ts';
import { seaweedBinary } from '../../src/testing/seaweedfs/server.ts';
import { startScriptedLlm, type ScriptedLlm } from '../../src/testing/scripted-llm/server.ts';
import { eventually } from '../embedded/harness.ts';
import { CHART, helm, kubectlBin, run, writeValues } from '../helm/helm.ts';
import { makePki } from '../kube/certs.ts';
import { NODE_IP } from './host.ts';
import { agentyardImage, realNodeTools, routeDomainToNode, seaweedfsImage, startRealNode, type RealNode } from './node.ts';
import { Steps } from './steps.ts';
import { nodeChartValues } from './release.ts';

const tools = realNodeTools();
const weed = seaweedBinary();
const NS = 'agentyard';
const SANDBOXES = 'agentyard-sandboxes';
const DOMAIN = 'objects.test';
const APP = `http://app.${DOMAIN}`;
const STORE_POD = 'agentyard-objects-0';
// Each kept where the installation keeps it; none may leave in a support bundle.
const SECRETS = {
  apiKey: 'ay_node_objects_key_0123456789',
  modelKey: 'sk-scripted-objects-key-0123',
  s3Key: 'objects-access-key',
  s3Secret: 'objects-secret-key-5e7a9c31d0',
  uploadToken: 'upload-token-objects-77b1e0',
};

interface StartTask {
  id: string;
  status: string;
  detail?: string | null;
  app_conversation_id?: string | null;
  sandbox_id?: string | null;
}

/** `kubectl port-forward` to the store's S3 port: a path from this process into the Pod's own network namespace. */
async function forwardS3(kubeconfig: string): Promise<{ endpoint: string; close(): void }> {
  const child: ChildProcess = spawn(kubectlBin!, ['--kubeconfig', kubeconfig, 'port-forward', '-n', NS, `pod/${STORE_POD}`, '--address', '127.0.0.1', ':8333'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const port = await new Promise<number>((resolve, reject) => {
    const seen = (d: Buffer) => {
      out += d.toString();
      const m = /Forwarding from 127\.0\.0\.1:(\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    };
    child.stdout!.on('data', seen);
    child.stderr!.on('data', seen);
    child.once('exit', (code) => reject(new Error(`kubectl port-forward exited (${code}): ${out}`)));
  });
  return { endpoint: `http://127.0.0.1:${port}`, close: () => void child.kill('SIGTERM') };
}

describe.skipIf(!tools || !weed)('the bundled object store on a real node', { timeout: 10 * 60_000 }, () => {
  let node: RealNode;
  let core: CoreV1Api;
  let llm: ScriptedLlm;
  let receiver: Server;
  let undoRouting: () => void = () => {};
  const steps = new Steps();
  const received: { auth?: string; body: Buffer }[] = [];
  const { timings } = steps;
  const dir = mkdtempSync(join(tmpdir(), 'agentyard-node-objects-'));
  const timed = <T>(step: string, fn: () => Promise<T>) => steps.timed(step, fn);
  const api = async <T = any>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T; raw: Buffer }> => {
    const res = await fetch(`${APP}${path}`, { method, headers: { authorization: `Bearer ${SECRETS.apiKey}`, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
    const raw = Buffer.from(await res.arrayBuffer());
    return { status: res.status, body: (res.headers.get('content-type')?.includes('json') ? JSON.parse(raw.toString()) : undefined) as T, raw };
  };
  /** The bucket as this test sees it, through a port-forward opened for the call. */
  const bucket = async <T>(fn: (s3: S3ObjectStore, endpoint: string) => Promise<T>): Promise<T> => {
    const fwd = await forwardS3(node.kubeconfigPath);
    const s3 = new S3ObjectStore({ endpoint: fwd.endpoint, bucket: 'agentyard', credentials: { accessKeyId: SECRETS.s3Key, secretAccessKey: SECRETS.s3Secret }, createBucket: false });
    try {
      return await fn(s3, fwd.endpoint);
    } finally {
      s3.close();
      fwd.close();
    }
  };
  const startSandbox = async (): Promise<{ conversation: string; sandbox: string }> => {
    const started = await api<StartTask>('POST', '/api/v1/app-conversations', {});
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const ready = await eventually(async () => {
      const { body } = await api<(StartTask | null)[]>('GET', `/api/v1/app-conversations/start-tasks?ids=${started.body.id}`);
      if (body[0]?.status === 'ERROR') throw new Error(`start task ERROR: ${body[0].detail}`);
      return body[0]?.status === 'READY' ? body[0] : undefined;
    }, 'a sandbox to be READY', 240_000);
    return { conversation: ready.app_conversation_id!, sandbox: ready.sandbox_id! };
  };

  beforeAll(async () => {
    const image = await timed('agentyard image', () => agentyardImage());
    const store = await timed('seaweedfs image', () => seaweedfsImage());
    node = await timed('node start', () => startRealNode({ tools: tools!, baseDomain: DOMAIN, images: [image, store] }));
    core = node.cluster.kubeConfig.makeApiClient(CoreV1Api);
    llm = await startScriptedLlm([], { host: NODE_IP });
    undoRouting = routeDomainToNode(DOMAIN);
    // The vendor's support receiver, on the node's address with its own CA (given to the chart as a ConfigMap).
    mkdirSync(join(dir, 'pki'));
    const pki = await makePki(join(dir, 'pki'), [`IP:${NODE_IP}`]);
    receiver = createServer({ cert: readFileSync(pki.serverCert), key: readFileSync(pki.serverKey) }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ ...(req.headers.authorization ? { auth: req.headers.authorization } : {}), body: Buffer.concat(chunks) });
        res.writeHead(req.headers.authorization === `Bearer ${SECRETS.uploadToken}` ? 201 : 401).end('ticket SUP-7');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, NODE_IP, r));
    for (const name of [NS, SANDBOXES]) await core.createNamespace({ body: { metadata: { name } } });
    const secret = (name: string, stringData: Record<string, string>) => core.createNamespacedSecret({ namespace: NS, body: { metadata: { name }, stringData } });
    await secret('agentyard-api-key', { 'api-key': SECRETS.apiKey });
    await secret('agentyard-llm', { 'api-key': SECRETS.modelKey });
    await secret('agentyard-object-store', { 'access-key-id': SECRETS.s3Key, 'secret-access-key': SECRETS.s3Secret });
    await secret('agentyard-support-upload', { token: SECRETS.uploadToken });
    await core.createNamespacedConfigMap({ namespace: NS, body: { metadata: { name: 'agentyard-ca' }, data: { 'ca.crt': readFileSync(pki.caCert, 'utf8') } } });
    const [storeRepository, storeTag] = store.ref.split(/:(?=[^:]+$)/);
    const values = writeValues(
      dir,
      'values.yaml',
      JSON.stringify({
        ...nodeChartValues(DOMAIN, image.ref, llm.url),
        controller: { replicas: 1 },
        objectStore: { mode: 'bundled', bundled: { image: { repository: storeRepository, tag: storeTag, pullPolicy: 'Never' }, persistence: { size: '1Gi', storageClass: 'local-path' } } },
        support: { uploadUrl: `https://${NODE_IP}:${(receiver.address() as AddressInfo).port}/bundles` },
        api: { caBundle: { name: 'agentyard-ca', key: 'ca.crt' } },
      }),
    );
    const installed = await timed('helm install', () => helm(['install', 'agentyard', CHART, '-n', NS, '-f', values, '--wait', '--timeout', '6m', '--kubeconfig', node.kubeconfigPath]));
    if (!installed.ok) steps.failed = true;
    expect(installed.ok, `${installed.out}\n${await node.kubectl('describe', 'pods', '-n', NS).catch((e: Error) => e.message)}`).toBe(true);
    await eventually(async () => ((await api('GET', '/api/v1/users/me')).status === 200 ? true : undefined), 'the app host through the ingress', 60_000);
  }, 30 * 60_000);

  afterAll(async () => {
    undoRouting();
    await llm?.close();
    if (receiver) await new Promise((r) => receiver.close(r));
    await node?.stop(steps.failed);
    rmSync(dir, { recursive: true, force: true });
    console.log(steps.report('object store', node?.timings));
  }, 5 * 60_000);

  let conversation = '';
  let sandbox = '';
  // The NetworkPolicy probe's sandbox, started beside the first one (each start is mostly waiting:
  // ~10-25 s on a shared machine) and awaited by the probe test; also the live sandbox whose log
  // the support bundle carries (nothing deletes it).
  let probeStarting: Promise<{ conversation: string; sandbox: string }> | undefined;
  let probe: { conversation: string; sandbox: string } | undefined;
  let archiveKey = '';
  const recordingKey = () => `conversations/${conversation}/files/browser_recordings/trace.zip`;
  const download = async () => {
    const res = await api('GET', `/api/v1/app-conversations/${conversation}/download`);
    expect(res.status).toBe(200);
    return unzipSync(new Uint8Array(res.raw));
  };

  it('the API and the controller start on the bundled store: SeaweedFS runs from its own image on a volume', async () => {
    const pod = await core.readNamespacedPod({ name: STORE_POD, namespace: NS });
    expect(pod.status?.phase).toBe('Running');
    expect(pod.spec?.volumes?.find((v) => v.name === 'data')?.persistentVolumeClaim?.claimName).toBe(`data-${STORE_POD}`);
    const logs = await node.kubectl('logs', '-n', NS, '-l', 'app.kubernetes.io/component=api', '--tail', '-1');
    expect(logs).toContain('object store ready');
  });

  it("deleting a sandbox puts its workspace archive and its conversation's browser recording into the store; the download serves the recording", async () => {
    probeStarting = startSandbox();
    probeStarting.catch(() => undefined); // awaited by the probe test; a failure is reported there
    ({ conversation, sandbox } = await timed('sandbox READY', startSandbox));
    // A browser recording where the agent server keeps them (<data dir>/conversations/<id>/browser_recordings),
    // written by the agent's terminal in the sandbox container, and a file in the workspace.
    const recordings = `/workspace/.agentyard/conversations/${conversation}/browser_recordings`;
    llm.push(
      { toolCalls: [{ name: 'terminal', arguments: { command: `echo kept-by-the-archive > kept.txt && mkdir -p ${recordings} && echo recording-of-${conversation} > ${recordings}/trace.zip && echo written` } }] },
      { toolCalls: [{ name: 'finish', arguments: { message: 'recorded' } }] },
    );
    const sent = await api('POST', `/api/v1/app-conversations/${conversation}/send-message`, { role: 'user', content: [{ type: 'text', text: 'record something' }] });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    await eventually(async () => {
      const { body } = await api<{ items: { kind: string; tool_name?: string }[] }>('GET', `/api/v1/conversation/${conversation}/events/search?limit=100`);
      return body.items?.some((e) => e.kind === 'ObservationEvent' && e.tool_name === 'finish') ? true : undefined;
    }, 'the agent to finish', 180_000);
    expect(await node.kubectl('exec', '-n', SANDBOXES, sandbox, '--', 'cat', `${recordings}/trace.zip`)).toBe(`recording-of-${conversation}\n`);
    await timed('sandbox delete (archive)', async () => {
      expect((await api('DELETE', `/api/v1/sandboxes/${sandbox}`)).status).toBe(200);
      await eventually(async () => ((await node.kubectl('get', 'sandboxes.agentyard.dev', '-n', SANDBOXES, '-o', 'name')).includes(`/${sandbox}\n`) ? undefined : true), 'the Sandbox to be gone', 240_000);
    });
    // No archive volume: the archive went to the bucket.
    expect(await node.kubectl('get', 'pvc', '-n', SANDBOXES, '-o', 'name')).not.toContain('agentyard-archive');
    await bucket(async (s3) => {
      const archives = (await s3.list('internal/workspace-archives/')).filter((o) => o.key.startsWith(`internal/workspace-archives/${sandbox}-`));
      expect(archives).toHaveLength(1);
      archiveKey = archives[0]!.key;
      const file = join(dir, 'archive.tar.gz');
      writeFileSync(file, (await s3.get(archiveKey))!);
      const extracted = join(dir, 'archive');
      mkdirSync(extracted);
      await run('tar', ['-xzf', file, '-C', extracted, './project/kept.txt']);
      expect(readFileSync(join(extracted, 'project', 'kept.txt'), 'utf8')).toBe('kept-by-the-archive\n');
      expect((await s3.get(recordingKey()))?.toString()).toBe(`recording-of-${conversation}\n`);
      expect(await s3.list('internal/conversation-files/')).toEqual([]); // unpacked, then deleted
    });
    const files = await download();
    expect(strFromU8(files['files/browser_recordings/trace.zip']!)).toBe(`recording-of-${conversation}\n`);
    expect(Object.keys(files).filter((f) => f.includes('internal') || f.includes('kept.txt'))).toEqual([]);
  });

  it("the store's Pod deleted: the StatefulSet brings it back on the same volume and every object is still there", async () => {
    const before = await bucket(async (s3) => (await s3.list('')).map((o) => o.key));
    const uid = (await core.readNamespacedPod({ name: STORE_POD, namespace: NS })).metadata?.uid;
    await timed('store Pod restart', async () => {
      // A 1 s grace period: weed's graceful stop takes ~15 s (its filer retries a last metadata-log
      // write after its own volume server has stopped) and kubelet kills it after the grace period
      // anyway, so waiting for it proved nothing. Killed, it is the harder test of what survives
      // (as in src/testing/seaweedfs); not 0, which force-deletes the Pod object at once and lets
      // the StatefulSet start a second weed on the volume while the first still runs.
      await core.deleteNamespacedPod({ name: STORE_POD, namespace: NS, gracePeriodSeconds: 1 });
      await eventually(async () => {
        const pod = await core.readNamespacedPod({ name: STORE_POD, namespace: NS }).catch(() => undefined);
        return pod && pod.metadata?.uid !== uid && pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? true : undefined;
      }, 'the store Pod to be Ready again', 180_000);
    });
    expect(await bucket(async (s3) => (await s3.list('')).map((o) => o.key))).toEqual(before);
    expect(before).toEqual(expect.arrayContaining([archiveKey, recordingKey()]));
    // The API reads it again (its client reconnects): the download still has the recording.
    const files = await eventually(async () => {
      const res = await api('GET', `/api/v1/app-conversations/${conversation}/download`);
      return res.status === 200 ? unzipSync(new Uint8Array(res.raw)) : undefined;
    }, 'the download after the store restart', 120_000);
    expect(strFromU8(files['files/browser_recordings/trace.zip']!)).toBe(`recording-of-${conversation}\n`);
  });

  it('internal/ is served to no one: anonymous S3 requests are refused (the download above holds none of it)', async () => {
    await bucket(async (_s3, endpoint) => {
      for (const path of [`/agentyard/${archiveKey}`, '/agentyard?list-type=2&prefix=internal/', `/agentyard/${recordingKey()}`]) {
        const res = await fetch(`${endpoint}${path}`);
        expect(res.status, path).toBe(403);
        expect(await res.text()).not.toContain('kept-by-the-archive');
      }
    });
  });

  it('a sandbox cannot reach the store (NetworkPolicy): only the API, the controller and archive Pods can', async () => {
    // The enforcer runs on every real node: a refusal below is the policy's only while it does.
    const enforcer = await node.networkPolicy();
    expect(enforcer.enforced, enforcer.reason).toBe(true);
    probe = await timed('probe sandbox READY', () => probeStarting ?? startSandbox());
    const storeIp = (await core.readNamespacedPod({ name: STORE_POD, namespace: NS })).status?.podIP;
    expect(storeIp).toBeTruthy();
    const connects = await node.kubectl('exec', '-n', SANDBOXES, probe.sandbox, '--', 'timeout', '3', 'bash', '-c', `exec 3<>/dev/tcp/${storeIp}/8333`).then(() => true, () => false);
    expect(connects).toBe(false);
  });

  it("deleting the conversation deletes its objects; the internal workspace archive is kept", async () => {
    expect((await api('DELETE', `/api/v1/app-conversations/${conversation}`)).status).toBe(200);
    await eventually(async () => bucket(async (s3) => ((await s3.list(`conversations/${conversation}/`)).length === 0 ? true : undefined)), "the conversation's objects to be gone", 120_000);
    expect(await bucket(async (s3) => (await s3.list('internal/workspace-archives/')).map((o) => o.key))).toContain(archiveKey);
  });

  it("the admin console's support bundle carries the real Pods' logs, redacted, to the HTTPS receiver", async () => {
    // A live sandbox, whose agent server's log the bundle must carry from the sandbox namespace:
    // the probe's, or a new one when this test runs alone.
    const live = probe ?? (await timed('live sandbox READY', startSandbox));
    expect((await api<({ status: string } | null)[]>('GET', `/api/v1/sandboxes?id=${live.sandbox}`)).body[0]?.status).toBe('RUNNING');
    const sent = await timed('support bundle', () => api<{ status: number; files: string[] }>('POST', '/api/v1/admin/support-bundle'));
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    expect(sent.body.status).toBe(201);
    const last = received.at(-1)!;
    expect(last.auth).toBe(`Bearer ${SECRETS.uploadToken}`);
    const out = join(dir, 'bundle');
    mkdirSync(out);
    const file = join(dir, 'bundle.tar.gz');
    writeFileSync(file, last.body);
    await run('tar', ['-xzf', file, '-C', out]);
    const root = join(out, 'agentyard-support');
    const logs = readdirSync(join(root, NS, 'logs'));
    const apiLog = logs.find((f) => /^agentyard-api-.*-api\.log$/.test(f));
    expect(apiLog, logs.join(', ')).toBeDefined();
    expect(readFileSync(join(root, NS, 'logs', apiLog!), 'utf8')).toContain('object store ready');
    expect(logs).toContain(`${STORE_POD}-seaweedfs.log`);
    expect(logs.some((f) => /^agentyard-controller-.*-controller\.log$/.test(f))).toBe(true);
    expect(readdirSync(join(root, SANDBOXES, 'logs'))).toContain(`${live.sandbox}-agent-server.log`);
    const everything = readdirSync(root, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => readFileSync(join(e.parentPath, e.name), 'utf8'))
      .join('\n');
    for (const plain of Object.values(SECRETS)) {
      expect(everything).not.toContain(plain);
      expect(everything).not.toContain(Buffer.from(plain).toString('base64').replace(/=+$/, ''));
    }
  });
});
