// `agentyard preflight`: validates the cluster for an install; prints what is wrong and how to fix
// it; exit 1 when any check fails, 2 on bad usage.
import { KubeConfig } from '@kubernetes/client-node';
import { parseArgs } from 'node:util';
import { formatResults, runChecks } from './checks.ts';
import { resolveSettings } from './settings.ts';

export const PREFLIGHT_USAGE = `Usage: agentyard preflight [options]

Checks what an agentyard install needs: CRDs, both namespaces, the storage class, the sandbox URL
settings, the pre-created secrets, the external app database, and the RBAC of the controller's and the API's service accounts.
Uses KUBECONFIG (or in-cluster credentials).

  -n, --namespace <ns>   release namespace (AGENTYARD_NAMESPACE, default agentyard)
  -f, --values <file>    the chart values file(s) you install with; repeatable
      --release <name>   Helm release name (default agentyard), for service account names
      --secret <ns>/<name>:<key>   a Secret to require instead of those the values imply; repeatable
Settings also come from the environment a release's Pods have: STORAGE_CLASS, RUNTIME_BASE_URL,
RUNTIME_URL_SEPARATOR, RUNTIME_URL_PATTERN, RUNTIME_DISABLE_SSL, RUNTIME_TLS_SECRET,
AGENTYARD_SANDBOX_NAMESPACE, AGENTYARD_LEASE_NAME; values files and flags win over it.
With AGENTYARD_DATABASE_URL set (external PostgreSQL), it also connects to that database.
With AGENTYARD_DATA_DIR set, it checks the free disk there (AGENTYARD_MIN_FREE_DISK_MB, default 512).
`;

export async function runPreflightCli(argv: string[], env: NodeJS.ProcessEnv = process.env, out: (s: string) => void = (s) => process.stdout.write(s)): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        namespace: { type: 'string', short: 'n' },
        values: { type: 'string', short: 'f', multiple: true },
        release: { type: 'string' },
        secret: { type: 'string', multiple: true },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }).values;
  } catch (err) {
    out(`agentyard preflight: ${(err as Error).message}\n\n${PREFLIGHT_USAGE}`);
    return 2;
  }
  if (parsed.help) {
    out(PREFLIGHT_USAGE);
    return 0;
  }
  let settings;
  try {
    settings = resolveSettings(
      {
        ...(parsed.namespace ? { namespace: parsed.namespace } : {}),
        ...(parsed.release ? { release: parsed.release } : {}),
        ...(parsed.values ? { values: parsed.values } : {}),
        ...(parsed.secret ? { secrets: parsed.secret } : {}),
      },
      env,
    );
  } catch (err) {
    out(`agentyard preflight: ${(err as Error).message}\n`);
    return 2;
  }
  const kc = new KubeConfig();
  try {
    kc.loadFromDefault();
  } catch (err) {
    out(`FAIL  kubeconfig: could not load it (${(err as Error).message})\n      fix: point KUBECONFIG at a kubeconfig file for the cluster, or run inside it (helm test)\n`);
    return 1;
  }
  out(`agentyard preflight: cluster ${kc.getCurrentCluster()?.server ?? '(none)'}, namespace ${settings.namespace}, sandbox namespace ${settings.sandboxNamespace}\n`);
  const results = await runChecks(kc, settings);
  out(formatResults(results));
  return results.every((r) => r.ok) ? 0 : 1;
}
