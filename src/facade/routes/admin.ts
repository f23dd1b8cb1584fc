// /api/v1/admin: the admin console — the installation itself (license, support bundle upload), the
// deployment-wide Sandbox Configuration (with its audit trail) and the sandboxes of every user.
// Administrators only; anyone else gets 403.
import Router from '@koa/router';
import { SandboxConfigurationUpdate, type AdminSandbox } from '../../api/app/admin.ts';
import { LABEL_OWNER } from '../../api/meta.ts';
import { SandboxKind } from '../../api/sandbox.ts';
import { licenseStatus } from '../../license/license.ts';
import { adminOnly } from '../admin.ts';
import { input, userOf, type Facade } from '../context.ts';
import { sandboxPhase } from '../resources.ts';
import { getSandboxConfiguration, updateSandboxConfiguration } from '../sandbox-configuration.ts';
import { uploadSupportBundle } from '../support-bundle.ts';
import { validate } from '../validate.ts';

export function adminRoutes({ d }: Facade): Router {
  const r = new Router({ prefix: '/admin' });
  const admins = adminOnly(d, 'Only administrators see the installation');
  const console = adminOnly(d, 'Only administrators use the admin console');

  r.get('/license', admins, async (ctx) => {
    const seatsUsed = (await d.db.listUsers()).filter((u) => !u.disabled_at).length;
    ctx.body = licenseStatus(d.license, d.clock.now().toJSDate(), seatsUsed);
  });

  r.post('/support-bundle', admins, async (ctx) => {
    ctx.body = await uploadSupportBundle(d, d.supportUpload ?? {});
  });

  r.get('/sandbox-configuration', console, async (ctx) => {
    ctx.body = await getSandboxConfiguration(d);
  });

  r.patch('/sandbox-configuration', console, validate({ body: SandboxConfigurationUpdate }), async (ctx) => {
    ctx.body = await updateSandboxConfiguration(d, userOf(ctx), input<unknown, SandboxConfigurationUpdate>(ctx).body);
  });

  r.get('/sandboxes', console, async (ctx) => {
    const users = new Map((await d.db.listUsers()).map((u) => [u.id, u.name]));
    const items: AdminSandbox[] = (await d.store.list(SandboxKind, d.namespace)).items.map((sb) => {
      const owner = sb.spec.owner || sb.metadata.labels?.[LABEL_OWNER] || null;
      return {
        id: sb.metadata.name,
        owner_id: owner,
        owner_name: owner ? (users.get(owner) ?? null) : null,
        status: sandboxPhase(sb),
        status_detail: sb.status?.message ?? null,
        conversation_count: sb.status?.conversationCount ?? 0,
        created_at: sb.metadata.creationTimestamp ?? null,
        last_activity_at: sb.status?.lastActivityTime ?? null,
      };
    });
    ctx.body = { items };
  });

  return r;
}
