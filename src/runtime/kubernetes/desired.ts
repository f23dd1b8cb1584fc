// The Kubernetes objects a Sandbox runs as: a Pod (the agent server), a PVC (the workspace, kept
// while paused), a Service and an Ingress host. Pure functions: no I/O.
//
// Sandbox and Conversation resources live in the sandbox namespace together with these children,
// because owner references cannot cross namespaces; the application (API, database) lives in its
// own namespace (spec part 1 item 4).
import type { V1Ingress, V1PersistentVolumeClaim, V1Pod, V1Service, V1OwnerReference, V1EnvVar } from '@kubernetes/client-node';
import { SINK_ENV } from '../../api/event-sink.ts';
import { LABEL_SANDBOX } from '../../api/meta.ts';
import type { Sandbox } from '../../api/sandbox.ts';
import type { RuntimeAddressing } from './addressing.ts';
import type { Logger } from '../../util/log.ts';
import { sandboxContainerResources, type SandboxPodSettings } from './pod-settings.ts';

export const AGENT_PORT = 8000;
export const WORKSPACE_MOUNT = '/workspace';
const SANDBOX_UID = 1000;

export interface KubeRuntimeSettings extends SandboxPodSettings {
  namespace: string;
  image: string;
  storageClass: string;
  addressing: RuntimeAddressing;
  /** Base URL of the API as sandboxes reach it; events are pushed to `${sinkBaseUrl}/api/v1/webhooks/<sandbox>`. */
  sinkBaseUrl?: string;
  llm?: { model?: string; baseUrl?: string; apiKeySecret?: { name: string; key: string } };
  ingressClassName?: string;
  /** Secret holding the wildcard certificate for `*.<base>`, when TLS is on. */
  tlsSecretName?: string;
  defaultStorage?: string;
  archiveStorage?: string;
  log?: Logger;
}

export const sessionSecretName = (sandbox: string) => `${sandbox}-session`;
export const pvcName = (sandbox: string) => `${sandbox}-workspace`;
/** Service names must be DNS-1035 labels (start with a letter); sandbox ids may start with a digit. */
export const serviceName = (sandbox: string) => `sandbox-${sandbox}`;

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
  ];
  if (s.sinkBaseUrl) {
    vars.push({ name: SINK_ENV.url, value: `${s.sinkBaseUrl.replace(/\/+$/, '')}/api/v1/webhooks/${sb.metadata.name}` }, { name: SINK_ENV.key, valueFrom: sessionKey });
  }
  if (s.llm?.model) vars.push({ name: 'LLM_MODEL', value: s.llm.model });
  if (s.llm?.baseUrl) vars.push({ name: 'LLM_BASE_URL', value: s.llm.baseUrl });
  if (s.llm?.apiKeySecret) vars.push({ name: 'LLM_API_KEY', valueFrom: { secretKeyRef: s.llm.apiKeySecret } });
  return vars;
}

function pullSecrets(s: KubeRuntimeSettings): { imagePullSecrets?: { name: string }[] } {
  return s.imagePullSecrets?.length ? { imagePullSecrets: s.imagePullSecrets.map((name) => ({ name })) } : {};
}

export function desiredPod(sb: Sandbox, s: KubeRuntimeSettings): V1Pod {
  const resources = sandboxContainerResources(s.resources, sb.spec.resources);
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: metadata(sb, sb.metadata.name),
    spec: {
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      restartPolicy: 'Always',
      ...pullSecrets(s),
      securityContext: { runAsNonRoot: true, runAsUser: SANDBOX_UID, runAsGroup: SANDBOX_UID, fsGroup: SANDBOX_UID, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [
        {
          name: 'agent-server',
          image: sb.spec.image ?? s.image,
          command: ['agentyard', 'agent-server', '--port', String(AGENT_PORT), '--host', '0.0.0.0', '--workspace', `${WORKSPACE_MOUNT}/project`, '--data-dir', `${WORKSPACE_MOUNT}/.agentyard`],
          ports: [{ name: 'http', containerPort: AGENT_PORT }],
          env: env(sb, s),
          readinessProbe: { httpGet: { path: '/health', port: AGENT_PORT }, periodSeconds: 2 },
          // A hung agent server (alive, not answering) is restarted by the kubelet on the same volume
          // after 30 s; the startup probe gives a first start 2 minutes, as embedded mode does.
          startupProbe: { httpGet: { path: '/health', port: AGENT_PORT }, periodSeconds: 2, failureThreshold: 60 },
          livenessProbe: { httpGet: { path: '/health', port: AGENT_PORT }, periodSeconds: 10, timeoutSeconds: 5, failureThreshold: 3 },
          securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
          ...(resources ? { resources } : {}),
          volumeMounts: [{ name: 'workspace', mountPath: WORKSPACE_MOUNT }],
        },
      ],
      volumes: [{ name: 'workspace', persistentVolumeClaim: { claimName: pvcName(sb.metadata.name) } }],
    },
  };
}

export const ARCHIVE_PVC = 'agentyard-archive';
export const archivePodName = (sandbox: string) => `${sandbox}-archive`;

/**
 * The internal workspace archive taken when a sandbox is deleted (spec part 3): a one-shot Pod that
 * tars the workspace volume onto the archive volume, which no user can read.
 */
export function desiredArchivePod(sb: Sandbox, s: KubeRuntimeSettings, stamp: string): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: archivePodName(sb.metadata.name), namespace: sb.metadata.namespace, labels: { ...labels(sb), 'app.kubernetes.io/component': 'sandbox-archive' } },
    spec: {
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      restartPolicy: 'Never',
      ...pullSecrets(s),
      securityContext: { runAsNonRoot: true, runAsUser: SANDBOX_UID, runAsGroup: SANDBOX_UID, fsGroup: SANDBOX_UID, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [
        {
          name: 'archive',
          image: sb.spec.image ?? s.image,
          command: ['tar', '-czf', `/archive/${sb.metadata.name}-${stamp}.tar.gz`, '-C', WORKSPACE_MOUNT, '.'],
          securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
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
    spec: { selector: { [LABEL_SANDBOX]: sb.metadata.name }, ports: [{ name: 'http', port: 80, targetPort: AGENT_PORT }] },
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
      ...(s.tlsSecretName ? { tls: [{ hosts: [host], secretName: s.tlsSecretName }] } : {}),
      rules: [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: serviceName(sb.metadata.name), port: { number: 80 } } } }] } }],
    },
  };
}
