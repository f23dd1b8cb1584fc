// A replica for the leader-election e2e: campaigns for a Lease and prints one JSON line per event
// ({"event":"leading"|"stopped"|"leader"|"ready"}). SIGTERM cancels (the Lease is released, exit 0);
// losing the Lease exits 1 at once, as `agentyard controller` does.
//   KUBECONFIG=... LEASE_NAMESPACE=default LEASE_NAME=x IDENTITY=a LEASE_MS=3000 RENEW_MS=2000 RETRY_MS=500 node leader-child.ts
import { KubeConfig } from '@kubernetes/client-node';
import { LeaderElector } from '../../src/controller/leader/leader-elector.ts';

const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is required`);
  return v;
};
const print = (event: string, extra: Record<string, unknown> = {}): void => {
  process.stdout.write(`${JSON.stringify({ event, identity, at: Date.now(), ...extra })}\n`);
};

const identity = env('IDENTITY');
const kubeConfig = new KubeConfig();
kubeConfig.loadFromFile(env('KUBECONFIG'));
const elector = new LeaderElector({
  kubeConfig,
  namespace: env('LEASE_NAMESPACE'),
  name: env('LEASE_NAME'),
  identity,
  leaseDurationMs: Number(env('LEASE_MS')),
  renewDeadlineMs: Number(env('RENEW_MS')),
  retryPeriodMs: Number(env('RETRY_MS')),
});
const cancel = new AbortController();
process.once('SIGTERM', () => cancel.abort());
print('ready');
await elector.run(
  {
    onStartedLeading: (signal) => {
      print('leading');
      return new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    },
    onStoppedLeading: () => {
      print('stopped', { cancelled: cancel.signal.aborted });
      if (!cancel.signal.aborted) process.exit(1);
    },
    onNewLeader: (leader) => print('leader', { leader }),
  },
  cancel.signal,
);
process.exit(0);
