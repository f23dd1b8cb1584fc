import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { formatResults } from './checks.ts';
import { CHART_DEFAULTS, fullname, parseSecretFlag, resolveSettings } from './settings.ts';

const chartValues = parse(readFileSync(new URL('../../../charts/agentyard/values.yaml', import.meta.url), 'utf8')) as Record<string, unknown>;

/** The subset of `values` that has the same keys as `shape`. */
function subset(values: unknown, shape: unknown): unknown {
  if (typeof shape !== 'object' || shape === null || Array.isArray(shape)) return values;
  return Object.fromEntries(Object.keys(shape).map((k) => [k, subset((values as Record<string, unknown>)?.[k], (shape as Record<string, unknown>)[k])]));
}

describe('preflight settings', () => {
  it("keeps the chart's defaults", () => {
    expect(subset(chartValues, CHART_DEFAULTS)).toEqual(CHART_DEFAULTS);
  });

  it('reads a release Pod environment like the controller does', () => {
    const s = resolveSettings({}, { AGENTYARD_NAMESPACE: 'apps', AGENTYARD_SANDBOX_NAMESPACE: 'work', STORAGE_CLASS: 'fast', RUNTIME_BASE_URL: 'a.example.com', RUNTIME_DISABLE_SSL: 'false', AGENTYARD_LEASE_NAME: 'lease-x' });
    expect(s).toMatchObject({ namespace: 'apps', sandboxNamespace: 'work', storageClass: 'fast', leaseName: 'lease-x', controllerServiceAccount: 'agentyard-controller' });
    expect(s.runtimeEnv).toEqual({ RUNTIME_BASE_URL: 'a.example.com', RUNTIME_URL_SEPARATOR: '-runtime.', RUNTIME_DISABLE_SSL: 'false' });
    expect(s.secrets).toEqual([
      { namespace: 'apps', name: 'agentyard-api-key', key: 'api-key', what: 'secrets.apiKey' },
      { namespace: 'apps', name: 'agentyard-llm', key: 'api-key', what: 'secrets.modelProvider' },
    ]);
  });

  it('takes the ranges the sandbox NetworkPolicy denies from values or from the helm test Pod, and none while it is off', () => {
    const ranges = { podCidrs: ['10.244.0.0/16'], serviceCidrs: ['10.96.0.0/12'], nodeCidrs: ['10.0.0.0/16'] };
    expect(resolveSettings({}, { AGENTYARD_NETWORK_POLICY: JSON.stringify({ enabled: true, ...ranges }) }).deniedRanges).toEqual(ranges);
    const files = { 'a.yaml': 'networkPolicy: {podCidrs: [10.244.0.0/16], serviceCidrs: [10.96.0.0/12], nodeCidrs: [10.0.0.0/16]}\n', 'off.yaml': 'networkPolicy: {enabled: false}\n' };
    expect(resolveSettings({ values: ['a.yaml'] }, {}, (p) => files[p as keyof typeof files]).deniedRanges).toEqual(ranges);
    expect(resolveSettings({ values: ['a.yaml', 'off.yaml'] }, {}, (p) => files[p as keyof typeof files]).deniedRanges).toBeUndefined();
    expect(resolveSettings({}, {}).deniedRanges).toEqual({ podCidrs: [], serviceCidrs: [], nodeCidrs: [] });
  });

  it('lets values files win over the environment, and flags over both', () => {
    const files: Record<string, string> = {
      'a.yaml': 'baseDomain: example.org\nruntime: {storageClass: ssd}\ndatabase: {external: true}\nsecrets: {modelProvider: {name: ""}}\ningress: {tlsSecret: wild}\n',
      'b.yaml': 'runtime: {urlPattern: "https://{runtime_id}-runtime.example.org"}\n',
    };
    const s = resolveSettings({ namespace: 'prod', release: 'blue', values: ['a.yaml', 'b.yaml'] }, { STORAGE_CLASS: 'slow' }, (p) => files[p]!);
    expect(s).toMatchObject({ namespace: 'prod', storageClass: 'ssd', tlsSecret: 'wild', controllerServiceAccount: 'blue-agentyard-controller', apiServiceAccount: 'blue-agentyard-api', leaseName: 'blue-agentyard-controller' });
    expect(s.runtimeEnv).toMatchObject({ RUNTIME_BASE_URL: 'example.org', RUNTIME_URL_PATTERN: 'https://{runtime_id}-runtime.example.org' });
    expect(s.secrets.map((r) => r.what)).toEqual(['secrets.apiKey', 'secrets.database']);
    // OpenID Connect login adds its client secret; a public client has none to check.
    const oidc = (yaml: string) => resolveSettings({ namespace: 'prod', values: ['a.yaml', 'c.yaml'] }, {}, (p) => (p === 'c.yaml' ? yaml : files[p]!)).secrets;
    expect(oidc('login: {oidc: {enabled: true}}\n').at(-1)).toEqual({ namespace: 'prod', name: 'agentyard-oidc', key: 'client-secret', what: 'login.oidc.clientSecret' });
    expect(oidc('login: {oidc: {enabled: true, clientSecret: {name: ""}}}\n').map((r) => r.what)).toEqual(['secrets.apiKey', 'secrets.database']);
    const flagged = resolveSettings({ secrets: ['ns1/one:k'] }, {});
    expect(flagged.secrets).toEqual([{ namespace: 'ns1', name: 'one', key: 'k', what: '--secret' }]);
  });

  it('names resources as the chart does', () => {
    expect(fullname('agentyard')).toBe('agentyard');
    expect(fullname('prod-agentyard-eu')).toBe('prod-agentyard-eu');
    expect(fullname('blue')).toBe('blue-agentyard');
  });

  it('refuses a malformed --secret, and a values file that is not a mapping', () => {
    expect(() => parseSecretFlag('just-a-name')).toThrow(/<namespace>\/<name>:<key>/);
    expect(() => resolveSettings({ values: ['x.yaml'] }, {}, () => '- a\n- b\n')).toThrow(/x\.yaml: a values file must hold a mapping/);
  });

  it('prints each failure with its fix and a count', () => {
    const text = formatResults([
      { name: 'one', ok: true, detail: 'fine', fix: 'unused' },
      { name: 'two', ok: false, detail: 'broken', fix: 'do this' },
    ]);
    expect(text).toBe('ok    one: fine\nFAIL  two: broken\n      fix: do this\n1 of 2 checks failed\n');
  });
});
