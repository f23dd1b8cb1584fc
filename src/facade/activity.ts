// The activity signal behind the idle pause: agent events and user messages stamp the Sandbox's
// last-activity annotation, coalesced to at most one write per sandbox per interval, so a busy
// stream does not turn into a write per event.
import { ANNOTATION_LAST_ACTIVITY } from '../api/meta.ts';
import { SandboxKind } from '../api/sandbox.ts';
import type { FacadeDeps } from './deps.ts';
import { modify } from './resources.ts';

const DEFAULT_COALESCE_MS = 15_000;

export class ActivityRecorder {
  readonly #d: FacadeDeps;
  readonly #lastWrite = new Map<string, number>();
  readonly #intervalMs: number;

  constructor(d: FacadeDeps) {
    this.#d = d;
    this.#intervalMs = d.settings.activityCoalesceMs ?? DEFAULT_COALESCE_MS;
  }

  /** Best effort: a failed write is logged and retried with the next activity. */
  async record(sandboxName: string): Promise<void> {
    const now = this.#d.clock.now().toUTC();
    const last = this.#lastWrite.get(sandboxName);
    if (last !== undefined && now.toMillis() - last < this.#intervalMs) return;
    try {
      await modify(this.#d, SandboxKind, sandboxName, (sb) => {
        // Another replica (or an earlier life of this one) may have written it just now.
        const written = Date.parse(sb.metadata.annotations?.[ANNOTATION_LAST_ACTIVITY] ?? '');
        if (!Number.isNaN(written) && now.toMillis() - written < this.#intervalMs && now.toMillis() >= written) return undefined;
        sb.metadata.annotations = { ...sb.metadata.annotations, [ANNOTATION_LAST_ACTIVITY]: now.toISO({ suppressMilliseconds: false })! };
        return sb;
      });
      this.#lastWrite.set(sandboxName, now.toMillis());
    } catch (err) {
      this.#d.log?.warn({ err, sandbox: sandboxName }, 'recording sandbox activity failed');
    }
  }
}
