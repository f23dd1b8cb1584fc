// An expired license refuses what would start new work — a conversation, a sandbox — with a
// message saying so (403), and nothing else: reading, downloading, deleting and the event sink go
// on, so nothing is lost and every transcript stays readable (src/license/license.ts).
import type { Context, Next } from 'koa';
import { Forbidden } from '../api/errors.ts';
import { expiredMessage, isExpired } from '../license/license.ts';
import type { FacadeDeps } from './deps.ts';

const STARTS = new Set(['/api/v1/app-conversations', '/api/v1/app-conversations/stream-start', '/api/v1/sandboxes']);

export function licenseGate(d: FacadeDeps) {
  return async function license(ctx: Context, next: Next): Promise<void> {
    if (ctx.method === 'POST' && d.license && STARTS.has(ctx.path.replace(/\/+$/, '')) && isExpired(d.license, d.clock.now().toJSDate())) {
      throw new Forbidden(expiredMessage(d.license));
    }
    await next();
  };
}
