// What preflight checks against, in the shape of the Helm chart's values: the chart's defaults,
// then the environment a Pod of the release has, then values files (-f, as given to helm), then
// flags. So `agentyard preflight -f my-values.yaml` before `helm install -f my-values.yaml`, and
// `helm test` after it, check the same things.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { DeniedRanges } from './ranges.ts';
import { minFreeDiskBytes } from '../../util/disk-space.ts';

export interface SecretRef {
  namespace: string;
  name: string;
  key: string;
  /** The value that names it, for the fix text (e.g. secrets.apiKey). */
  what: string;
}

export interface PreflightSettings {
  namespace: string;
  sandboxNamespace: string;
  storageClass: string;
  /** RUNTIME_* settings, as the controller reads them. */
  runtimeEnv: Record<string, string>;
  secrets: SecretRef[];
  /**
   * Wildcard TLS Secret of the application hosts, in the release namespace only (sandbox hosts get
   * the ingress controller's default certificate); empty when TLS is not terminated by the Ingress.
   */
  tlsSecret: string;
  controllerServiceAccount: string;
  apiServiceAccount: string;
  leaseName: string;
  /** External PostgreSQL app database to try (AGENTYARD_DATABASE_URL); absent with the bundled one. */
  databaseUrl?: string;
  /** The cluster ranges the sandbox NetworkPolicy denies; absent while networkPolicy.enabled is false. */
  deniedRanges?: DeniedRanges;
  /** Where this process keeps data (AGENTYARD_DATA_DIR), whose free space is checked; absent: not checked. */
  dataDir?: string;
  /** AGENTYARD_MIN_FREE_DISK_MB in bytes (default 512 MiB). */
  minFreeDiskBytes: number;
}

type Values = Record<string, unknown>;

/** The chart's defaults that preflight depends on; a unit test keeps them equal to values.yaml. */
export const CHART_DEFAULTS = {
  baseDomain: '',
  ingress: { tlsSecret: '' },
  runtime: { baseUrl: '', urlSeparator: '-runtime.', urlPattern: '', disableSsl: true, storageClass: '' },
  sandboxNamespace: { name: 'agentyard-sandboxes' },
  secrets: {
    apiKey: { name: 'agentyard-api-key', key: 'api-key' },
    modelProvider: { name: 'agentyard-llm', key: 'api-key' },
    database: { name: 'agentyard-database', key: 'url' },
  },
  database: { external: false },
  login: { oidc: { enabled: false, clientSecret: { name: 'agentyard-oidc', key: 'client-secret' } } },
  controller: { lease: { name: '' } },
  networkPolicy: { enabled: true, podCidrs: [] as string[], serviceCidrs: [] as string[], nodeCidrs: [] as string[] },
};

export interface PreflightFlags {
  namespace?: string;
  release?: string;
  values?: string[];
  secrets?: string[];
}

function isObject(v: unknown): v is Values {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function mergeValues(base: Values, over: Values): Values {
  const out: Values = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = isObject(v) && isObject(out[k]) ? mergeValues(out[k] as Values, v) : v;
  return out;
}

const ENV_TO_RUNTIME: Record<string, string> = {
  STORAGE_CLASS: 'storageClass',
  RUNTIME_BASE_URL: 'baseUrl',
  RUNTIME_URL_SEPARATOR: 'urlSeparator',
  RUNTIME_URL_PATTERN: 'urlPattern',
  RUNTIME_DISABLE_SSL: 'disableSsl', // kept as text: the addressing check reports a bad one
};

/** The chart's value names for what a release's Pods carry in their environment. */
function valuesFromEnv(env: NodeJS.ProcessEnv): Values {
  const runtime: Values = {};
  for (const [name, key] of Object.entries(ENV_TO_RUNTIME)) if (env[name] !== undefined) runtime[key] = env[name];
  const v: Values = { runtime };
  if (env.AGENTYARD_SANDBOX_NAMESPACE) v.sandboxNamespace = { name: env.AGENTYARD_SANDBOX_NAMESPACE };
  if (env.RUNTIME_TLS_SECRET !== undefined) v.ingress = { tlsSecret: env.RUNTIME_TLS_SECRET };
  if (env.AGENTYARD_LEASE_NAME) v.controller = { lease: { name: env.AGENTYARD_LEASE_NAME } };
  // The helm test Pod's copy of the networkPolicy values (enabled and the three ranges), as JSON.
  if (env.AGENTYARD_NETWORK_POLICY) v.networkPolicy = JSON.parse(env.AGENTYARD_NETWORK_POLICY) as Values;
  return v;
}

/** The chart's `agentyard.fullname`. */
export function fullname(release: string): string {
  const name = release.includes('agentyard') ? release : `${release}-agentyard`;
  return name.slice(0, 40).replace(/-+$/, '');
}

/** `namespace/name:key`, as given to --secret. */
export function parseSecretFlag(flag: string, what = '--secret'): SecretRef {
  const m = /^([a-z0-9.-]+)\/([a-z0-9.-]+):(.+)$/.exec(flag);
  if (!m) throw new Error(`--secret must look like <namespace>/<name>:<key>, got '${flag}'`);
  return { namespace: m[1]!, name: m[2]!, key: m[3]!, what };
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.map(str) : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v));

