// The Kubernetes objects a Sandbox runs as: a Pod (the agent server), a PVC (the workspace, kept
// while paused), a Service and an Ingress host. Pure functions: no I/O.
//
// Sandbox and Conversation resources live in the sandbox namespace together with these children,
// because owner references cannot cross namespaces; the application (API, database) lives in its
// own namespace (spec part 1 item 4).
import type { V1Ingress, V1PersistentVolumeClaim, V1Pod, V1Service, V1OwnerReference, V1EnvVar, V1SecurityContext, V1PodSecurityContext } from '@kubernetes/client-node';
import { SINK_ENV } from '../../api/event-sink.ts';
import { GATEWAY_MODEL_RETRIES, MODEL_TOKEN_KEY } from '../../api/model-gateway.ts';
import { LABEL_SANDBOX } from '../../api/meta.ts';
import type { Sandbox } from '../../api/sandbox.ts';
import { LABEL_WARM_POOL } from '../../api/warm-pool.ts';
import type { RuntimeAddressing } from './addressing.ts';
import type { Logger } from '../../util/log.ts';
import type { ObjectStore } from '../../objstore/types.ts';
import { ARCHIVE_UPLOAD_ATTEMPTS_ENV, ARCHIVE_UPLOAD_URL_ENV, CONVERSATION_FILES_UPLOAD_URL_ENV } from '../../cli/archive-upload.ts';
import { BUNDLE_CLI, BUNDLE_DIR, BUNDLE_NODE, BUNDLE_STAGING } from './bundle.ts';
import { AGENT_SERVER_MEMORY_ENV } from '../../agent-server/memory-env.ts';
import { sandboxContainerResources, type SandboxPodSettings } from './pod-settings.ts';

export const AGENT_PORT = 8000;
export const WORKSPACE_MOUNT = '/workspace';
/** The agent server's data directory on the workspace volume: its event store and `conversations/<id>/` (browser recordings). */
export const AGENT_DATA_DIR = `${WORKSPACE_MOUNT}/.agentyard`;
const SANDBOX_UID = 1000;

export interface KubeRuntimeSettings extends SandboxPodSettings {
  namespace: string;
  /** The default sandbox image (a Sandbox's spec.image replaces it): the user's toolchain. */
  image: string;
  /**
   * The agentyard image: the source of the agent bundle (init container) and the image of the
   * workspace archive Pod. Default: `image` (the agentyard image is a sandbox image too).
   */
  agentImage?: string;
  storageClass: string;
  addressing: RuntimeAddressing;
  /** Base URL of the API as sandboxes reach it; events are pushed to `${sinkBaseUrl}/api/v1/webhooks/<sandbox>`. */
  sinkBaseUrl?: string;
  /**
   * The model agents use, through the model gateway (`modelGatewayUrl` of the API as sandboxes reach
   * it): LLM_BASE_URL is the gateway and LLM_API_KEY the sandbox's model token from its session
   * Secret. The provider's key never enters a sandbox Pod.
   */
  llm?: { model: string; gatewayUrl: string };
  /**
   * Settings every sandbox's agent server gets as they are (the ChatGPT subscription's addresses,
   * subscription/endpoints-env.ts). Plain values in the Pod spec: never a secret.
   */
  agentServerEnv?: Record<string, string>;
  ingressClassName?: string;
  /**
   * Secret holding the wildcard certificate for `*.<base>`, beside the sandboxes. Unset while TLS
   * is on: the Ingress names its host without a Secret and the ingress controller serves its
   * default certificate, so no private key has to live in the sandbox namespace (the chart's way).
   */
  tlsSecretName?: string;
  defaultStorage?: string;
  archiveStorage?: string;
  /**
   * A presigned PUT URL for an object key (S3ObjectStore.presignPut): set when the installation has
   * an object store; workspace archives then go there instead of the archive PVC.
   */
  archiveUploadUrl?: (key: string) => Promise<string>;
  /**
   * With archiveUploadUrl: the upload attempts of one run of the archive Pod's container before it
   * exits 1 and the kubelet restarts it. Unset: the CLI's default (8, over about 35 s).
   */
  archiveUploadAttempts?: number;
  /**
   * With archiveUploadUrl: the store the archive Pod's conversation files are unpacked into
   * (conversation-files.ts), and whether a conversation exists and was placed on that sandbox.
   * Unset: only the workspace archive is uploaded.
   */
  conversationFiles?: { objects: ObjectStore; keep: (conversationId: string, sandbox: string) => Promise<boolean> };
  /**
   * Canvas App backends: the web app's origins (AGENTYARD_PUBLIC_URL). A sandbox's backends are then
   * reached on its own Ingress host (a browser origin apart from the web app's, already routed to its
   * agent server), which becomes its OH_APP_BACKEND_PUBLIC_URL.
   */
  appBackends?: { webOrigins: string[] };
  log?: Logger;
}

