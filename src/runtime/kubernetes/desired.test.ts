import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../../api/sandbox.ts';
import { LABEL_WARM_POOL } from '../../api/warm-pool.ts';
import { loadRuntimeAddressing } from './addressing.ts';
import type { V1Container, V1Pod as Pod } from '@kubernetes/client-node';
import { BUNDLE_CLI, BUNDLE_DIR, BUNDLE_NODE } from './bundle.ts';
import { desiredArchivePod, desiredIngress, desiredPod, desiredPvc, desiredService, internalUrl, type KubeRuntimeSettings } from './desired.ts';
import { podState } from './kubernetes-runtime.ts';
import { subscriptionEndpointEnv } from '../../agent-server/subscription/endpoints-env.ts';

const sb: Sandbox = {
  apiVersion: 'agentyard.dev/v1alpha1',
  kind: 'Sandbox',
  metadata: { name: 'abc', namespace: 'sandboxes', uid: 'uid-1' },
  spec: { paused: false, resources: { cpu: '2', memory: '4Gi', storage: '20Gi' } },
};
const settings: KubeRuntimeSettings = {
  namespace: 'sandboxes',
  image: 'agentyard:1',
  storageClass: 'fast',
  addressing: loadRuntimeAddressing({ RUNTIME_BASE_URL: 'agents.example.com', RUNTIME_DISABLE_SSL: 'false' }),
  sinkBaseUrl: 'http://api.agentyard.svc',
  llm: { model: 'openai/gpt', gatewayUrl: 'http://api.agentyard.svc/model-gateway/v1' },
  tlsSecretName: 'wildcard-tls',
};

