// The chart against the real test API server: rendered manifests accepted by a server-side dry
// run; then a real install with preflight before and after, `helm test`, the controller and the API
// running with exactly the RBAC the chart grants them, a support bundle, an upgrade and an uninstall.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppsV1Api, CoordinationV1Api, CoreV1Api, NetworkingV1Api, StorageV1Api, type CoreV1Event } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConversationKind } from '../../src/api/conversation.ts';
import { API_VERSION } from '../../src/api/meta.ts';
import { SandboxKind } from '../../src/api/sandbox.ts';
import { SANDBOX_CONFIGURATION_NAME, SandboxConfigurationKind } from '../../src/api/sandbox-configuration.ts';
import { eventTime } from '../../src/cli/support-bundle.ts';
import { KubeStore } from '../../src/store/kube/kube-store.ts';
import { eventually } from '../embedded/harness.ts';
import { startTestCluster, type TestCluster } from '../kube/cluster.ts';
import { agentyard, CHART, helm, helmBin, kubectlBin, run, writeValues } from './helm.ts';
import { runPodSpec, TestPodRunner, type PodProcess } from './pods.ts';

const NS = 'agentyard';
const SANDBOXES = 'agentyard-sandboxes';
const NO_RANGES = 'baseDomain: agents.example.com\nruntime: {storageClass: standard}\ningress: {tlsSecret: wildcard-agents}\nllm: {model: openai/gpt-4o}\n';
const VALUES = `${NO_RANGES}networkPolicy: {podCidrs: [10.244.0.0/16], serviceCidrs: [10.0.0.0/24], nodeCidrs: [192.168.5.0/24]}\n`;

