// /api/settings/secrets: the agent server's named secrets, as OpenHands 1.58's settings_router.py
// serves them (list without values, upsert, read one value as text/plain for LookupSecret, delete).
// Values go nowhere but the store and GET /secrets/{name}: never into a log line or a list.
// The stored agent and conversation settings, their forms and MCP entries: routes/settings-doc.ts.
import Router from '@koa/router';
import { Invalid, NotFound } from '../../api/errors.ts';
import { SECRET_NAME_MESSAGE, SECRET_NAME_PATTERN, SecretCreateRequest, type SecretItemResponse } from '../../api/agent-server/settings.ts';
import type { Logger } from '../../util/log.ts';
import { MASK } from '../secrets.ts';
import type { SettingsSecretStore } from '../store/settings-store.ts';
import { parseQuery, validate } from '../http/validate.ts';
import Type from 'typebox';

/**
 * A bad name is a located issue (OpenHands answers the same sentence as a bare string detail: a
 * deliberate difference, so a client reads every 422 of this server the same way).
 */
function checkName(name: string, loc: (string | number)[]): void {
  if (!SECRET_NAME_PATTERN.test(name)) throw new Invalid([{ loc, msg: SECRET_NAME_MESSAGE, type: 'value_error' }]);
}

const ListQuery = Type.Object({ agent_profile_id: Type.Optional(Type.String()) });

/** `secretRefs`: an agent profile's secret_refs by its id (null: all secrets; undefined: no such profile). */
export function settingsRoutes(store: SettingsSecretStore, log: Logger, secretRefs: (agentProfileId: string) => string[] | null | undefined = () => undefined): Router {
  const router = new Router();

  router.get('/settings/secrets', async (ctx) => {
    const q = parseQuery(ListQuery, ctx.query);
    // With an agent profile: only the secrets its secret_refs allows (null: all), as OpenHands lists them.
    let allowed: string[] | null = null;
    if (q.agent_profile_id !== undefined) {
      const refs = secretRefs(q.agent_profile_id);
      if (refs === undefined) throw new NotFound('Agent profile not found');
      allowed = refs;
    }
    ctx.body = { secrets: allowed === null ? store.list() : store.list().filter((x) => allowed.includes(x.name)) };
  });

  router.put('/settings/secrets', validate({ body: SecretCreateRequest }), async (ctx) => {
    const req = ctx.state['body'] as SecretCreateRequest;
    checkName(req.name, ['body', 'name']);
    if (req.value.trim() === '' || req.value === MASK) {
      throw new Invalid([{ loc: ['body', 'value'], msg: 'Secret value must not be empty or redacted', type: 'value_error' }]);
    }
    const description = req.description ?? null;
    store.put(req.name, req.value, description);
    log.info({ secretName: req.name }, 'secret created or updated');
    const body: SecretItemResponse = { name: req.name, description };
    ctx.body = body;
  });

  router.get('/settings/secrets/:name', async (ctx) => {
    const name = ctx.params['name']!;
    checkName(name, ['path', 'name']);
    const value = store.get(name);
    // One message whatever the reason, so names cannot be probed.
    if (value === undefined) throw new NotFound('Secret not found');
    ctx.type = 'text/plain; charset=utf-8';
    ctx.body = value;
  });

  router.delete('/settings/secrets/:name', async (ctx) => {
    const name = ctx.params['name']!;
    checkName(name, ['path', 'name']);
    if (!store.delete(name)) throw new NotFound('Secret not found');
    log.info({ secretName: name }, 'secret deleted');
    ctx.body = { deleted: true };
  });

  return router;
}
