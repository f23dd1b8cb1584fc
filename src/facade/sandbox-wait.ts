// Waiting for one sandbox to reach a state, for requests that answer only once it has (a workspace
// read that resumed a paused sandbox). Driven by the store's watch, so nothing polls; a request
// that waits too long is answered by its caller, never left hanging.
import { Gone } from '../api/errors.ts';
import { SandboxKind, type Sandbox } from '../api/sandbox.ts';
import type { FacadeDeps } from './deps.ts';

/**
 * The sandbox as soon as `done` holds for it (checked on `from` first; `undefined` is a deleted
 * sandbox), or `null` when `timeoutMs` passes first.
 */
export async function awaitSandbox(
  d: Pick<FacadeDeps, 'store' | 'namespace'>,
  from: Sandbox,
  done: (sb: Sandbox | undefined) => boolean,
  timeoutMs: number,
): Promise<Sandbox | undefined | null> {
  if (done(from)) return from;
  const name = from.metadata.name;
  const signal = AbortSignal.timeout(timeoutMs);
  let resourceVersion = from.metadata.resourceVersion;
  while (!signal.aborted) {
    try {
      for await (const ev of d.store.watch(SandboxKind, d.namespace, { resourceVersion, signal })) {
        resourceVersion = ev.object.metadata.resourceVersion;
        if (ev.object.metadata.name !== name) continue;
        const sb = ev.type === 'DELETED' ? undefined : ev.object;
        if (done(sb)) return sb;
        if (!sb) return null; // deleted, and the caller was not waiting for that
      }
    } catch (err) {
      if (!(err instanceof Gone)) throw err;
      // Too old to resume the watch: read the sandbox again and watch from there.
      const now = await d.store.get(SandboxKind, d.namespace, name);
      if (done(now)) return now;
      if (!now) return null;
      resourceVersion = now.metadata.resourceVersion;
    }
  }
  return null;
}