describe('desired objects for a sandbox', () => {
  it('runs the agent server as a non-root Pod without a service-account token, keys only by reference', () => {
    const pod = desiredPod(sb, settings);
    expect(pod.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'Sandbox', name: 'abc', uid: 'uid-1', controller: true });
    expect(pod.spec).toMatchObject({ automountServiceAccountToken: false, enableServiceLinks: false, securityContext: { runAsNonRoot: true, runAsUser: 1000 } });
    const c = pod.spec!.containers[0]!;
    expect(c.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    expect(c.resources).toEqual({ requests: { cpu: '2', memory: '4Gi' }, limits: { cpu: '2', memory: '4Gi' } });
    const env = Object.fromEntries(c.env!.map((e) => [e.name, e]));
    expect(env['OH_SESSION_API_KEYS_0']!.valueFrom?.secretKeyRef).toEqual({ name: 'abc-session', key: 'key' });
    // The model through the gateway, with the sandbox's own token: no provider key in the Pod.
    expect(env['LLM_BASE_URL']!.value).toBe('http://api.agentyard.svc/model-gateway/v1');
    expect(env['LLM_API_KEY']!.valueFrom?.secretKeyRef).toEqual({ name: 'abc-session', key: 'model-token', optional: true });
    // Optional: a warm-pool member starts before it has a model token (its hand-over issues one).
    expect(c.env!.flatMap((e) => (e.valueFrom?.secretKeyRef ? [e.valueFrom.secretKeyRef.name] : []))).toEqual(['abc-session', 'abc-session', 'abc-session', 'abc-session']);
    expect(env['LLM_NUM_RETRIES']!.value).toBe('10'); // rides out a restart of the API the gateway is part of
    expect(env['AGENTYARD_EVENT_SINK_URL']!.value).toBe('http://api.agentyard.svc/api/v1/webhooks/abc');
    expect(c.env!.filter((e) => e.value !== undefined).map((e) => e.name)).not.toContain('LLM_API_KEY');
  });

  it("gives every sandbox's agent server the ChatGPT subscription's addresses of the installation, and none when it sets none", () => {
    const agentServerEnv = subscriptionEndpointEnv({ OH_OPENAI_AUTH_ISSUER: 'https://openai-proxy.corp.example/auth', OH_OPENAI_CODEX_BASE_URL: 'https://openai-proxy.corp.example/codex', LLM_API_KEY: 'sk-not-passed' });
    const env = desiredPod(sb, { ...settings, agentServerEnv }).spec!.containers[0]!.env!;
    expect(env.filter((e) => e.name.startsWith('OH_OPENAI_'))).toEqual([
      { name: 'OH_OPENAI_AUTH_ISSUER', value: 'https://openai-proxy.corp.example/auth' },
      { name: 'OH_OPENAI_CODEX_BASE_URL', value: 'https://openai-proxy.corp.example/codex' },
    ]);
    expect(JSON.stringify(env)).not.toContain('sk-not-passed');
    expect(desiredPod(sb, settings).spec!.containers[0]!.env!.map((e) => e.name).filter((n) => n.startsWith('OH_OPENAI_'))).toEqual([]);
    // A value that is no URL stops the controller at start, naming the variable.
    expect(() => subscriptionEndpointEnv({ OH_OPENAI_CODEX_BASE_URL: 'openai-proxy:8080' })).toThrow("OH_OPENAI_CODEX_BASE_URL must be an http(s) URL, got 'openai-proxy:8080'");
  });

  it('gives the agent server its own host as the Canvas App ingress and the web app as the page allowed to open sessions', () => {
    const env = (st: KubeRuntimeSettings) => Object.fromEntries(desiredPod(sb, st).spec!.containers[0]!.env!.map((e) => [e.name, e.value]));
    expect(env(settings)['OH_APP_BACKEND_PUBLIC_URL']).toBeUndefined();
    const on = env({ ...settings, appBackends: { webOrigins: ['https://app.example.com'] } });
    expect(on['OH_APP_BACKEND_PUBLIC_URL']).toBe('https://abc-runtime.agents.example.com');
    expect(on['OH_ALLOW_CORS_ORIGINS']).toBe('["https://app.example.com"]');
    expect(on['OH_TRUST_FORWARDED_HEADERS']).toBe('true');
  });

  it('keeps the workspace on a PVC of STORAGE_CLASS, exposes a Service and the sandbox host with TLS', () => {
    expect(desiredPvc(sb, settings).spec).toMatchObject({ storageClassName: 'fast', resources: { requests: { storage: '20Gi' } } });
    expect(desiredService(sb).spec?.selector).toEqual({ 'agentyard.dev/sandbox': 'abc' });
    const ing = desiredIngress(sb, settings);
    expect(ing.spec?.rules?.[0]?.host).toBe('abc-runtime.agents.example.com');
    expect(ing.spec?.tls).toEqual([{ hosts: ['abc-runtime.agents.example.com'], secretName: 'wildcard-tls' }]);
  });

  it('asks for the ingress controller\'s default certificate when TLS is on without a Secret, and for no TLS when it is off', () => {
    const { tlsSecretName: _, ...noSecret } = settings;
    expect(desiredIngress(sb, noSecret).spec?.tls).toEqual([{ hosts: ['abc-runtime.agents.example.com'] }]);
    const plain = { ...noSecret, addressing: loadRuntimeAddressing({ RUNTIME_BASE_URL: 'agents.example.com', RUNTIME_DISABLE_SSL: 'true' }) };
    expect(desiredIngress(sb, plain).spec?.tls).toBeUndefined();
  });
});

