// Memory settings every agent-server process runs with (both runtimes: ProcessRuntime puts them in
// the child's environment, bin/agentyard exports them, the Kubernetes runtime sets them in the sandbox container).
// Why: a heap profile of a 1,000-step conversation shows no JS object retained per step (the heap
// after a full GC stays at ~70 MiB), but each step allocates in proportion to the history (the model
// request carries the whole conversation), so V8 grows its young generation to 128 MiB and glibc's
// adaptive mmap threshold lets large freed buffers fragment its heap: RSS climbed from ~250 to
// ~470 MiB. A 8 MiB semi-space and a fixed mmap threshold (large buffers go back to the system when
// freed) keep it at ~260-290 MiB over the same run (bench/soak.ts), at no measurable cost per step.
// A 2 MiB semi-space (issue #16): start-up alone grew an 8 MiB one to its cap, 16 MiB of new space
// committed for the life of an idle process (idle RSS 113 → 102 MiB; after 100 steps 145 → 130,
// after 1,000 262 → 175; CPU per step unchanged within the machine's noise, bench/agent-steps.ts).
// One malloc arena: V8's compiler threads otherwise fill a second arena with freed zone memory
// that stays resident (about 5 MiB after the first conversation's steps).
export const AGENT_SERVER_MEMORY_ENV: Readonly<Record<string, string>> = Object.freeze({
  NODE_OPTIONS: '--max-semi-space-size=2',
  MALLOC_ARENA_MAX: '1',
  MALLOC_MMAP_THRESHOLD_: '131072',
});
