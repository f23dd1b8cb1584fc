// When the last run of an agent server ends, the process idles until the next message: one full
// garbage collection then hands the run's garbage back (each step allocates in proportion to the
// history: the model request carries the whole conversation) at once, instead of whenever V8's
// memory reducer gets to it seconds later, which a pool of idle sandboxes pays for meanwhile
// (issue #16: RSS after a 100-step conversation). One collection per idle moment, never per step.
// Needs `--expose-gc` (src/agent-server/memory-env.ts); without it nothing happens.
type Gc = (options?: { type?: 'major' | 'minor'; execution?: 'sync' | 'async' }) => void;

let pending = false;

/** Schedules one full collection for after the current I/O (a no-op without `globalThis.gc`). */
export function collectWhenIdle(): void {
  const gc = (globalThis as { gc?: Gc }).gc;
  if (!gc || pending) return;
  pending = true;
  setImmediate(() => {
    pending = false;
    gc({ type: 'major', execution: 'sync' });
  });
}