describe('the sandbox image is the user\'s; the agent server is brought in', () => {
  const withImages: KubeRuntimeSettings = { ...settings, image: 'python:3.13', agentImage: 'registry.example/agentyard:2', imagePullPolicy: 'Never', sandboxImagePullPolicy: 'IfNotPresent' };

  it('a warm-pool member warms up before it listens; a sandbox of its own does not', () => {
    const warmUp = (pod: Pod) => pod.spec!.containers[0]!.env!.find((e) => e.name === 'AGENTYARD_WARM_UP')?.value;
    const member: Sandbox = { ...sb, metadata: { ...sb.metadata, labels: { [LABEL_WARM_POOL]: 'pool' } } };
    expect(warmUp(desiredPod(member, settings))).toBe('1');
    expect(warmUp(desiredPod(sb, settings))).toBeUndefined();
  });

  it('runs the agent server from the bundle an init container of the agentyard image copied in', () => {
    const pod = desiredPod(sb, withImages);
    const [init] = pod.spec!.initContainers!;
    const c = pod.spec!.containers[0]!;
    expect(c.image).toBe('python:3.13');
    expect(c.imagePullPolicy).toBe('IfNotPresent');
    expect(init).toMatchObject({ name: 'agent-bundle', image: 'registry.example/agentyard:2', imagePullPolicy: 'Never' });
    // The init container fills the shared volume from the image's bundle; the sandbox mounts that
    // volume, read-only, exactly where the bundle's Node looks for its loader and libraries.
    const staging = init!.volumeMounts!.find((m) => m.name === 'agentyard')!.mountPath;
    expect(init!.command!.join(' ')).toContain(`cp -R ${BUNDLE_DIR}/. ${staging}/`);
    expect(c.volumeMounts).toContainEqual({ name: 'agentyard', mountPath: BUNDLE_DIR, readOnly: true });
    expect(pod.spec!.volumes).toContainEqual({ name: 'agentyard', emptyDir: { sizeLimit: '1Gi' } });
    expect(c.command!.slice(0, 3)).toEqual([BUNDLE_NODE, BUNDLE_CLI, 'agent-server']);
    expect(BUNDLE_NODE.startsWith(`${BUNDLE_DIR}/`) && BUNDLE_CLI.startsWith(`${BUNDLE_DIR}/`)).toBe(true);
    // Nothing that would make the image's own programs load the bundle's libraries.
    expect(c.env!.map((e) => e.name)).not.toContain('LD_LIBRARY_PATH');
    expect(c.env!.map((e) => e.name)).not.toContain('PATH');
  });

  it('a Sandbox\'s own image replaces the default; the bundle still comes from the agentyard image', () => {
    const pod = desiredPod({ ...sb, spec: { ...sb.spec, image: 'golang:1.25' } }, withImages);
    expect(pod.spec!.containers[0]!.image).toBe('golang:1.25');
    expect(pod.spec!.initContainers![0]!.image).toBe('registry.example/agentyard:2');
  });

  it('without a separate agentyard image, the sandbox image is the agentyard image (the chart default)', () => {
    const pod = desiredPod(sb, settings);
    expect(pod.spec!.initContainers![0]!.image).toBe('agentyard:1');
    expect(pod.spec!.containers[0]!.image).toBe('agentyard:1');
    expect(pod.spec!.containers[0]!).not.toHaveProperty('imagePullPolicy');
  });

  it('archives with the agentyard image, whatever the sandbox image holds', () => {
    const archive = desiredArchivePod({ ...sb, spec: { ...sb.spec, image: 'busybox:glibc' } }, withImages, 'stamp');
    expect(archive.spec!.containers[0]).toMatchObject({ image: 'registry.example/agentyard:2', imagePullPolicy: 'Never', command: ['tar', '-czf', '/archive/abc-stamp.tar.gz', '-C', '/workspace', '.'] });
  });

  it('with an object store, uploads to the presigned URL it is given: no archive volume, no credentials, restarted while the store is down', () => {
    const pod = desiredArchivePod(sb, withImages, 'stamp', { url: 'http://objects.agentyard.svc:8333/agentyard/internal/workspace-archives/abc-stamp.tar.gz?X-Amz-Signature=s' });
    const c = pod.spec!.containers[0]!;
    expect(c).toMatchObject({ image: 'registry.example/agentyard:2', command: ['/agentyard/bin/node', '/agentyard/app/src/cli/main.ts', 'archive-upload', '--dir', '/workspace'] });
    expect(c.env).toContainEqual({ name: 'AGENTYARD_ARCHIVE_UPLOAD_URL', value: expect.stringContaining('/internal/workspace-archives/abc-stamp.tar.gz') });
    expect(c.env!.every((e) => e.valueFrom === undefined)).toBe(true);
    expect(pod.spec!.volumes!.map((v) => v.persistentVolumeClaim?.claimName).filter(Boolean)).toEqual(['abc-workspace']);
    expect(c.volumeMounts).toContainEqual({ name: 'workspace', mountPath: '/workspace', readOnly: true });
    expect(pod.spec).toMatchObject({ restartPolicy: 'OnFailure', activeDeadlineSeconds: 6 * 3600, automountServiceAccountToken: false });
    expect(pod.metadata!.labels!['app.kubernetes.io/component']).toBe('sandbox-archive');
    expect(c.env!.map((e) => e.name)).not.toContain('AGENTYARD_CONVERSATION_FILES_UPLOAD_URL');
    // The CLI's own attempts unless the runtime is given a number (tests give fewer).
    expect(c.env!.map((e) => e.name)).not.toContain('AGENTYARD_ARCHIVE_UPLOAD_ATTEMPTS');
    const fewer = desiredArchivePod(sb, { ...withImages, archiveUploadAttempts: 2 }, 'stamp', { url: 'http://s/ws?X-Amz-Signature=s' });
    expect(fewer.spec!.containers[0]!.env).toContainEqual({ name: 'AGENTYARD_ARCHIVE_UPLOAD_ATTEMPTS', value: '2' });
  });

  it("with a second URL, uploads the agent server's conversation directories too, and carries its stamp for the controller", () => {
    const pod = desiredArchivePod(sb, withImages, 'stamp', { url: 'http://s/ws?X-Amz-Signature=s', conversationFilesUrl: 'http://s/internal/conversation-files/abc-stamp.tar.gz?X-Amz-Signature=t' });
    const c = pod.spec!.containers[0]!;
    // The directory the agent server is given as --data-dir in the sandbox Pod.
    const agent = desiredPod(sb, settings).spec!.containers[0]!.command!;
    expect(c.command!.slice(-2)).toEqual(['--conversations', `${agent[agent.indexOf('--data-dir') + 1]}/conversations`]);
    expect(c.env).toContainEqual({ name: 'AGENTYARD_CONVERSATION_FILES_UPLOAD_URL', value: 'http://s/internal/conversation-files/abc-stamp.tar.gz?X-Amz-Signature=t' });
    expect(pod.metadata!.annotations).toEqual({ 'agentyard.dev/archive-stamp': 'stamp' });
  });

  it('probes the agent server: a startup grace, liveness on /alive, readiness on /ready (never /health, which reports a full disk)', () => {
    const c = desiredPod(sb, settings).spec!.containers[0]!;
    const port = c.ports![0]!.containerPort;
    expect(c.startupProbe?.httpGet).toEqual({ path: '/alive', port });
    expect(c.livenessProbe?.httpGet).toEqual({ path: '/alive', port });
    expect(c.readinessProbe?.httpGet).toEqual({ path: '/ready', port });
    expect(c.startupProbe!.periodSeconds! * c.startupProbe!.failureThreshold!).toBeGreaterThanOrEqual(30);
    expect(c.livenessProbe!.periodSeconds! * c.livenessProbe!.failureThreshold!).toBeGreaterThanOrEqual(30);
  });

  // The restricted Pod Security Standard, checked field by field for every Pod agentyard creates.
  const pods: [string, Pod][] = [
    ['sandbox', desiredPod(sb, withImages)],
    ['archive', desiredArchivePod(sb, withImages, 'stamp')],
  ];
  it.each(pods)('%s Pod: restricted profile, read-only root filesystems, writes only to volumes', (_name, pod) => {
    expect(pod.spec!.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000, fsGroupChangePolicy: 'OnRootMismatch', seccompProfile: { type: 'RuntimeDefault' } });
    expect(pod.spec!.automountServiceAccountToken).toBe(false);
    expect(pod.spec!.hostNetwork ?? false).toBe(false);
    const containers: V1Container[] = [...(pod.spec!.initContainers ?? []), ...pod.spec!.containers];
    for (const c of containers) {
      expect(c.securityContext, c.name).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
      expect(c.ports?.some((p) => p.hostPort) ?? false).toBe(false);
      const mounts = (c.volumeMounts ?? []).map((m) => m.mountPath);
      // Every absolute path a container writes to (cp's target, mkdir, tar's output, the agent
      // server's workspace, data dir and HOME) is on a writable volume.
      const tokens = c.command!.flatMap((t) => t.split(/\s+/));
      const written = tokens.flatMap((t, i) => {
        const prev = tokens[i - 1] ?? '';
        if (['--workspace', '--data-dir', '-czf'].includes(prev) || (prev === '-p' && tokens[i - 2] === 'mkdir') || (tokens[i - 2] === '-p' && tokens[i - 3] === 'mkdir')) return [t];
        if (tokens[i - 2] === '-R' && tokens[i - 3] === 'cp') return [t];
        return [];
      });
      written.push(...(c.env ?? []).filter((e) => e.name === 'HOME').map((e) => e.value!));
      expect(written.length, c.name).toBeGreaterThan(0);
      const writable = (c.volumeMounts ?? []).filter((m) => !m.readOnly).map((m) => m.mountPath);
      for (const path of written) expect(writable.some((m) => path === m || path.startsWith(`${m}/`)), `${c.name} writes ${path}`).toBe(true);
    }
    for (const v of pod.spec!.volumes!) expect(v.hostPath).toBeUndefined();
  });
});

