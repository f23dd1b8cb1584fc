// What the rendered chart says about isolation, read as objects rather than as golden text: which
// traffic each NetworkPolicy lets through, which Pods they select, and where the installation's
// keys are and who may read Secrets. Enforcement itself needs a node with a NetworkPolicy engine.
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { CHART, helm, helmBin } from './helm.ts';

interface Obj {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: any;
  rules?: { apiGroups: string[]; resources: string[]; resourceNames?: string[]; verbs: string[] }[];
  roleRef?: { kind: string; name: string };
  subjects?: { kind: string; name: string; namespace?: string }[];
}

const LINK_LOCAL_V4 = '169.254.0.0/16';
const LINK_LOCAL_V6 = ['fe80::/10', 'fd00:ec2::254/128'];

async function render(args: string[]): Promise<Obj[]> {
  const r = await helm(['template', 'agentyard', CHART, '--namespace', 'agentyard', ...args]);
  if (!r.ok) throw new Error(r.out);
  return parseAllDocuments(r.out)
    .map((d) => d.toJS() as Obj | null)
    .filter((o): o is Obj => !!o);
}

const find = (objs: Obj[], kind: string, name: string) => {
  const o = objs.find((x) => x.kind === kind && x.metadata.name === name);
  if (!o) throw new Error(`no ${kind}/${name} rendered`);
  return o;
};

/** Does a label selector (matchLabels and In expressions, as the chart writes them) select these labels? */
function selects(selector: { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: string; values: string[] }[] }, labels: Record<string, string>): boolean {
  const byLabel = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  const byExpr = (selector.matchExpressions ?? []).every((e) => e.operator === 'In' && e.values.includes(labels[e.key] ?? ''));
  return byLabel && byExpr;
}

/** Pod templates of the chart, with the namespace they run in. */
function pods(objs: Obj[]): { name: string; namespace: string; labels: Record<string, string>; spec: any }[] {
  return objs.flatMap((o) => {
    if (o.kind === 'Deployment') return [{ name: o.metadata.name, namespace: o.metadata.namespace!, labels: o.spec.template.metadata.labels, spec: o.spec.template.spec }];
    if (o.kind === 'Pod') return [{ name: o.metadata.name, namespace: o.metadata.namespace!, labels: o.metadata.labels!, spec: o.spec }];
    return [];
  });
}

const CIDRS = ['--set', 'networkPolicy.podCidrs={10.244.0.0/16,fd00:10:244::/56}', '--set', 'networkPolicy.serviceCidrs={10.96.0.0/12}', '--set', 'networkPolicy.nodeCidrs={10.0.0.0/16}'];
const BASE = ['--set', 'baseDomain=agents.example.com', '--set', 'runtime.storageClass=standard', ...CIDRS];

