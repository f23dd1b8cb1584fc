// /api/v1/admin: what the admin console shows about the installation itself (administrators only).
import Router from '@koa/router';
import { licenseStatus } from '../../license/license.ts';
import { adminOnly } from '../admin.ts';
import type { Facade } from '../context.ts';
import { uploadSupportBundle } from '../support-bundle.ts';

export function adminRoutes({ d }: Facade): Router {
  const r = new Router({ prefix: '/admin' });
  const admins = adminOnly(d, 'Only administrators see the installation');

  r.get('/license', admins, async (ctx) => {
    const seatsUsed = (await d.db.listUsers()).filter((u) => !u.disabled_at).length;
    ctx.body = licenseStatus(d.license, d.clock.now().toJSDate(), seatsUsed);
  });

  r.post('/support-bundle', admins, async (ctx) => {
    ctx.body = await uploadSupportBundle(d, d.supportUpload ?? {});
  });

  return r;
}