describe('podState', () => {
  const pod = (status: V1Pod['status']): V1Pod => ({ metadata: { name: 'abc', uid: 'uid-1' }, status });
  it.each([
    ['ready', pod({ phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] }), { phase: 'running' }],
    ['pending', pod({ phase: 'Pending' }), { phase: 'starting' }],
    // The kubelet restarts it: the controller counts the deaths and decides on a crash loop itself.
    [
      'container dead, the kubelet backing off',
      pod({ phase: 'Running', containerStatuses: [{ name: 'c', image: 'i', imageID: '', ready: false, restartCount: 5, state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off' } }, lastState: { terminated: { exitCode: 137, reason: 'Error', signal: 9 } } }] }),
      { phase: 'starting', death: { id: 'pod uid-1 death 6', reason: 'Error' } },
    ],
    [
      'running again after a restart',
      pod({ phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }], containerStatuses: [{ name: 'c', image: 'i', imageID: '', ready: true, restartCount: 6, state: { running: {} }, lastState: { terminated: { exitCode: 137, reason: 'Error' } } }] }),
      { phase: 'running', death: { id: 'pod uid-1 death 6', reason: 'Error', message: 'The agent server container ended (Error, exit code 137)' } },
    ],
    ['image not pullable', pod({ phase: 'Pending', containerStatuses: [{ name: 'c', image: 'i', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'ImagePullBackOff', message: 'no such image' } } }] }), { phase: 'failed', reason: 'ImagePullBackOff' }],
    ['failed as a whole (evicted): replaced', pod({ phase: 'Failed', reason: 'Evicted', message: 'low memory' }), { phase: 'exited', death: { id: 'pod uid-1 Failed', reason: 'Evicted', message: 'low memory' } }],
  ])('%s', (_n, p, want) => {
    expect(podState('abc', p, 'https://abc-runtime.x')).toMatchObject(want);
  });

  it('a container that never died reports no death', () => {
    const p = pod({ phase: 'Running', containerStatuses: [{ name: 'c', image: 'i', imageID: '', ready: false, restartCount: 0, state: { running: {} } }] });
    expect(podState('abc', p, 'https://abc-runtime.x')).toEqual({ phase: 'starting', runtimeId: 'abc', message: 'Waiting for the agent server to be ready' });
  });

  it('reports a ready Pod with its public URL and its Service as the control plane address', () => {
    const ready = pod({ phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] });
    expect(podState('abc', ready, 'https://abc-runtime.x', internalUrl('abc', 'sandboxes'))).toEqual({ phase: 'running', runtimeId: 'abc', url: 'https://abc-runtime.x', internalUrl: 'http://sandbox-abc.sandboxes.svc:80' });
    // The address names the Service the runtime creates, on its port.
    const svc = desiredService(sb);
    expect(`http://${svc.metadata?.name}.${svc.metadata?.namespace}.svc:${svc.spec?.ports?.[0]?.port}`).toBe(internalUrl('abc', 'sandboxes'));
  });
});
