// `agentyard preflight [--namespace <ns>]`: validates the cluster; exit 1 when anything is wrong.
import { KubeConfig } from '@kubernetes/client-node';
import { parseArgs } from 'node:util';
import { formatResults, runChecks } from './checks.ts';

export async function runPreflightCli(argv: string[], env: NodeJS.ProcessEnv = process.env, out: (s: string) => void = (s) => process.stdout.write(s)): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { namespace: { type: 'string' }, 'sandbox-namespace': { type: 'string' } }, strict: true });
  const kc = new KubeConfig();
  kc.loadFromDefault();
  const namespace = values.namespace ?? env.AGENTYARD_NAMESPACE ?? 'agentyard';
  const secrets = (env.AGENTYARD_PREFLIGHT_SECRETS ?? 'agentyard-api-key:api-key,agentyard-llm:api-key')
    .split(',')
    .filter(Boolean)
    .map((s) => ({ name: s.split(':')[0]!, key: s.split(':')[1] ?? 'api-key' }));
  const results = await runChecks(kc, {
    namespace,
    sandboxNamespace: values['sandbox-namespace'] ?? env.AGENTYARD_SANDBOX_NAMESPACE ?? 'agentyard-sandboxes',
    storageClass: env.STORAGE_CLASS,
    secrets,
    env,
  });
  out(formatResults(results));
  return results.every((r) => r.ok) ? 0 : 1;
}