describe.skipIf(!helmBin || !kubectlBin)('the Helm chart on the real API server', () => {
  let cluster: TestCluster;
  let core: CoreV1Api;
  let runner: TestPodRunner;
  const procs: PodProcess[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'agentyard-helm-install-'));
  const values = writeValues(dir, 'values.yaml', VALUES);
  const noRanges = writeValues(dir, 'no-ranges.yaml', NO_RANGES);

  beforeAll(async () => {
    // No CRDs up front: the chart must bring them.
    const noCrds = join(dir, 'no-crds');
    mkdirSync(noCrds);
    writeFileSync(join(noCrds, 'none.yaml'), 'apiVersion: v1\nkind: List\nitems: []\n');
    cluster = await startTestCluster({ controllerManager: false, crdDir: noCrds });
    core = cluster.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: NS } } });
    await cluster.kubeConfig.makeApiClient(StorageV1Api).createStorageClass({ body: { metadata: { name: 'standard' }, provisioner: 'kubernetes.io/no-provisioner' } });
    runner = new TestPodRunner(cluster, dir, NS, 'app.kubernetes.io/component=preflight');
    runner.start();
  }, 120_000);

  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    await runner?.stop();
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const kube = (args: string[]) => helm([...args, '--kubeconfig', cluster.kubeconfigPath]);
  const kubectl = (...args: string[]) => run(kubectlBin!, ['--kubeconfig', cluster.kubeconfigPath, ...args], { maxBuffer: 16 * 1024 * 1024 });
  const preflight = (args: string[], kubeconfig = cluster.kubeconfigPath) => agentyard(['preflight', '-n', NS, ...args], { KUBECONFIG: kubeconfig });

  it('every ci value file renders manifests the API server accepts (server-side apply, dry run)', async () => {
    // Namespaces of their own (there is no namespace controller to delete them afterwards).
    await core.createNamespace({ body: { metadata: { name: 'dry-run' } } });
    for (const [i, file] of readdirSync(join(CHART, 'ci')).entries()) {
      await core.createNamespace({ body: { metadata: { name: `dry-run-sandboxes-${i}` } } });
      const rendered = await helm(['template', 'agentyard', CHART, '-n', 'dry-run', '--include-crds', '-f', join(CHART, 'ci', file), '--set', `sandboxNamespace.name=dry-run-sandboxes-${i}`]);
      expect(rendered.ok, rendered.out).toBe(true);
      const manifest = writeValues(dir, `rendered-${file}`, rendered.out);
      const applied = await kubectl('apply', '--server-side', '--dry-run=server', '--field-manager=helm', '-f', manifest);
      expect(applied.stdout, file).toMatch(/deployment\.apps\/agentyard-controller serverside-applied \(server dry run\)/);
    }
  });

  it('preflight, before anything is installed, lists every problem with its fix', async () => {
    const before = await preflight(['-f', values]);
    expect(before.code).toBe(1);
    expect(before.out).toMatch(/FAIL\s+CRDs installed: missing: sandboxes\.agentyard\.dev, conversations\.agentyard\.dev, sandboxconfigurations\.agentyard\.dev\n\s+fix: kubectl apply --server-side -f charts\/agentyard\/crds\//);
    expect(before.out).toMatch(/FAIL\s+sandbox namespace agentyard-sandboxes: does not exist\n\s+fix: kubectl create namespace agentyard-sandboxes/);
    expect(before.out).toMatch(/FAIL\s+secret agentyard\/agentyard-api-key \(secrets\.apiKey\): missing\n\s+fix: kubectl -n agentyard create secret generic agentyard-api-key --from-literal=api-key=\.\.\./);
    expect(before.out).toMatch(/FAIL\s+RBAC for the controller: service account agentyard\/agentyard-controller may not: watch sandboxes\.agentyard\.dev in agentyard-sandboxes/);
    expect(before.out).toMatch(/ok\s+storage class: standard exists/);
    expect(before.out).toMatch(/ok\s+sandbox URL settings: sandbox URLs look like http:\/\/<runtime_id>-runtime\.agents\.example\.com/);
    const inconsistent = await preflight(['-f', values, '-f', writeValues(dir, 'bad-pattern.yaml', 'runtime: {urlPattern: "{runtime_id}.elsewhere.example.com"}\n')]);
    expect(inconsistent.out).toMatch(/FAIL\s+sandbox URL settings: RUNTIME_URL_PATTERN '\{runtime_id\}\.elsewhere\.example\.com' disagrees with RUNTIME_BASE_URL 'agents\.example\.com'/);
    const wrong = await preflight(['-f', values, '-f', writeValues(dir, 'wrong.yaml', 'runtime: {storageClass: nosuch, disableSsl: false}\ningress: {tlsSecret: ""}\nsandboxNamespace: {name: agentyard}\n')]);
    expect(wrong.code).toBe(1);
    expect(wrong.out).toMatch(/FAIL\s+storage class: StorageClass 'nosuch' does not exist; sandboxes would never start\n\s+fix: Set runtime\.storageClass to one of `kubectl get storageclass`/);
    expect(wrong.out).toMatch(/FAIL\s+sandbox namespace agentyard: is the release namespace; sandboxes run agent-written code and must live apart from the application\n\s+fix: Set sandboxNamespace\.name to another namespace, e\.g\. agentyard-sandboxes/);
    expect(wrong.out).toMatch(/FAIL\s+sandbox URL settings: sandbox URLs look like https:\/\/<runtime_id>-runtime\.agents\.example\.com, but no wildcard TLS Secret is set \(ingress\.tlsSecret, RUNTIME_TLS_SECRET\)\n\s+fix: Set ingress\.tlsSecret/);
  });

  it('install without the cluster ranges fails, naming the ranges the cluster reports', async () => {
    // A node as the kubelet would register it: its Pod range and its addresses.
    await core.createNode({ body: { metadata: { name: 'node-a' }, spec: { podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24'] } } });
    const node = await core.readNode({ name: 'node-a' });
    node.status = { addresses: [{ type: 'InternalIP', address: '192.168.5.10' }, { type: 'Hostname', address: 'node-a' }] };
    await core.replaceNodeStatus({ name: 'node-a', body: node });
    const dryRun = (...set: string[]) => kube(['install', 'agentyard', CHART, '-n', NS, '-f', noRanges, '--dry-run=server', ...set.flatMap((v) => ['--set', v])]);
    expect((await dryRun()).out).toMatch(/networkPolicy\.podCidrs is required: .*; this cluster answers 10\.244\.1\.0\/24 for the nodes' spec\.podCIDRs/);
    // The API server's own ServiceCIDR (--service-cluster-ip-range of the test cluster).
    expect((await dryRun('networkPolicy.podCidrs={10.244.0.0/16}')).out).toMatch(/networkPolicy\.serviceCidrs is required: .*; this cluster answers 10\.0\.0\.0\/24 for its ServiceCIDRs/);
    expect((await dryRun('networkPolicy.podCidrs={10.244.0.0/16}', 'networkPolicy.serviceCidrs={10.0.0.0/24}')).out).toMatch(/networkPolicy\.nodeCidrs is required: .*; this cluster answers 192\.168\.5\.10\/32 for its nodes' addresses/);
  });

  it('install fails early and clearly while the sandbox namespace or a pre-created secret is missing', async () => {
    // A server-side dry run already looks things up.
    const noNamespace = await kube(['install', 'agentyard', CHART, '-n', NS, '-f', values, '--dry-run=server']);
    expect(noNamespace.ok).toBe(false);
    expect(noNamespace.out).toMatch(/sandboxNamespace\.name: namespace "agentyard-sandboxes" does not exist; create it first/);
    await core.createNamespace({ body: { metadata: { name: SANDBOXES, labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } } } });
    const noSecret = await kube(['install', 'agentyard', CHART, '-n', NS, '-f', values]);
    expect(noSecret.ok).toBe(false);
    expect(noSecret.out).toMatch(/secrets\.apiKey: Secret "agentyard-api-key" is missing in namespace "agentyard"; create it before installing: kubectl -n agentyard create secret generic agentyard-api-key --from-literal=api-key=\.\.\./);
    await core.createNamespacedSecret({ namespace: NS, body: { metadata: { name: 'agentyard-api-key' }, stringData: { 'api-key': 'ay_helm_admin_key_0123456789' } } });
    const noModelKey = await kube(['install', 'agentyard', CHART, '-n', NS, '-f', values]);
    expect(noModelKey.out).toMatch(/secrets\.modelProvider: Secret "agentyard-llm" is missing in namespace "agentyard"; create it before installing/);
    // Where the old chart had it: beside the sandboxes, whose Secrets the API may read. Refused.
    await core.createNamespacedSecret({ namespace: SANDBOXES, body: { metadata: { name: 'agentyard-llm' }, stringData: { 'api-key': 'sk-not-a-real-model-key' } } });
    await core.createNamespacedSecret({ namespace: NS, body: { metadata: { name: 'agentyard-llm' }, stringData: { 'api-key': 'sk-not-a-real-model-key' } } });
    const noCertificate = await kube(['install', 'agentyard', CHART, '-n', NS, '-f', values]);
    expect(noCertificate.out).toMatch(/ingress\.tlsSecret: TLS Secret "wildcard-agents" is missing in namespace "agentyard" \(an Ingress reads it from its own namespace\)/);
    await core.createNamespacedSecret({ namespace: NS, body: { metadata: { name: 'wildcard-agents' }, type: 'kubernetes.io/tls', stringData: { 'tls.crt': 'not-a-real-certificate', 'tls.key': 'not-a-real-key' } } });
    const beside = await kube(['install', 'agentyard', CHART, '-n', NS, '-f', values, '--dry-run=server']);
    expect(beside.ok).toBe(false);
    expect(beside.out).toMatch(/secrets\.modelProvider: a Secret "agentyard-llm" exists in the sandbox namespace "agentyard-sandboxes"\. The installation's keys live in the release namespace "agentyard" only: the API's service account may read every Secret of the sandbox namespace\. Delete it there: kubectl -n agentyard-sandboxes delete secret agentyard-llm/);
    const preflightBeside = await preflight(['-f', values]);
    expect(preflightBeside.out).toMatch(/FAIL\s+installation secrets out of the API's reach: in the sandbox namespace, whose Secrets the API may read: agentyard-llm\n\s+fix: Keep them in agentyard only: kubectl -n agentyard-sandboxes delete secret agentyard-llm/);
    await core.deleteNamespacedSecret({ name: 'agentyard-llm', namespace: SANDBOXES });
    await core.createNamespacedSecret({ namespace: SANDBOXES, body: { metadata: { name: 'wildcard-agents' }, type: 'kubernetes.io/tls', stringData: { 'tls.crt': 'not-a-real-certificate', 'tls.key': 'not-a-real-key' } } });
    const tlsBeside = await kube(['install', 'agentyard', CHART, '-n', NS, '-f', values, '--dry-run=server']);
    expect(tlsBeside.out).toMatch(/ingress\.tlsSecret: a Secret "wildcard-agents" exists in the sandbox namespace "agentyard-sandboxes", where the API's service account may read its private key/);
    await core.deleteNamespacedSecret({ name: 'wildcard-agents', namespace: SANDBOXES });
    // A private CA the API should trust, named but not there: the API Pod would never start.
    const noCa = await kube(['install', 'agentyard', CHART, '-n', NS, '-f', values, '--set', 'api.caBundle.name=corporate-ca', '--dry-run=server']);
    expect(noCa.ok).toBe(false);
    expect(noCa.out).toMatch(/api\.caBundle: ConfigMap "corporate-ca" is missing in namespace "agentyard", so the API would never start; create it: kubectl -n agentyard create configmap corporate-ca --from-file=ca\.crt=ca\.pem/);
  });

  it('install fails early and clearly for a StorageClass the cluster lacks or a missing database Secret', async () => {
    const noStorageClass = await kube(['install', 'agentyard', CHART, '-n', NS, '-f', values, '--set', 'runtime.storageClass=nosuch', '--dry-run=server']);
    expect(noStorageClass.ok).toBe(false);
    expect(noStorageClass.out).toMatch(/runtime\.storageClass \(STORAGE_CLASS\): StorageClass "nosuch" does not exist in this cluster, so sandboxes would never start; pick one of `kubectl get storageclass`/);
    const external = ['--set', 'database.external=true', '--dry-run=server'];
    const noDatabase = await kube(['install', 'agentyard', CHART, '-n', NS, '-f', values, ...external]);
    expect(noDatabase.ok).toBe(false);
    expect(noDatabase.out).toMatch(/secrets\.database: Secret "agentyard-database" is missing in namespace "agentyard"; create it before installing: kubectl -n agentyard create secret generic agentyard-database --from-literal=url=\.\.\./);
    await core.createNamespacedSecret({ namespace: NS, body: { metadata: { name: 'agentyard-database' }, stringData: { uri: 'postgres://agentyard@db.example.com/agentyard' } } });
    const wrongKey = await kube(['install', 'agentyard', CHART, '-n', NS, '-f', values, ...external]);
    expect(wrongKey.ok).toBe(false);
    expect(wrongKey.out).toMatch(/secrets\.database: Secret "agentyard-database" in namespace "agentyard" has no key "url"/);
    await core.deleteNamespacedSecret({ name: 'agentyard-database', namespace: NS });
  });

  it('installs; preflight and helm test then pass', async () => {
    const installed = await kube(['install', 'agentyard', CHART, '-n', NS, '-f', values]);
    expect(installed.ok, installed.out).toBe(true);
    expect((await kubectl('get', 'crd', 'sandboxes.agentyard.dev', 'conversations.agentyard.dev')).stdout).toContain('conversations.agentyard.dev');
    const after = await preflight(['-f', values]);
    expect(after.out).toMatch(/ok\s+cluster ranges denied to sandboxes: the Pod ranges and addresses of 1 node\(s\) and 1 ServiceCIDR\(s\) are denied/);
    expect(after.out).toMatch(/ok\s+installation secrets out of the API's reach: none in agentyard-sandboxes, and agentyard\/agentyard-api may read none of them/);
    expect(after.out).toMatch(/all 12 checks passed/);
    expect(after.code).toBe(0);
    // Ranges that miss part of the cluster are a hole, named with the value it belongs in.
    const narrow = await preflight(['-f', values, '-f', writeValues(dir, 'narrow.yaml', 'networkPolicy: {podCidrs: [10.245.0.0/16], nodeCidrs: [192.168.6.0/24]}\n')]);
    expect(narrow.code).toBe(1);
    expect(narrow.out).toMatch(/FAIL\s+cluster ranges denied to sandboxes: sandboxes could reach 10\.244\.1\.0\/24 \(not in networkPolicy\.podCidrs\), 192\.168\.5\.10 \(not in networkPolicy\.nodeCidrs\)\n\s+fix: Add each range/);

    const tested = await kube(['test', 'agentyard', '-n', NS, '--timeout', '60s']);
    expect(tested.ok, `${tested.out}\n${runner.outputs.join('\n')}`).toBe(true);
    expect(runner.outputs.at(-1)).toMatch(/all 12 checks passed/);
  });

  it('helm test fails, saying how to fix it, when the cluster no longer has what the release needs', async () => {
    await core.deleteNamespacedSecret({ name: 'agentyard-llm', namespace: NS });
    const tested = await kube(['test', 'agentyard', '-n', NS, '--timeout', '60s']);
    expect(tested.ok).toBe(false);
    expect(runner.outputs.at(-1)).toMatch(/FAIL\s+secret agentyard\/agentyard-llm \(--secret\): missing\n\s+fix: kubectl -n agentyard create secret generic agentyard-llm/);
    await core.createNamespacedSecret({ namespace: NS, body: { metadata: { name: 'agentyard-llm' }, stringData: { 'api-key': 'sk-not-a-real-model-key' } } });
    // Someone without rights is told so, not given a false pass.
    const nobody = join(dir, 'nobody.kubeconfig');
    writeFileSync(nobody, (await cluster.userKubeConfig('nobody')).exportConfig());
    const denied = await preflight(['-f', values], nobody);
    expect(denied.code).toBe(1);
    expect(denied.out).toMatch(/FAIL\s+CRDs installed: not allowed to look: .*forbidden.*\n\s+fix: Run preflight as a cluster administrator, or through `helm test <release>`/);
  });

  it('the controller and the API do their work with exactly the RBAC the chart grants them', async () => {
    const apps = cluster.kubeConfig.makeApiClient(AppsV1Api);
    const spec = async (name: string) => (await apps.readNamespacedDeployment({ name, namespace: NS })).spec!.template.spec!;
    const controller = await runPodSpec(cluster, dir, NS, await spec('agentyard-controller'));
    procs.push(controller);
    const api = await runPodSpec(cluster, dir, NS, await spec('agentyard-api'), { AGENTYARD_PORT: '0', AGENTYARD_HOST: '127.0.0.1', AGENTYARD_DATA_DIR: join(dir, 'api-data') });
    procs.push(api);
    await eventually(async () => (controller.output().includes('"leading"') ? true : undefined), 'the controller to lead', 30_000).catch((err: Error) => {
      throw new Error(`${err.message}\n${controller.output()}`);
    });
    const lease = await cluster.kubeConfig.makeApiClient(CoordinationV1Api).readNamespacedLease({ name: 'agentyard-controller', namespace: NS });
    expect(lease.spec?.holderIdentity).toBeTruthy();
    const url = await eventually(async () => /agentyard api is up at (\S+)/.exec(api.output())?.[1], 'the API to listen', 30_000).catch((err: Error) => {
      throw new Error(`${err.message}\n${api.output()}`);
    });

    const res = await fetch(`${url}/api/v1/app-conversations`, {
      method: 'POST',
      headers: { authorization: 'Bearer ay_helm_admin_key_0123456789', 'content-type': 'application/json' },
      body: JSON.stringify({ secrets: { DEPLOY_TOKEN: 'tok-helm-0123456789' } }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const store = new KubeStore(cluster.kubeConfig);
    const conv = await eventually(async () => (await store.list(ConversationKind, SANDBOXES)).items.find((c) => c.status?.sandboxName), 'the controller to place the conversation', 30_000);
    const sandbox = conv.status!.sandboxName!;
    await eventually(async () => ((await store.get(SandboxKind, SANDBOXES, sandbox))?.status?.phase === 'STARTING' ? true : undefined), 'the sandbox to start', 30_000);
    // What the controller made of it, in the sandbox namespace, with its own identity.
    const pod = await core.readNamespacedPod({ name: sandbox, namespace: SANDBOXES });
    // The model through the API's gateway with the sandbox's own token; the provider key only in the API's Pod.
    const env = pod.spec?.containers[0]?.env ?? [];
    // Optional: a warm-pool member has no model token until a user claims it (handed over then).
    expect(env.find((e) => e.name === 'LLM_API_KEY')?.valueFrom?.secretKeyRef).toEqual({ name: `${sandbox}-session`, key: 'model-token', optional: true });
    expect(env.find((e) => e.name === 'LLM_BASE_URL')?.value).toMatch(/\/model-gateway\/v1$/);
    expect(JSON.stringify(pod.spec)).not.toContain('agentyard-llm');
    expect((await spec('agentyard-api')).containers[0]?.env?.find((e) => e.name === 'LLM_API_KEY')?.valueFrom?.secretKeyRef).toEqual({ name: 'agentyard-llm', key: 'api-key' });
    expect(api.env.LLM_API_KEY).toBe('sk-not-a-real-model-key');
    // What the API's own identity may read: the Secrets beside the sandboxes, none of the release's.
    const canI = async (...args: string[]) => (await kubectl('auth', 'can-i', '--as=system:serviceaccount:agentyard:agentyard-api', ...args).catch((e: { stdout: string }) => e)).stdout.trim();
    expect(await canI('get', 'secret/agentyard-llm', '-n', NS)).toBe('no');
    expect(await canI('get', 'secret/wildcard-agents', '-n', NS)).toBe('no');
    expect(await canI('list', 'secrets', '-n', NS)).toBe('no');
    expect(await canI('get', `secret/${conv.spec.secretsRef!}`, '-n', SANDBOXES)).toBe('yes');
    await core.readNamespacedService({ name: `sandbox-${sandbox}`, namespace: SANDBOXES });
    const ingress = await cluster.kubeConfig.makeApiClient(NetworkingV1Api).readNamespacedIngress({ name: sandbox, namespace: SANDBOXES });
    expect(ingress.spec?.rules?.[0]?.host).toBe(`${sandbox}-runtime.agents.example.com`);
    expect((await core.readNamespacedSecret({ name: conv.spec.secretsRef!, namespace: SANDBOXES })).data?.DEPLOY_TOKEN).toBeTruthy();
    // The Sandbox Configuration written around the API, then deleted (as kubectl would, with an admin's
    // identity): the controller records both in the audit trail with its own identity.
    await store.create(SandboxConfigurationKind, { apiVersion: API_VERSION, kind: 'SandboxConfiguration', metadata: { name: SANDBOX_CONFIGURATION_NAME, namespace: SANDBOXES }, spec: { idleTimeSeconds: 900 } });
    await eventually(async () => ((await store.get(SandboxConfigurationKind, SANDBOXES, SANDBOX_CONFIGURATION_NAME))?.spec.changes?.length === 1 ? true : undefined), 'the outside change in the trail', 30_000);
    await store.delete(SandboxConfigurationKind, SANDBOXES, SANDBOX_CONFIGURATION_NAME);
    const kept = await eventually(async () => {
      const c = await store.get(SandboxConfigurationKind, SANDBOXES, SANDBOX_CONFIGURATION_NAME);
      return c?.spec.changes?.length === 2 ? c : undefined;
    }, 'the deletion in the trail of a new object', 30_000);
    expect(kept.spec.changes!.map((c) => [c.field, c.from, c.to, c.outsideApi, c.objectDeleted ?? false])).toEqual([
      ['idleTimeSeconds', null, 900, true, false],
      ['idleTimeSeconds', 900, null, true, true],
    ]);
    expect(controller.output() + api.output()).not.toMatch(/forbidden/i);
  });

  it('a support bundle holds versions, resources, events and logs, and no secret value', async () => {
    const bundle = join(dir, 'bundle.tar.gz');
    const made = await agentyard(['support-bundle', '-n', NS, '--output', bundle], { KUBECONFIG: cluster.kubeconfigPath });
    expect(made.code, made.out).toBe(0);
    const listing = (await run('tar', ['-tzf', bundle])).stdout;
    for (const file of ['versions.json', 'agentyard/deployments.json', 'agentyard/secrets.json', 'agentyard-sandboxes/sandboxes.json', 'agentyard-sandboxes/sandboxconfigurations.json', 'agentyard-sandboxes/events.json']) expect(listing).toContain(`agentyard-support/${file}`);
    await run('tar', ['-xzf', bundle, '-C', dir]);
    // The controller's events about the sandbox above, newest first.
    const events = JSON.parse(readFileSync(join(dir, 'agentyard-support/agentyard-sandboxes/events.json'), 'utf8')) as { items: CoreV1Event[] };
    expect(events.items.length).toBeGreaterThan(0);
    const times = events.items.map(eventTime);
    expect(times).toEqual([...times].sort((a, b) => b - a));
    for (const plain of ['ay_helm_admin_key_0123456789', 'sk-not-a-real-model-key', 'tok-helm-0123456789']) {
      const encoded = Buffer.from(plain).toString('base64').replace(/=+$/, '');
      const leaks = (await run('sh', ['-c', `grep -rl -e '${plain}' -e '${encoded}' ${dir}/agentyard-support || true`])).stdout;
      expect(leaks, plain).toBe('');
    }
  });

  it('upgrades with a changed setting, and uninstalls keeping the data volume and the CRDs', async () => {
    await Promise.all(procs.map((p) => p.stop()));
    // The documented upgrade: CRDs first (Helm never upgrades them), then the release.
    const crds = await kubectl('apply', '--server-side', '--force-conflicts', '-f', join(CHART, 'crds'));
    expect(crds.stdout).toMatch(/customresourcedefinition\.apiextensions\.k8s\.io\/sandboxes\.agentyard\.dev serverside-applied/);
    const upgraded = await kube(['upgrade', 'agentyard', CHART, '-n', NS, '-f', values, '--set', 'lifecycle.idleTimeSeconds=600']);
    expect(upgraded.ok, upgraded.out).toBe(true);
    const apps = cluster.kubeConfig.makeApiClient(AppsV1Api);
    const controller = await apps.readNamespacedDeployment({ name: 'agentyard-controller', namespace: NS });
    expect(controller.spec!.template.spec!.containers[0]!.env!.find((e) => e.name === 'AGENTYARD_IDLE_TIME_SECONDS')?.value).toBe('600');

    // The pre-delete hook (Job agentyard-uninstall) needs a Job controller and a node to run it; this
    // cluster has neither, so it is validated here by the real API server (server-side dry run) and
    // run for real in e2e/node/story.test.ts (its command: e2e/kube/uninstall-cleanup.test.ts).
    const hooks = (await kube(['get', 'hooks', 'agentyard', '-n', NS])).out;
    expect(hooks).toMatch(/kind: Job[\s\S]*uninstall-cleanup/);
    const preDelete = hooks.split(/^---$/m).filter((doc) => /helm\.sh\/hook: pre-delete/.test(doc));
    expect(preDelete.length).toBe(5); // ServiceAccount, Role, RoleBinding, NetworkPolicy, Job
    writeFileSync(join(dir, 'hooks.yaml'), preDelete.join('\n---\n'));
    const validated = await kubectl('apply', '--dry-run=server', '-f', join(dir, 'hooks.yaml'));
    expect(validated.stdout).toMatch(/job\.batch\/agentyard-uninstall created \(server dry run\)/);
    const removed = await kube(['uninstall', 'agentyard', '-n', NS, '--no-hooks']);
    expect(removed.ok, removed.out).toBe(true);
    await expect(apps.readNamespacedDeployment({ name: 'agentyard-controller', namespace: NS })).rejects.toThrow();
    await core.readNamespacedPersistentVolumeClaim({ name: 'agentyard-api-data', namespace: NS });
    await kubectl('get', 'crd', 'sandboxes.agentyard.dev');
  });
});
