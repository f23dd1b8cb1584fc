// What agentyard's service accounts must be allowed to do, asked of the API server with
// SubjectAccessReviews for those accounts: so preflight answers for the identities that will act,
// not for whoever runs it.
import { AuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { PreflightSettings } from './settings.ts';

export interface Access {
  group: string;
  resource: string;
  verb: string;
  namespace?: string;
  name?: string;
}

/** A representative sample of what the controller does (chart: templates/rbac-controller.yaml). */
export function controllerAccess(s: PreflightSettings): Access[] {
  const ns = s.sandboxNamespace;
  return [
    { group: 'agentyard.dev', resource: 'sandboxes', verb: 'watch', namespace: ns },
    { group: 'agentyard.dev', resource: 'sandboxes/status', verb: 'update', namespace: ns },
    { group: 'agentyard.dev', resource: 'conversations', verb: 'update', namespace: ns },
    { group: 'agentyard.dev', resource: 'conversations/status', verb: 'update', namespace: ns },
    { group: 'agentyard.dev', resource: 'sandboxconfigurations', verb: 'watch', namespace: ns },
    { group: 'agentyard.dev', resource: 'sandboxconfigurations', verb: 'update', namespace: ns },
    { group: 'agentyard.dev', resource: 'sandboxconfigurations', verb: 'create', namespace: ns },
    { group: '', resource: 'pods', verb: 'create', namespace: ns },
    { group: '', resource: 'persistentvolumeclaims', verb: 'create', namespace: ns },
    { group: '', resource: 'services', verb: 'create', namespace: ns },
    { group: '', resource: 'secrets', verb: 'create', namespace: ns },
    { group: 'networking.k8s.io', resource: 'ingresses', verb: 'create', namespace: ns },
    { group: '', resource: 'events', verb: 'create', namespace: ns },
    { group: 'coordination.k8s.io', resource: 'leases', verb: 'create', namespace: s.namespace },
    { group: 'coordination.k8s.io', resource: 'leases', verb: 'update', namespace: s.namespace, name: s.leaseName },
    ...(s.storageClass ? [{ group: 'storage.k8s.io', resource: 'storageclasses', verb: 'get', name: s.storageClass }] : []),
  ];
}

/** What the API does (chart: templates/rbac-api.yaml). */
export function apiAccess(s: PreflightSettings): Access[] {
  const ns = s.sandboxNamespace;
  return [
    { group: 'agentyard.dev', resource: 'sandboxes', verb: 'create', namespace: ns },
    { group: 'agentyard.dev', resource: 'conversations', verb: 'watch', namespace: ns },
    { group: 'agentyard.dev', resource: 'conversations/status', verb: 'update', namespace: ns },
    { group: 'agentyard.dev', resource: 'sandboxconfigurations', verb: 'update', namespace: ns },
    { group: '', resource: 'secrets', verb: 'create', namespace: ns },
  ];
}

function describe(a: Access): string {
  const [resource, sub] = a.resource.split('/');
  const what = `${resource}${a.group ? `.${a.group}` : ''}${sub ? `/${sub}` : ''}${a.name ? ` '${a.name}'` : ''}`;
  return `${a.verb} ${what}${a.namespace ? ` in ${a.namespace}` : ''}`;
}

/**
 * What the API must NOT be able to do: read the installation's Secrets (the default API key, the
 * database URL, the model provider key, the TLS key). They live in the release namespace, where the
 * chart grants it nothing, so an extra binding of someone's shows here.
 */
export function apiForbidden(s: PreflightSettings): Access[] {
  const names = [...s.secrets.map((r) => ({ namespace: r.namespace, name: r.name })), ...(s.tlsSecret ? [{ namespace: s.namespace, name: s.tlsSecret }] : [])];
  return names.flatMap(({ namespace, name }) => (['get', 'list', 'watch'] as const).map((verb) => ({ group: '', resource: 'secrets', verb, namespace, ...(verb === 'get' ? { name } : {}) })));
}

/** The accesses the service account `namespace/name` is denied, described for people. */
export async function deniedAccess(kc: KubeConfig, namespace: string, serviceAccount: string, wanted: Access[]): Promise<string[]> {
  const allowed = await allowedAccess(kc, namespace, serviceAccount, wanted);
  return wanted.filter((a) => !allowed.includes(a)).map(describe);
}

/** The accesses the service account `namespace/name` is allowed, described for people. */
export async function allowedAccessText(kc: KubeConfig, namespace: string, serviceAccount: string, wanted: Access[]): Promise<string[]> {
  return (await allowedAccess(kc, namespace, serviceAccount, wanted)).map(describe);
}

async function allowedAccess(kc: KubeConfig, namespace: string, serviceAccount: string, wanted: Access[]): Promise<Access[]> {
  const authz = kc.makeApiClient(AuthorizationV1Api);
  const user = `system:serviceaccount:${namespace}:${serviceAccount}`;
  const groups = ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'];
  const allowed: Access[] = [];
  for (const a of wanted) {
    const [resource, subresource] = a.resource.split('/');
    const review = await authz.createSubjectAccessReview({
      body: {
        spec: {
          user,
          groups,
          resourceAttributes: { group: a.group, resource, verb: a.verb, ...(subresource ? { subresource } : {}), ...(a.namespace ? { namespace: a.namespace } : {}), ...(a.name ? { name: a.name } : {}) },
        },
      },
    });
    if (review.status?.allowed) allowed.push(a);
  }
  return allowed;
}