export function resolveSettings(flags: PreflightFlags, env: NodeJS.ProcessEnv, readFile: (path: string) => string = (p) => readFileSync(p, 'utf8')): PreflightSettings {
  let values = mergeValues(CHART_DEFAULTS, valuesFromEnv(env));
  for (const file of flags.values ?? []) {
    const parsed: unknown = parse(readFile(file));
    if (parsed !== null && parsed !== undefined && !isObject(parsed)) throw new Error(`${file}: a values file must hold a mapping`);
    values = mergeValues(values, (parsed as Values | null) ?? {});
  }
  const v = values as typeof CHART_DEFAULTS & Values;
  const namespace = flags.namespace ?? env.AGENTYARD_NAMESPACE ?? 'agentyard';
  const name = fullname(flags.release ?? 'agentyard');
  const sandboxNamespace = str(v.sandboxNamespace.name);
  const secrets: SecretRef[] = flags.secrets?.length
    ? flags.secrets.map((s) => parseSecretFlag(s))
    : [
        { namespace, ...v.secrets.apiKey, what: 'secrets.apiKey' },
        // Read by the API's model gateway, so in the release namespace: sandboxes never get it.
        ...(v.secrets.modelProvider.name ? [{ namespace, ...v.secrets.modelProvider, what: 'secrets.modelProvider' }] : []),
        ...(v.database.external ? [{ namespace, ...v.secrets.database, what: 'secrets.database' }] : []),
        // OpenID Connect login's client secret, read by the API only.
        ...(v.login.oidc.enabled && v.login.oidc.clientSecret.name ? [{ namespace, ...v.login.oidc.clientSecret, what: 'login.oidc.clientSecret' }] : []),
      ];
  const runtimeEnv: Record<string, string> = {
    RUNTIME_BASE_URL: str(v.runtime.baseUrl) || str(v.baseDomain),
    RUNTIME_URL_SEPARATOR: str(v.runtime.urlSeparator),
    RUNTIME_DISABLE_SSL: str(v.runtime.disableSsl),
    ...(v.runtime.urlPattern ? { RUNTIME_URL_PATTERN: str(v.runtime.urlPattern) } : {}),
  };
  return {
    namespace,
    sandboxNamespace,
    storageClass: str(v.runtime.storageClass),
    runtimeEnv,
    secrets,
    tlsSecret: str(v.ingress.tlsSecret),
    controllerServiceAccount: `${name}-controller`,
    apiServiceAccount: `${name}-api`,
    leaseName: str(v.controller.lease.name) || `${name}-controller`,
    ...(env.AGENTYARD_DATABASE_URL ? { databaseUrl: env.AGENTYARD_DATABASE_URL } : {}),
    ...(v.networkPolicy.enabled === false ? {} : { deniedRanges: { podCidrs: strings(v.networkPolicy.podCidrs), serviceCidrs: strings(v.networkPolicy.serviceCidrs), nodeCidrs: strings(v.networkPolicy.nodeCidrs) } }),
    ...(env.AGENTYARD_DATA_DIR ? { dataDir: env.AGENTYARD_DATA_DIR } : {}),
    minFreeDiskBytes: minFreeDiskBytes(env),
  };
}