export const sessionSecretName = (sandbox: string) => `${sandbox}-session`;
export const pvcName = (sandbox: string) => `${sandbox}-workspace`;
/** Service names must be DNS-1035 labels (start with a letter); sandbox ids may start with a digit. */
export const serviceName = (sandbox: string) => `sandbox-${sandbox}`;
/** The port of a sandbox's Service (the agent server listens on AGENT_PORT behind it). */
export const SERVICE_PORT = 80;
/**
 * Where the control plane reaches a sandbox's agent server: its Service through cluster DNS
 * (`sandbox-<id>.<namespace>.svc`), not the public `<id>-runtime.<base>` host, which clients use
 * and which need not resolve inside the cluster.
 */
export const internalUrl = (sandbox: string, namespace: string) => `http://${serviceName(sandbox)}.${namespace}.svc:${SERVICE_PORT}`;

function labels(sb: Sandbox): Record<string, string> {
  return { [LABEL_SANDBOX]: sb.metadata.name, 'app.kubernetes.io/managed-by': 'agentyard', 'app.kubernetes.io/component': 'sandbox' };
}

function ownerReference(sb: Sandbox): V1OwnerReference {
  return { apiVersion: sb.apiVersion, kind: sb.kind, name: sb.metadata.name, uid: sb.metadata.uid ?? '', controller: true, blockOwnerDeletion: true };
}

function metadata(sb: Sandbox, name: string) {
  return { name, namespace: sb.metadata.namespace, labels: labels(sb), ownerReferences: [ownerReference(sb)] };
}

function env(sb: Sandbox, s: KubeRuntimeSettings): V1EnvVar[] {
  const sessionKey = { secretKeyRef: { name: sessionSecretName(sb.metadata.name), key: 'key' } };
  const vars: V1EnvVar[] = [
    { name: 'OH_SESSION_API_KEYS_0', valueFrom: sessionKey },
    { name: 'OH_SECRET_KEY', valueFrom: sessionKey },
    { name: 'HOME', value: `${WORKSPACE_MOUNT}/home` },
    // The container runs node directly (not bin/agentyard), so it gets the agent server's memory
    // settings here, as the process runtime's children do.
    ...Object.entries(AGENT_SERVER_MEMORY_ENV).map(([name, value]) => ({ name, value })),
  ];
  if (s.sinkBaseUrl) {
    vars.push({ name: SINK_ENV.url, value: `${s.sinkBaseUrl.replace(/\/+$/, '')}/api/v1/webhooks/${sb.metadata.name}` }, { name: SINK_ENV.key, valueFrom: sessionKey });
  }
  // A warm-pool member compiles its first conversation's code before it listens (agent-server/
  // warm-up.ts), as the process runtime's members do: ready then means warm, and a claim does not pay
  // for it (issue #16). The Pod keeps the variable once claimed; a restart of its container then warms
  // up again before serving, which costs that restart a fraction of a second.
  if (s.appBackends) {
    vars.push(
      { name: 'OH_APP_BACKEND_PUBLIC_URL', value: s.addressing.urlFor(sb.metadata.name) },
      { name: 'OH_ALLOW_CORS_ORIGINS', value: JSON.stringify(s.appBackends.webOrigins) },
      // TLS ends at the ingress controller, which says in X-Forwarded-Proto/Host what the browser reached.
      { name: 'OH_TRUST_FORWARDED_HEADERS', value: 'true' },
    );
  }
  if (sb.metadata.labels?.[LABEL_WARM_POOL] !== undefined) vars.push({ name: 'AGENTYARD_WARM_UP', value: '1' });
  for (const [name, value] of Object.entries(s.agentServerEnv ?? {})) vars.push({ name, value });
  if (s.llm) {
    vars.push(
      { name: 'LLM_MODEL', value: s.llm.model },
      { name: 'LLM_BASE_URL', value: s.llm.gatewayUrl },
      // Optional: a warm-pool member has no model token until a user claims it (its hand-over brings it).
      { name: 'LLM_API_KEY', valueFrom: { secretKeyRef: { name: sessionSecretName(sb.metadata.name), key: MODEL_TOKEN_KEY, optional: true } } },
      { name: 'LLM_NUM_RETRIES', value: String(GATEWAY_MODEL_RETRIES) },
    );
  }
  return vars;
}

