// Writes while the disk refuses them: answered 507 with the reason (and Retry-After) instead of
// being accepted into memory or failing halfway. Each write first tries to save what is held, so
// the first request after space returns goes through. A write that itself meets the fault marks the
// store faulted (errorMiddleware answers it 507).
import type { Middleware } from 'koa';
import { InsufficientStorage } from '../../api/errors.ts';
import { STORAGE_RETRY_AFTER_SECONDS } from '../../facade/errors.ts';
import type { StorageHealth } from '../store/storage-health.ts';

/** Throws InsufficientStorage (507) while the disk refuses writes, after trying the held ones again. */
export function assertWritable(storage: StorageHealth): void {
  if (storage.retry()) return;
  throw new InsufficientStorage(`Insufficient storage: ${storage.fault?.detail ?? 'the agent server cannot save.'} Nothing was changed; retry once space is freed.`, {
    retryAfterSeconds: STORAGE_RETRY_AFTER_SECONDS,
  });
}

export function storageGuard(storage: StorageHealth): Middleware {
  return async function guardStorage(ctx, next) {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') assertWritable(storage);
    try {
      await next();
    } catch (err) {
      storage.report(err);
      throw err;
    }
  };
}
