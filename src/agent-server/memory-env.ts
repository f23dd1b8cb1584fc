// Memory settings every agent-server process runs with (both runtimes: ProcessRuntime puts them in
// the child's environment, bin/agentyard sets them for `agentyard agent-server` in a sandbox image).
// Why: a heap profile of a 1,000-step conversation shows no JS object retained per step (the heap
// after a full GC stays at ~70 MiB), but each step allocates in proportion to the history (the model
// request carries the whole conversation), so V8 grows its young generation to 128 MiB and glibc's
// adaptive mmap threshold lets large freed buffers fragment its heap: RSS climbed from ~250 to
// ~470 MiB. A 8 MiB semi-space and a fixed mmap threshold (large buffers go back to the system when
// freed) keep it at ~260-290 MiB over the same run (bench/soak.ts), at no measurable cost per step.
export const AGENT_SERVER_MEMORY_ENV: Readonly<Record<string, string>> = Object.freeze({
  NODE_OPTIONS: '--max-semi-space-size=8',
  MALLOC_ARENA_MAX: '2',
  MALLOC_MMAP_THRESHOLD_: '131072',
});
