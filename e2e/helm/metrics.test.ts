// The chart's Prometheus options, rendered offline: off by default (no object, no port); on, the
// controller's metrics port and Service, ServiceMonitors for both components, the scrapers let
// through the NetworkPolicies, and a Grafana dashboard whose queries name metrics the code exports.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { CHART, helm, helmBin, writeValues } from './helm.ts';

const BASE = 'baseDomain: a.example.com\nruntime: {storageClass: standard}\nnetworkPolicy: {podCidrs: [10.244.0.0/16], serviceCidrs: [10.96.0.0/12], nodeCidrs: [10.0.0.0/16]}\n';
const ON = `${BASE}metrics:
  enabled: true
  scrapers: [{namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: monitoring}}}]
  serviceMonitor: {enabled: true, labels: {release: kps}}
  dashboard: {enabled: true}
`;

type Obj = { kind: string; metadata: { name: string; labels?: Record<string, string> }; spec?: any; data?: Record<string, string> };

describe.skipIf(!helmBin)('the chart\'s metrics options', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentyard-helm-metrics-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const render = async (values: string): Promise<Obj[]> => {
    const r = await helm(['template', 'ay', CHART, '-n', 'apps', '-f', writeValues(dir, `v-${Math.random()}.yaml`, values)]);
    expect(r.ok, r.out).toBe(true);
    return parseAllDocuments(r.out).map((d) => d.toJS() as Obj).filter(Boolean);
  };
  const controllerOf = (objs: Obj[]) => objs.find((o) => o.kind === 'Deployment' && o.metadata.name === 'ay-agentyard-controller')!.spec.template.spec.containers[0];

  it('renders nothing of it by default', async () => {
    const objs = await render(BASE);
    expect(objs.filter((o) => o.kind === 'ServiceMonitor' || o.metadata.name.includes('metrics') || o.metadata.name.includes('dashboard'))).toEqual([]);
    expect(controllerOf(objs).env.map((e: { name: string }) => e.name)).not.toContain('AGENTYARD_METRICS_PORT');
  });

  it('when enabled: the controller port and Service, ServiceMonitors, scrapers let in, the dashboard', async () => {
    const lint = await helm(['lint', '--strict', CHART, '-f', writeValues(dir, 'on.yaml', ON)]);
    expect(lint.ok, lint.out).toBe(true);
    const objs = await render(ON);
    const c = controllerOf(objs);
    expect(c.env).toContainEqual({ name: 'AGENTYARD_METRICS_PORT', value: '8080' });
    expect(c.ports).toEqual([{ name: 'metrics', containerPort: 8080 }]);
    const svc = objs.find((o) => o.kind === 'Service' && o.metadata.name === 'ay-agentyard-controller-metrics')!;
    expect(svc.spec.ports).toEqual([{ name: 'metrics', port: 8080, targetPort: 'metrics' }]);
    const monitors = objs.filter((o) => o.kind === 'ServiceMonitor');
    expect(monitors.map((m) => [m.metadata.name, m.spec.endpoints[0].port, m.metadata.labels?.['release']])).toEqual([
      ['ay-agentyard-api', 'http', 'kps'],
      ['ay-agentyard-controller', 'metrics', 'kps'],
    ]);
    // Each ServiceMonitor selects a Service that exists and has its port.
    for (const m of monitors) {
      const match = objs.filter((o) => o.kind === 'Service' && Object.entries(m.spec.selector.matchLabels as Record<string, string>).every(([k, v]) => o.metadata.labels?.[k] === v));
      expect(match.some((s) => s.spec.ports.some((p: { name: string }) => p.name === m.spec.endpoints[0].port)), m.metadata.name).toBe(true);
    }
    const scrapers = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } };
    const policy = (name: string) => objs.find((o) => o.kind === 'NetworkPolicy' && o.metadata.name === name)!;
    expect(policy('ay-agentyard-api').spec.ingress[0].from).toContainEqual(scrapers);
    expect(policy('ay-agentyard-controller').spec.ingress).toEqual([{ ports: [{ port: 8080, protocol: 'TCP' }], from: [scrapers] }]);

    const dashboard = objs.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'ay-agentyard-dashboard')!;
    expect(dashboard.metadata.labels?.['grafana_dashboard']).toBe('1');
    const json = JSON.parse(dashboard.data!['agentyard.json']!) as { panels: { targets: { expr: string }[] }[] };
    const exprs = json.panels.flatMap((p) => p.targets.map((t) => t.expr)).join('\n');
    // Every metric a panel queries is one the code registers (names spelled in src/).
    const sources = ['src/util/metrics.ts', 'src/controller/metrics.ts', 'src/facade/sink.ts'].map((f) => readFileSync(join(CHART, '../..', f), 'utf8')).join('\n');
    for (const name of new Set(exprs.match(/\b(?:controller_runtime|workqueue|agentyard|http)_[a-z_]+/g) ?? [])) {
      expect(sources, name).toContain(`'${name.replace(/_(bucket|count|sum)$/, '')}'`);
    }
  });
});
