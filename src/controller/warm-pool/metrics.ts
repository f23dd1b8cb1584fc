// Warm-pool metrics: claims (hits) and cold starts (misses) of conversation starts, and each pool's
// ready and desired members, for operators to see whether their pools are big enough.
import { counter, gauge, type Registry } from '../../util/metrics.ts';

export interface WarmPoolMetrics {
  /** A start claimed a member of `pool`. */
  hit(pool: string): void;
  /** A start needed a new sandbox and no pool had a ready member for it: a cold start. */
  miss(): void;
  pool(name: string, ready: number, desired: number): void;
  poolGone(name: string): void;
}

export function warmPoolMetrics(registry: Registry): WarmPoolMetrics {
  const hits = counter(registry, 'agentyard_warm_pool_hits_total', 'Conversation starts that claimed a ready warm-pool sandbox', ['pool']);
  const misses = counter(registry, 'agentyard_warm_pool_misses_total', 'Conversation starts that needed a new sandbox and started it cold (no ready warm-pool member matched)');
  const ready = gauge(registry, 'agentyard_warm_pool_ready', 'Unclaimed warm-pool members that are RUNNING', ['pool']);
  const desired = gauge(registry, 'agentyard_warm_pool_desired', 'Ready members a warm pool asks for (spec.replicas)', ['pool']);
  return {
    hit: (pool) => hits.inc({ pool }),
    miss: () => misses.inc(),
    pool: (name, r, d) => {
      ready.set({ pool: name }, r);
      desired.set({ pool: name }, d);
    },
    poolGone: (name) => {
      ready.remove({ pool: name });
      desired.remove({ pool: name });
    },
  };
}
