// List, then watch from the list's resourceVersion; list again after Gone or a closed stream.
// Each (re)list is handed to `onList`, so consumers resynchronise after anything they missed.
import { Gone } from '../api/errors.ts';
import type { KubeObject, ResourceKind } from '../api/meta.ts';
import type { WatchEvent } from '../store/types.ts';
import type { FacadeDeps } from './deps.ts';

export interface WatchLoopOptions<T> {
  onList?(items: T[]): Promise<void> | void;
  onEvent(ev: WatchEvent<T>): Promise<void> | void;
  signal: AbortSignal;
  retryMs?: number;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

export async function watchLoop<T extends KubeObject>(d: Pick<FacadeDeps, 'store' | 'namespace' | 'log'>, kind: ResourceKind<T>, o: WatchLoopOptions<T>): Promise<void> {
  while (!o.signal.aborted) {
    try {
      const list = await d.store.list(kind, d.namespace);
      await o.onList?.(list.items);
      for await (const ev of d.store.watch(kind, d.namespace, { resourceVersion: list.resourceVersion, signal: o.signal })) {
        await o.onEvent(ev);
      }
    } catch (err) {
      if (o.signal.aborted) return;
      if (err instanceof Gone) continue;
      d.log?.warn({ err, kind: kind.kind }, 'watch failed; listing again shortly');
      await sleep(o.retryMs ?? 1000, o.signal);
    }
  }
}

export { sleep };