function pullSecrets(s: KubeRuntimeSettings): { imagePullSecrets?: { name: string }[] } {
  return s.imagePullSecrets?.length ? { imagePullSecrets: s.imagePullSecrets.map((name) => ({ name })) } : {};
}

/**
 * The restricted Pod Security profile, for every container agentyard creates: sandboxes run
 * agent-written code. Root filesystems are read-only; what must be written is a volume (the
 * workspace, /tmp, the bundle volume while it is filled).
 */
const podSecurity = (): V1PodSecurityContext => ({
  runAsNonRoot: true,
  runAsUser: SANDBOX_UID,
  runAsGroup: SANDBOX_UID,
  // The workspace volume belongs to the sandbox user whatever the image; checked at the volume
  // root only, so a resume does not walk a large workspace again.
  fsGroup: SANDBOX_UID,
  fsGroupChangePolicy: 'OnRootMismatch',
  seccompProfile: { type: 'RuntimeDefault' },
});
const containerSecurity = (): V1SecurityContext => ({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });

const agentImage = (s: KubeRuntimeSettings) => s.agentImage ?? s.image;
const pullPolicy = (p: string | undefined) => (p ? { imagePullPolicy: p } : {});

export function desiredPod(sb: Sandbox, s: KubeRuntimeSettings): V1Pod {
  const resources = sandboxContainerResources(s.resources, sb.spec.resources);
  // /alive answers while the event loop does; /ready once the server serves (the Service and the
  // controller wait for it). Not /health: it reports a full disk, which a restart would not cure.
  const alive = { httpGet: { path: '/alive', port: AGENT_PORT } };
  const ready = { httpGet: { path: '/ready', port: AGENT_PORT } };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: metadata(sb, sb.metadata.name),
    spec: {
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      restartPolicy: 'Always',
      // The pause container becomes PID 1 and reaps the orphans of agent commands (`cmd &` in a
      // shell that exits); Node as PID 1 would leave them as zombies.
      shareProcessNamespace: true,
      ...pullSecrets(s),
      securityContext: podSecurity(),
      initContainers: [
        {
          // Brings the agent server into the user's image (see bundle.ts), and lays out the
          // workspace volume: the project, and the sandbox user's home.
          name: 'agent-bundle',
          image: agentImage(s),
          ...pullPolicy(s.imagePullPolicy),
          command: ['sh', '-c', `cp -R ${BUNDLE_DIR}/. ${BUNDLE_STAGING}/ && mkdir -p ${WORKSPACE_MOUNT}/project ${WORKSPACE_MOUNT}/home`],
          securityContext: containerSecurity(),
          resources: { requests: { cpu: '50m', memory: '32Mi' }, limits: { memory: '256Mi' } },
          volumeMounts: [
            { name: 'agentyard', mountPath: BUNDLE_STAGING },
            { name: 'workspace', mountPath: WORKSPACE_MOUNT },
          ],
        },
      ],
      containers: [
        {
          name: 'agent-server',
          image: sb.spec.image ?? s.image,
          ...pullPolicy(s.sandboxImagePullPolicy),
          command: [BUNDLE_NODE, BUNDLE_CLI, 'agent-server', '--port', String(AGENT_PORT), '--host', '0.0.0.0', '--workspace', `${WORKSPACE_MOUNT}/project`, '--data-dir', AGENT_DATA_DIR],
          workingDir: `${WORKSPACE_MOUNT}/project`,
          ports: [{ name: 'http', containerPort: AGENT_PORT }],
          env: env(sb, s),
          // Up to a minute to start (a cold node, a large event store); then restarted after a
          // minute without answering, and out of the Service while it does not answer.
          startupProbe: { ...alive, periodSeconds: 1, failureThreshold: 60 },
          readinessProbe: { ...ready, periodSeconds: 2 },
          livenessProbe: { ...alive, periodSeconds: 10, timeoutSeconds: 5, failureThreshold: 6 },
          securityContext: containerSecurity(),
          ...(resources ? { resources } : {}),
          volumeMounts: [
            { name: 'workspace', mountPath: WORKSPACE_MOUNT },
            { name: 'agentyard', mountPath: BUNDLE_DIR, readOnly: true },
            { name: 'tmp', mountPath: '/tmp' },
          ],
        },
      ],
      volumes: [
        { name: 'workspace', persistentVolumeClaim: { claimName: pvcName(sb.metadata.name) } },
        { name: 'agentyard', emptyDir: { sizeLimit: '1Gi' } },
        { name: 'tmp', emptyDir: {} },
      ],
    },
  };
}

