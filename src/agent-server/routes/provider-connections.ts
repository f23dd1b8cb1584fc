// /api/llm/provider-connections: CRUD over shared LLM credentials, as OpenHands 1.58's
// provider_connections_router.py (which also only stores them: LLM profiles resolve them at use).
// A key is never answered back, only `api_key_set`. A connection an LLM profile still names is not
// deleted (409 naming the profiles, as OpenHands): the profile would be left without a key.
import Router from '@koa/router';
import { Conflict, Invalid, NotFound } from '../../api/errors.ts';
import {
  MAX_PROVIDER_CONNECTIONS,
  ProviderConnectionCreateRequest,
  ProviderConnectionUpdateRequest,
} from '../../api/agent-server/provider-connections.ts';
import type { Logger } from '../../util/log.ts';
import { MASK } from '../secrets.ts';
import type { ConnectionFields, ProviderConnectionStore } from '../store/provider-connection-store.ts';
import { parseBody } from '../../api/agent-server/parse.ts';

/** A blank or redacted key would store a connection without one: refused at the field, without echoing it. */
function checkKey(key: string): void {
  if (key.trim() === '' || key === MASK) throw new Invalid([{ loc: ['body', 'api_key'], msg: 'Value error, api_key must be a real key, not blank or redacted', type: 'value_error' }]);
}

const notFound = (id: string) => new NotFound(`Provider connection '${id}' not found`);

/** `linkedProfiles`: the LLM profiles that name a connection (sorted). */
export function providerConnectionRoutes(store: ProviderConnectionStore, log: Logger, linkedProfiles: (id: string) => string[] = () => []): Router {
  const router = new Router();

  router.get('/llm/provider-connections', async (ctx) => {
    ctx.body = store.list();
  });

  router.post('/llm/provider-connections', async (ctx) => {
    const req = parseBody(ProviderConnectionCreateRequest, ctx.request.body);
    checkKey(req.api_key);
    if (store.count() >= MAX_PROVIDER_CONNECTIONS) throw new Conflict(`Provider connection limit reached (${MAX_PROVIDER_CONNECTIONS}). Delete one before adding another.`);
    const created = store.create({ display_name: req.display_name, provider: req.provider ?? 'custom', base_url: req.base_url ?? null }, req.api_key);
    log.info({ connectionId: created.id }, 'created LLM provider connection');
    ctx.status = 201;
    ctx.body = created;
  });

  router.patch('/llm/provider-connections/:connection_id', async (ctx) => {
    const raw = ctx.request.body;
    const req = parseBody(ProviderConnectionUpdateRequest, raw);
    const given = new Set(Object.keys(raw && typeof raw === 'object' ? raw : {}));
    if (req.api_key != null) checkKey(req.api_key);
    // The refusals OpenHands answers with a bare sentence are located issues here, like every other 422.
    if (given.size === 0) throw new Invalid([{ loc: ['body'], msg: 'Provide at least one provider connection field to update', type: 'value_error' }]);
    for (const field of ['display_name', 'provider'] as const) {
      if (given.has(field) && req[field] === null) throw new Invalid([{ loc: ['body'], msg: `Value error, ${field} cannot be set to null`, type: 'value_error' }]);
    }
    const id = ctx.params['connection_id']!;
    if (!store.get(id)) throw notFound(id);
    if (given.has('api_key') && req.api_key == null) throw new Invalid([{ loc: ['body', 'api_key'], msg: 'api_key cannot be cleared; provide a new key to rotate it', type: 'value_error' }]);
    const fields: Partial<ConnectionFields> = {};
    if (req.display_name != null) fields.display_name = req.display_name;
    if (req.provider != null) fields.provider = req.provider;
    if (given.has('base_url')) fields.base_url = req.base_url ?? null;
    const updated = store.update(id, fields, req.api_key ?? undefined);
    if (!updated) throw notFound(id);
    log.info({ connectionId: id }, 'updated LLM provider connection');
    ctx.body = updated;
  });

  router.delete('/llm/provider-connections/:connection_id', async (ctx) => {
    const id = ctx.params['connection_id']!;
    if (!store.get(id)) throw notFound(id);
    const linked = linkedProfiles(id);
    if (linked.length > 0) throw new Conflict(`Provider connection cannot be deleted while it is referenced by LLM profile(s): ${linked.join(', ')}. Update those references before deleting it.`);
    const deleted = store.delete(id);
    if (!deleted) throw notFound(id);
    log.info({ connectionId: id }, 'deleted LLM provider connection');
    ctx.body = { ...deleted, api_key_set: false };
  });

  return router;
}