describe.skipIf(!helmBin)('isolation in the rendered chart', () => {
  it('sandboxes: out to DNS, to the API on its sink port only, and to no cluster, node or link-local address', async () => {
    // deniedCidrs emptied on purpose: the link-local addresses stay denied.
    const objs = await render([...BASE, '--set', 'networkPolicy.deniedCidrs=null']);
    const np = find(objs, 'NetworkPolicy', 'agentyard-sandboxes');
    expect(np.metadata.namespace).toBe('agentyard-sandboxes');
    expect(np.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    const [dns, api, internet, ...more] = np.spec.egress;
    expect(more).toEqual([]);
    expect(dns).toEqual({ ports: [{ port: 53, protocol: 'UDP' }, { port: 53, protocol: 'TCP' }] });
    expect(api.ports).toEqual([{ port: 3000, protocol: 'TCP' }]);
    expect(api.to).toEqual([
      {
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'agentyard' } },
        podSelector: { matchLabels: { 'app.kubernetes.io/name': 'agentyard', 'app.kubernetes.io/instance': 'agentyard', 'app.kubernetes.io/component': 'api' } },
      },
    ]);
    expect(internet.ports).toBeUndefined();
    expect(internet.to).toEqual([
      { ipBlock: { cidr: '0.0.0.0/0', except: ['10.244.0.0/16', '10.96.0.0/12', '10.0.0.0/16', LINK_LOCAL_V4] } },
      { ipBlock: { cidr: '::/0', except: ['fd00:10:244::/56', ...LINK_LOCAL_V6] } },
    ]);
    // The API's port is what the API container listens on.
    const apiPod = pods(objs).find((p) => p.name === 'agentyard-api')!;
    expect(apiPod.spec.containers[0].ports).toEqual([{ name: 'http', containerPort: 3000 }]);
    // In: the agent server port only, from the API, the controller and the ingress controller.
    expect(np.spec.ingress).toHaveLength(1);
    expect(np.spec.ingress[0].ports).toEqual([{ port: 8000, protocol: 'TCP' }]);
    expect(np.spec.ingress[0].from.map((f: any) => f.podSelector?.matchLabels?.['app.kubernetes.io/component'] ?? f.namespaceSelector.matchLabels['kubernetes.io/metadata.name'])).toEqual(['api', 'controller', 'ingress-nginx']);
  });

  it('the API: in on its HTTP port from the ingress controller, sandboxes and named clients; out anywhere but link-local', async () => {
    const objs = await render([...BASE, '--set-json', 'networkPolicy.apiClients=[{"namespaceSelector":{"matchLabels":{"kubernetes.io/metadata.name":"ci"}}}]']);
    const np = find(objs, 'NetworkPolicy', 'agentyard-api');
    expect(np.metadata.namespace).toBe('agentyard');
    expect(np.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(np.spec.ingress).toEqual([
      {
        ports: [{ port: 3000, protocol: 'TCP' }],
        from: [
          { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } },
          { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'agentyard-sandboxes' } }, podSelector: { matchLabels: { 'app.kubernetes.io/managed-by': 'agentyard' } } },
          { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ci' } } },
        ],
      },
    ]);
    expect(np.spec.egress).toEqual([
      { ports: [{ port: 53, protocol: 'UDP' }, { port: 53, protocol: 'TCP' }] },
      { to: [{ ipBlock: { cidr: '0.0.0.0/0', except: [LINK_LOCAL_V4] } }, { ipBlock: { cidr: '::/0', except: LINK_LOCAL_V6 } }] },
    ]);
    const ctl = find(objs, 'NetworkPolicy', 'agentyard-controller');
    expect(ctl.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(ctl.spec.ingress).toBeUndefined(); // nothing may connect to the controller or preflight
    expect(ctl.spec.egress).toEqual(np.spec.egress);
  });

  it('every Pod of the release is selected by a policy of its namespace that covers both directions', async () => {
    const objs = await render(BASE);
    const policies = objs.filter((o) => o.kind === 'NetworkPolicy');
    const chartPods = pods(objs);
    expect(chartPods.map((p) => p.name).sort()).toEqual(['agentyard-api', 'agentyard-controller', 'agentyard-preflight']);
    for (const pod of chartPods) {
      const covering = policies.filter((np) => np.metadata.namespace === pod.namespace && selects(np.spec.podSelector, pod.labels));
      expect(covering.map((np) => np.metadata.name), pod.name).toHaveLength(1);
      expect(covering[0]!.spec.policyTypes, pod.name).toEqual(['Ingress', 'Egress']);
    }
    // Sandbox Pods carry the label the sandbox policy selects (src/runtime/kubernetes/desired.ts).
    expect(selects(find(objs, 'NetworkPolicy', 'agentyard-sandboxes').spec.podSelector, { 'app.kubernetes.io/managed-by': 'agentyard', 'app.kubernetes.io/component': 'sandbox' })).toBe(true);
  });

  it('keeps the installation keys out of the sandbox namespace and out of reach of every service account', async () => {
    const objs = await render([...BASE, '--set', 'ingress.tlsSecret=wildcard', '--set', 'runtime.disableSsl=false', '--set', 'database.external=true']);
    const env = (name: string) => pods(objs).find((p) => p.name === name)!.spec.containers[0].env as { name: string; value?: string; valueFrom?: any }[];
    // The model key reaches the API container through the kubelet, from the release namespace.
    expect(env('agentyard-api').find((e) => e.name === 'LLM_API_KEY')).toEqual({ name: 'LLM_API_KEY', valueFrom: { secretKeyRef: { name: 'agentyard-llm', key: 'api-key' } } });
    // The controller hands sandboxes neither the model key nor the certificate.
    const controllerEnv = env('agentyard-controller').map((e) => e.name);
    expect(controllerEnv).not.toContain('LLM_API_KEY_SECRET');
    expect(controllerEnv).not.toContain('RUNTIME_TLS_SECRET');
    expect(controllerEnv).not.toContain('LLM_API_KEY');
    // Who may read Secrets, where: only the sandbox namespace, apart from the helm test Pod, which
    // may get the installation Secrets it checks by name, in the release namespace.
    const roles = new Map(objs.filter((o) => o.kind === 'Role' || o.kind === 'ClusterRole').map((o) => [`${o.kind}/${o.metadata.name}`, o]));
    const grants = objs
      .filter((o) => o.kind === 'RoleBinding' || o.kind === 'ClusterRoleBinding')
      .flatMap((b) => {
        const role = roles.get(`${b.roleRef!.kind}/${b.roleRef!.name}`)!;
        return role.rules!.filter((r) => r.apiGroups.includes('') && r.resources.includes('secrets')).map((r) => ({ who: b.subjects![0]!.name, namespace: b.kind === 'RoleBinding' ? b.metadata.namespace : '*', names: r.resourceNames, verbs: r.verbs }));
      });
    expect(grants.filter((g) => g.namespace !== 'agentyard-sandboxes')).toEqual([{ who: 'agentyard-preflight', namespace: 'agentyard', names: ['agentyard-api-key', 'agentyard-database', 'agentyard-llm', 'wildcard'], verbs: ['get'] }]);
    // There: the API and the controller, and preflight by name only, to tell that none of those is there.
    expect(grants.filter((g) => g.namespace === 'agentyard-sandboxes')).toEqual([
      { who: 'agentyard-api', namespace: 'agentyard-sandboxes', names: undefined, verbs: ['get', 'create', 'update', 'delete'] },
      { who: 'agentyard-controller', namespace: 'agentyard-sandboxes', names: undefined, verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
      { who: 'agentyard-preflight', namespace: 'agentyard-sandboxes', names: ['agentyard-api-key', 'agentyard-database', 'agentyard-llm', 'wildcard'], verbs: ['get'] },
    ]);
    // Nothing in the chart names a Secret in the sandbox namespace.
    const preflightArgs = pods(objs).find((p) => p.name === 'agentyard-preflight')!.spec.containers[0].args as string[];
    expect(preflightArgs.filter((a) => a.startsWith('--secret='))).toEqual(['--secret=agentyard/agentyard-api-key:api-key', '--secret=agentyard/agentyard-database:url', '--secret=agentyard/agentyard-llm:api-key']);
  });

  it('without the policy, renders none and needs no ranges', async () => {
    const objs = await render(['-f', join(CHART, 'ci/no-ingress-values.yaml')]);
    expect(objs.filter((o) => o.kind === 'NetworkPolicy')).toEqual([]);
  });
});
