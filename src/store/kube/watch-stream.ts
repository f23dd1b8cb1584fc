// One ResourceStore.watch() over client-node's Watch: a single logical stream of changes that
// survives the connection ending (server timeout, client-node's 30 s inactivity abort, network
// errors) by reconnecting from the last resourceVersion seen, bookmarks included. Only a
// resourceVersion the server no longer remembers (410) ends it, with Gone, as the contract says.
import type { KubeConfig } from '@kubernetes/client-node';
import { Watch } from '@kubernetes/client-node';
import { Gone } from '../../api/errors.ts';
import type { KubeObject } from '../../api/meta.ts';
import type { WatchEvent } from '../types.ts';
import { fromStatus, type KubeStatus } from './errors.ts';
import type { Logger } from '../../util/log.ts';

export interface WatchStreamOptions<T> {
  kubeConfig: KubeConfig;
  path: string;
  labelSelector?: string;
  /** Resolves the starting resourceVersion (given, or the current one from a list). */
  startFrom: Promise<string>;
  toObject: (raw: unknown) => T;
  signal?: AbortSignal;
  /** Asks the server to end each watch request after this long (the stream then resumes). */
  timeoutSeconds?: number;
  log: Logger;
}

type Item<T> = { event: WatchEvent<T> } | { error: unknown } | { end: true };

const BACKOFF_START_MS = 200;
const BACKOFF_MAX_MS = 10_000;

/**
 * Starts connecting as soon as it is created, so that "changes after now" means after the
 * watch() call rather than after the first next().
 */
export class WatchStream<T extends KubeObject> implements AsyncIterableIterator<WatchEvent<T>> {
  readonly #opts: WatchStreamOptions<T>;
  readonly #watch: Watch;
  readonly #queue: Item<T>[] = [];
  #wake: (() => void) | undefined;
  #stopped = false;
  #abort: AbortController | undefined;
  #sleepTimer: NodeJS.Timeout | undefined;
  #sleepDone: (() => void) | undefined;
  #endConnection: (() => void) | undefined;
  readonly #onAbort = (): void => this.#stop();
  #connects = 0;

  constructor(opts: WatchStreamOptions<T>) {
    this.#opts = opts;
    this.#watch = new Watch(opts.kubeConfig);
    if (opts.signal?.aborted) {
      this.#stopped = true;
      opts.startFrom.catch(() => {});
      return;
    }
    opts.signal?.addEventListener('abort', this.#onAbort, { once: true });
    void this.#run();
  }

  /** HTTP watch requests made so far; more than one means the stream resumed. */
  get connects(): number {
    return this.#connects;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async next(): Promise<IteratorResult<WatchEvent<T>>> {
    for (;;) {
      const item = this.#queue.shift();
      if (item) {
        if ('event' in item) return { value: item.event, done: false };
        this.#stop();
        if ('error' in item) throw item.error;
        return { value: undefined, done: true };
      }
      if (this.#stopped) return { value: undefined, done: true };
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
  }

  async return(): Promise<IteratorResult<WatchEvent<T>>> {
    this.#stop();
    return { value: undefined, done: true };
  }

  #push(item: Item<T>): void {
    this.#queue.push(item);
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  #stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#opts.signal?.removeEventListener('abort', this.#onAbort);
    this.#abort?.abort();
    this.#endConnection?.();
    clearTimeout(this.#sleepTimer);
    this.#sleepDone?.();
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  async #run(): Promise<void> {
    const { path, log } = this.#opts;
    let rv: string;
    try {
      rv = await this.#opts.startFrom;
    } catch (err) {
      this.#push({ error: err });
      return;
    }
    let backoff = BACKOFF_START_MS;
    while (!this.#stopped) {
      const startedAt = Date.now();
      let progressed = false;
      const outcome = await this.#connectOnce(rv, (next) => {
        rv = next;
        progressed = true;
        backoff = BACKOFF_START_MS;
      });
      if (this.#stopped) return;
      if (outcome.fatal) {
        this.#push({ error: outcome.fatal });
        return;
      }
      // A clean close (server timeout, the idle timer) resumes at once, unless the server keeps
      // closing straight away without sending anything: that gets the backoff too, not a hot loop.
      if (outcome.retryError === undefined && (progressed || Date.now() - startedAt > 1000)) continue;
      log.warn({ path, err: String(outcome.retryError), backoffMs: backoff }, 'watch failed; reconnecting');
      await this.#sleep(backoff);
      backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
    }
  }

  /** One HTTP watch. Resolves when it ends; events are queued as they arrive. */
  #connectOnce(rv: string, advance: (rv: string) => void): Promise<{ fatal?: unknown; retryError?: unknown }> {
    const { path, labelSelector, toObject } = this.#opts;
    return new Promise((resolve) => {
      let settled = false;
      const finish = (r: { fatal?: unknown; retryError?: unknown }): void => {
        if (settled) return;
        settled = true;
        this.#abort?.abort();
        this.#endConnection = undefined;
        resolve(r);
      };
      this.#endConnection = () => finish({});
      const params: Record<string, string | boolean | number> = { resourceVersion: rv, allowWatchBookmarks: true };
      if (labelSelector) params.labelSelector = labelSelector;
      if (this.#opts.timeoutSeconds) params.timeoutSeconds = this.#opts.timeoutSeconds;
      this.#connects++;
      this.#watch
        .watch(
          path,
          params,
          (type: string, obj: unknown) => {
            if (settled || this.#stopped) return;
            if (type === 'ERROR') {
              const status = obj as KubeStatus;
              const code = status.code ?? 500;
              if (code === 410) finish({ fatal: new Gone(status.message ?? `resourceVersion ${rv} is too old`) });
              else if (code >= 500 || code === 429) finish({ retryError: fromStatus(code, status, path) });
              else finish({ fatal: fromStatus(code, status, path) });
              return;
            }
            const next = (obj as KubeObject | undefined)?.metadata?.resourceVersion;
            if (next) advance(next);
            if (type === 'BOOKMARK') return;
            if (type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED') {
              this.#push({ event: { type, object: toObject(obj) } });
            }
          },
          (err: unknown) => {
            if (err == null || isTimeout(err)) return finish({});
            const code = (err as { statusCode?: number }).statusCode;
            if (code === 410) return finish({ fatal: new Gone(`resourceVersion ${rv} is too old`) });
            if (code !== undefined && code < 500 && code !== 429) return finish({ fatal: fromStatus(code, undefined, path) });
            finish({ retryError: err });
          },
        )
        .then(
          (controller) => {
            if (settled || this.#stopped) controller.abort();
            else this.#abort = controller;
          },
          (err: unknown) => finish({ retryError: err }),
        );
    });
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.#sleepDone = resolve;
      this.#sleepTimer = setTimeout(resolve, ms);
    });
  }
}

function isTimeout(err: unknown): boolean {
  return err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
}
