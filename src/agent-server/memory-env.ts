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
// A 32 KiB mmap threshold (was 128 KiB): after a 100-step conversation, `malloc_trim(0)` (called
// through gdb) handed 6-10 MiB of freed but resident malloc memory back at 128 KiB and under 1 MiB at
// 32 KiB — the compilers' zone segments and the request buffers of each step, freed between
// long-lived allocations, now go back to the system when freed (RSS after 100 steps −5 to −9 MiB,
// CPU per step unchanged within the noise; 16 KiB measured no better).
import { setFlagsFromString } from 'node:v8';

export const AGENT_SERVER_MEMORY_ENV: Readonly<Record<string, string>> = Object.freeze({
  NODE_OPTIONS: '--max-semi-space-size=2',
  MALLOC_ARENA_MAX: '1',
  MALLOC_MMAP_THRESHOLD_: '32768',
});

// V8 flags the agent server sets on itself when it starts (Node does not accept them in
// NODE_OPTIONS, and set here they do not reach the agent's own Node processes either).
// No Maglev (V8's mid-tier optimising compiler; hot code still reaches Turbofan): its code, its
// feedback metadata and its compile zones cost 4-8 MiB of RSS after 100 steps, for no measurable
// CPU per step in an agent server, whose steps wait on the model and on tools
// (bench/agent-steps.ts, bench/RESULTS.md).
export const AGENT_SERVER_V8_FLAGS: readonly string[] = Object.freeze(['--no-maglev']);

/** Sets AGENT_SERVER_V8_FLAGS on this process: first thing at start, before hot code is compiled. */
export function applyAgentServerV8Flags(): void {
  for (const flag of AGENT_SERVER_V8_FLAGS) setFlagsFromString(flag);
}
