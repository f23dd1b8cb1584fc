// Memory settings the controller process runs with: bin/agentyard sets them for `agentyard
// controller`, and bench/controller-scale.ts runs its controller with them. Why: at 10,000 Sandboxes
// on a cluster the heap after a full GC is ~60-80 MiB (half of it the code of client-node and our
// modules), but the informer's first list keeps every object it reads alive, V8 sees a high survival
// rate and grows its young generation towards its cap (128 MiB by default here): RSS stood at ~330
// MiB once synced; with these 190 MiB (bench/RESULTS.md). They were the agent server's settings
// then (src/agent-server/memory-env.ts, since tuned further for that process); measured as they are here.
export const CONTROLLER_MEMORY_ENV: Readonly<Record<string, string>> = Object.freeze({
  NODE_OPTIONS: '--max-semi-space-size=8',
  MALLOC_ARENA_MAX: '2',
  MALLOC_MMAP_THRESHOLD_: '131072',
});
