// The step timings every real-node suite prints at the end, and whether one of its steps failed
// (then the node's logs are kept for reading: node.stop(true)).
import { KEPT_LOGS } from './node.ts';

export class Steps {
  readonly timings: Record<string, number> = {};
  failed = false;

  /** Runs one step, recording its duration, and that it failed if it throws. */
  async timed<T>(step: string, fn: () => Promise<T>): Promise<T> {
    const t = Date.now();
    try {
      return await fn();
    } catch (err) {
      this.failed = true;
      throw err;
    } finally {
      this.timings[step] = Date.now() - t;
    }
  }

  /** The line a suite prints at its end: its timings beside the node's, and where a failed run's logs are. */
  report(suite: string, nodeTimings: Record<string, number> = {}): string {
    return `e2e/node ${suite} timings (ms): ${JSON.stringify({ ...nodeTimings, ...this.timings })}${this.failed ? `\nlogs of the failed run: ${KEPT_LOGS}` : ''}`;
  }
}