export const ARCHIVE_PVC = 'agentyard-archive';
export const archivePodName = (sandbox: string) => `${sandbox}-archive`;

/**
 * The internal workspace archive taken when a sandbox is deleted (spec part 3): a one-shot Pod that
 * tars the workspace volume onto the archive volume, which no user can read. It runs the agentyard
 * image, not the sandbox's: a user's image need not have tar and gzip, and the archive must not
 * depend on what the sandbox image holds.
 */
export function desiredArchivePod(sb: Sandbox, s: KubeRuntimeSettings, stamp: string, upload?: ArchiveUpload): V1Pod {
  if (upload) return uploadingArchivePod(sb, s, stamp, upload);
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: archivePodName(sb.metadata.name), namespace: sb.metadata.namespace, labels: { ...labels(sb), 'app.kubernetes.io/component': 'sandbox-archive' } },
    spec: {
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      restartPolicy: 'Never',
      ...pullSecrets(s),
      securityContext: podSecurity(),
      containers: [
        {
          name: 'archive',
          image: agentImage(s),
          ...pullPolicy(s.imagePullPolicy),
          command: ['tar', '-czf', `/archive/${sb.metadata.name}-${stamp}.tar.gz`, '-C', WORKSPACE_MOUNT, '.'],
          securityContext: containerSecurity(),
          volumeMounts: [
            { name: 'workspace', mountPath: WORKSPACE_MOUNT, readOnly: true },
            { name: 'archive', mountPath: '/archive' },
          ],
        },
      ],
      volumes: [
        { name: 'workspace', persistentVolumeClaim: { claimName: pvcName(sb.metadata.name) } },
        { name: 'archive', persistentVolumeClaim: { claimName: ARCHIVE_PVC } },
      ],
    },
  };
}

/** Presigned PUT URLs of an uploading archive Pod: the workspace archive, and the conversation files (optional). */
export interface ArchiveUpload {
  url: string;
  conversationFilesUrl?: string;
}

/** The archive Pod's stamp (its keys' suffix), read back by the controller after the Pod is done. */
export const ANNOTATION_ARCHIVE_STAMP = 'agentyard.dev/archive-stamp';

/** How long an archive Pod may keep retrying its upload before the deletion goes on without it. */
export const ARCHIVE_UPLOAD_DEADLINE_SECONDS = 6 * 3600;

/**
 * With an object store (objectStore in the chart): the archive Pod tars the workspace into its own
 * scratch volume and PUTs it to a presigned URL for one key under internal/workspace-archives/ —
 * no store credentials in the sandbox namespace, only a URL that can write that one object and
 * expires. A failed upload (the store briefly down) restarts the container with the kubelet's
 * backoff instead of failing the Pod, so the sandbox's deletion waits rather than losing the
 * workspace; only after ARCHIVE_UPLOAD_DEADLINE_SECONDS does it give up (reported, as before).
 */
