// `agentyard support-bundle --upload` end to end: the bundle collected from the real API server, with
// secrets planted where installations keep them, sent to an HTTPS receiver run by the test (its own
// CA, trusted through NODE_EXTRA_CA_CERTS or --ca-file), which unpacks it and looks for every secret.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AppsV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makePki, type Pki } from './certs.ts';
import { kubeBinDir, startTestCluster, type TestCluster } from './cluster.ts';

const run = promisify(execFile);
const CLI = join(import.meta.dirname, '../../src/cli/main.ts');
const NS = 'agentyard';
const SANDBOXES = 'agentyard-sandboxes';
const UPLOAD_TOKEN = 'upload-token-vendor-8086x';

// Each planted where an installation keeps it; none may reach the receiver.
const PLANTED = {
  adminApiKey: 'ay_plant_admin_key_0123456789',
  modelKey: 'sk-plant-model-key-0123456789',
  conversationSecret: 'conv-secret-value-4711zz',
  sessionModelToken: 'ay_sess_plant_0123456789abcdef',
  sessionApiKey: 'sess-key-plant-5150',
  uploadToken: UPLOAD_TOKEN,
};

interface Received {
  auth: string | undefined;
  type: string | undefined;
  body: Buffer;
}

describe.skipIf(!kubeBinDir())('support-bundle --upload to an HTTPS receiver', () => {
  let cluster: TestCluster;
  let pki: Pki;
  let receiver: Server;
  let url: string;
  const received: Received[] = [];
  const answers: number[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'agentyard-support-upload-'));

  beforeAll(async () => {
    cluster = await startTestCluster({ controllerManager: false });
    const core = cluster.kubeConfig.makeApiClient(CoreV1Api);
    for (const name of [NS, SANDBOXES]) await core.createNamespace({ body: { metadata: { name } } });
    const secret = (namespace: string, name: string, stringData: Record<string, string>) => core.createNamespacedSecret({ namespace, body: { metadata: { name }, stringData } });
    await secret(NS, 'agentyard-api-key', { 'api-key': PLANTED.adminApiKey });
    await secret(NS, 'agentyard-llm', { 'api-key': PLANTED.modelKey });
    await secret(SANDBOXES, 'conv-a-secrets', { DEPLOY_TOKEN: PLANTED.conversationSecret });
    await secret(SANDBOXES, 'sbx-a-session', { 'model-token': PLANTED.sessionModelToken, 'session-api-key': PLANTED.sessionApiKey });
    // Literal env values and the copy kubectl keeps of an applied object.
    await cluster.kubeConfig.makeApiClient(AppsV1Api).createNamespacedDeployment({
      namespace: NS,
      body: {
        metadata: { name: 'agentyard-api', annotations: { 'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({ env: [{ name: 'LLM_API_KEY', value: PLANTED.modelKey }] }) } },
        spec: {
          selector: { matchLabels: { app: 'api' } },
          template: {
            metadata: { labels: { app: 'api' } },
            spec: { containers: [{ name: 'api', image: 'agentyard:test', env: [{ name: 'LLM_API_KEY', value: PLANTED.modelKey }, { name: 'SESSION_API_KEY', value: PLANTED.sessionApiKey }, { name: 'LLM_MODEL', value: 'openai/gpt-4o' }] }] },
          },
        },
      },
    });
    await cluster.kubeConfig.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
      group: 'agentyard.dev',
      version: 'v1alpha1',
      namespace: SANDBOXES,
      plural: 'conversations',
      body: { apiVersion: 'agentyard.dev/v1alpha1', kind: 'Conversation', metadata: { name: 'conv-a' }, spec: { sandboxRef: 'sbx-a', secretsRef: 'conv-a-secrets' } },
    });
    // A component that quoted a key in an event message.
    await core.createNamespacedEvent({
      namespace: SANDBOXES,
      body: { metadata: { name: 'sbx-a.leak' }, involvedObject: { kind: 'Sandbox', name: 'sbx-a', namespace: SANDBOXES }, reason: 'AuthFailed', message: `agent server answered 401 for session_api_key=${PLANTED.sessionApiKey}`, type: 'Warning', lastTimestamp: new Date() },
    });

    const pkiDir = join(dir, 'pki');
    mkdirSync(pkiDir);
    pki = await makePki(pkiDir);
    receiver = createServer({ cert: readFileSync(pki.serverCert), key: readFileSync(pki.serverKey) }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ auth: req.headers.authorization, type: req.headers['content-type'], body: Buffer.concat(chunks) });
        const status = req.headers.authorization === `Bearer ${UPLOAD_TOKEN}` ? (answers.shift() ?? 201) : 401;
        res.writeHead(status, { 'content-type': 'text/plain' }).end(status === 201 ? `received as case 1234` : status === 401 ? 'unknown token' : 'busy');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    url = `https://127.0.0.1:${(receiver.address() as AddressInfo).port}/v1/bundles`;
  }, 120_000);

  afterAll(async () => {
    await new Promise((r) => receiver?.close(r));
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const bundle = async (args: string[], env: Record<string, string> = {}) => {
    try {
      const r = await run(process.execPath, [CLI, 'support-bundle', '-n', NS, ...args], { cwd: dir, env: { PATH: process.env.PATH ?? '', KUBECONFIG: cluster.kubeconfigPath, ...env }, maxBuffer: 8 * 1024 * 1024 });
      return { code: 0, out: r.stdout + r.stderr };
    } catch (err) {
      const e = err as { code?: number; stdout?: string; stderr?: string };
      return { code: typeof e.code === 'number' ? e.code : 1, out: (e.stdout ?? '') + (e.stderr ?? '') };
    }
  };

  it('refuses plain http to another host and a missing token before collecting anything', async () => {
    const plain = await bundle(['--upload', 'http://support.example.com/v1/bundles', '-o', join(dir, 'never.tar.gz')]);
    expect(plain.code).toBe(2);
    expect(plain.out).toMatch(/refusing plain http to support\.example\.com: the bundle and the upload token would cross the network unencrypted/);
    const noToken = await bundle(['--upload', url, '-o', join(dir, 'never.tar.gz')]);
    expect(noToken.code).toBe(2);
    expect(noToken.out).toMatch(/--upload needs the installation's upload token: Secret agentyard\/agentyard-support-upload does not exist; set AGENTYARD_SUPPORT_UPLOAD_TOKEN, or create the Secret: kubectl -n agentyard create secret generic agentyard-support-upload --from-literal=token=\.\.\./);
    expect((await run('ls', [dir])).stdout).not.toContain('never.tar.gz');
    expect(received).toHaveLength(0);
  });

  it('uploads with the token from the installation Secret, retrying a busy receiver; nothing secret arrives', async () => {
    await cluster.kubeConfig.makeApiClient(CoreV1Api).createNamespacedSecret({ namespace: NS, body: { metadata: { name: 'agentyard-support-upload' }, stringData: { token: UPLOAD_TOKEN } } });
    answers.push(503);
    const up = await bundle(['--upload', url, '-o', join(dir, 'sent.tar.gz')], { NODE_EXTRA_CA_CERTS: pki.caCert });
    expect(up.out).toMatch(/upload attempt 1 of 4 failed \(HTTP 503: busy\); retrying/);
    expect(up.out).toMatch(/support bundle uploaded to https:\/\/127\.0\.0\.1:\d+\/v1\/bundles \(HTTP 201, after 2 attempts\): received as case 1234/);
    expect(up.code, up.out).toBe(0);
    expect(received).toHaveLength(2);
    const got = received.at(-1)!;
    expect(got.auth).toBe(`Bearer ${UPLOAD_TOKEN}`);
    expect(got.type).toBe('application/gzip');
    // The receiver's side: unpack what arrived and look for every planted value, plain and base64.
    const unpacked = join(dir, 'received');
    mkdirSync(unpacked);
    writeFileSync(join(dir, 'received.tar.gz'), got.body);
    await run('tar', ['-xzf', join(dir, 'received.tar.gz'), '-C', unpacked]);
    const listing = (await run('find', [unpacked, '-type', 'f'])).stdout;
    for (const file of ['versions.json', 'agentyard/deployments.json', 'agentyard/secrets.json', 'agentyard-sandboxes/conversations.json', 'agentyard-sandboxes/events.json']) expect(listing).toContain(`agentyard-support/${file}`);
    const all = (await run('sh', ['-c', `cat $(find ${unpacked} -type f)`], { maxBuffer: 32 * 1024 * 1024 })).stdout;
    expect(all).toContain('openai/gpt-4o'); // what is not secret stays
    expect(all).toContain('conv-a-secrets'); // names and key names, for the support engineer
    for (const [what, plain] of Object.entries(PLANTED)) {
      expect(all, what).not.toContain(plain);
      expect(all, `${what} (base64)`).not.toContain(Buffer.from(plain).toString('base64').replace(/=+$/, ''));
    }
    expect(up.out).not.toContain(UPLOAD_TOKEN);
  });

  it('says how to trust the receiver when its certificate is unknown, and does not retry a refused token', async () => {
    const before = received.length;
    const untrusted = await bundle(['--upload', url, '-o', join(dir, 'untrusted.tar.gz')]);
    expect(untrusted.code).toBe(1);
    expect(untrusted.out).toMatch(/the receiver's certificate is not trusted \((UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY|SELF_SIGNED_CERT_IN_CHAIN): /);
    expect(untrusted.out).toMatch(/Pass its CA with --ca-file <pem> or NODE_EXTRA_CA_CERTS/);
    expect(received.length).toBe(before);
    // The variable overrides the Secret; --ca-file instead of NODE_EXTRA_CA_CERTS.
    const wrong = await bundle(['--upload', url, '--ca-file', pki.caCert, '-o', join(dir, 'wrong.tar.gz')], { AGENTYARD_SUPPORT_UPLOAD_TOKEN: 'not-the-token' });
    expect(wrong.code).toBe(1);
    expect(wrong.out).toMatch(/refused with 401: unknown token\. The upload token was not accepted/);
    expect(wrong.out).toMatch(/support bundle written to .*wrong\.tar\.gz/);
    expect(received.length).toBe(before + 1);
    expect(received.at(-1)!.auth).toBe('Bearer not-the-token');
  });
});