function uploadingArchivePod(sb: Sandbox, s: KubeRuntimeSettings, stamp: string, upload: ArchiveUpload): V1Pod {
  const files = upload.conversationFilesUrl;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: archivePodName(sb.metadata.name),
      namespace: sb.metadata.namespace,
      labels: { ...labels(sb), 'app.kubernetes.io/component': 'sandbox-archive' },
      annotations: { [ANNOTATION_ARCHIVE_STAMP]: stamp },
    },
    spec: {
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      restartPolicy: 'OnFailure',
      activeDeadlineSeconds: ARCHIVE_UPLOAD_DEADLINE_SECONDS,
      ...pullSecrets(s),
      securityContext: podSecurity(),
      containers: [
        {
          name: 'archive',
          image: agentImage(s),
          ...pullPolicy(s.imagePullPolicy),
          // The image's own Node and CLI (the agentyard image is the bundle at /agentyard).
          command: [BUNDLE_NODE, BUNDLE_CLI, 'archive-upload', '--dir', WORKSPACE_MOUNT, ...(files ? ['--conversations', `${AGENT_DATA_DIR}/conversations`] : [])],
          env: [
            { name: ARCHIVE_UPLOAD_URL_ENV, value: upload.url },
            ...(files ? [{ name: CONVERSATION_FILES_UPLOAD_URL_ENV, value: files }] : []),
            ...(s.archiveUploadAttempts ? [{ name: ARCHIVE_UPLOAD_ATTEMPTS_ENV, value: String(s.archiveUploadAttempts) }] : []),
            { name: 'TMPDIR', value: '/scratch' },
          ],
          securityContext: containerSecurity(),
          volumeMounts: [
            { name: 'workspace', mountPath: WORKSPACE_MOUNT, readOnly: true },
            { name: 'scratch', mountPath: '/scratch' },
          ],
        },
      ],
      volumes: [
        { name: 'workspace', persistentVolumeClaim: { claimName: pvcName(sb.metadata.name) } },
        { name: 'scratch', emptyDir: {} },
      ],
    },
  };
}

export function archivePvc(namespace: string, s: KubeRuntimeSettings): V1PersistentVolumeClaim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: ARCHIVE_PVC, namespace, labels: { 'app.kubernetes.io/managed-by': 'agentyard', 'app.kubernetes.io/component': 'sandbox-archive' } },
    spec: { accessModes: ['ReadWriteOnce'], storageClassName: s.storageClass, resources: { requests: { storage: s.archiveStorage ?? '50Gi' } } },
  };
}

export function desiredPvc(sb: Sandbox, s: KubeRuntimeSettings): V1PersistentVolumeClaim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: metadata(sb, pvcName(sb.metadata.name)),
    spec: {
      accessModes: ['ReadWriteOnce'],
      storageClassName: s.storageClass,
      resources: { requests: { storage: sb.spec.resources?.storage ?? s.defaultStorage ?? '10Gi' } },
    },
  };
}

export function desiredService(sb: Sandbox): V1Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: metadata(sb, serviceName(sb.metadata.name)),
    spec: { selector: { [LABEL_SANDBOX]: sb.metadata.name }, ports: [{ name: 'http', port: SERVICE_PORT, targetPort: AGENT_PORT }] },
  };
}

export function desiredIngress(sb: Sandbox, s: KubeRuntimeSettings): V1Ingress {
  const host = s.addressing.hostFor(sb.metadata.name).replace(/:\d+$/, '');
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: metadata(sb, sb.metadata.name),
    spec: {
      ...(s.ingressClassName ? { ingressClassName: s.ingressClassName } : {}),
      ...(s.tlsSecretName ? { tls: [{ hosts: [host], secretName: s.tlsSecretName }] } : s.addressing.urlFor(sb.metadata.name).startsWith('https:') ? { tls: [{ hosts: [host] }] } : {}),
      rules: [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: serviceName(sb.metadata.name), port: { number: SERVICE_PORT } } } }] } }],
    },
  };
}
