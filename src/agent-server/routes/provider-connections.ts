// Shared LLM provider connections, as OpenHands 1.58's provider_connections_router.py serves them:
// create, list, update (also to rotate the key) and delete one api_key + base_url that LLM profiles
// use by `provider_connection_id`. The key is never returned (`api_key_set`); a connection still used
// by a profile is not deleted (409 naming them).
import Router from '@koa/router';
import { Conflict, Invalid, NotFound } from '../../api/errors.ts';
import {
  MAX_PROVIDER_CONNECTIONS,
  ProviderConnectionCreateRequest,
  ProviderConnectionUpdateRequest,
  type ProviderConnectionResponse,
} from '../../api/agent-server/provider-connections.ts';
import type { LLM } from '../../api/agent-server/index.ts';
import { MASK } from '../secrets.ts';
import type { ProfileStore } from '../store/profile-store.ts';
import type { ProviderConnection, ProviderConnectionStore } from '../store/provider-connection-store.ts';
import { validate } from '../http/validate.ts';
import { checkBaseUrl } from './profiles.ts';

const response = (c: ProviderConnection, apiKeySet = true): ProviderConnectionResponse => ({
  id: c.id,
  display_name: c.displayName,
  provider: c.provider,
  base_url: c.baseUrl,
  created_at: c.createdAt,
  updated_at: c.updatedAt,
  api_key_set: apiKeySet,
});

/** A blank or masked key would store a connection without a usable key (the message does not echo it). */
function usableKey(key: string | null | undefined): void {
  if (key != null && (key.trim() === '' || key === MASK)) throw new Invalid([{ loc: ['body', 'api_key'], msg: 'Value error, api_key must be a real key, not blank or redacted', type: 'value_error' }]);
}

export function providerConnectionRoutes(o: { connections: ProviderConnectionStore; profiles: ProfileStore }): Router {
  const { connections, profiles } = o;
  const router = new Router({ prefix: '/llm/provider-connections' });

  router.get('/', async (ctx) => {
    ctx.body = connections.list().map((c) => response(c));
  });

  router.post('/', validate({ body: ProviderConnectionCreateRequest }), async (ctx) => {
    const req = ctx.state['body'] as ProviderConnectionCreateRequest;
    usableKey(req.api_key);
    checkBaseUrl({ base_url: req.base_url ?? null } as LLM, ['body']);
    const c = connections.create({ displayName: req.display_name, provider: req.provider ?? 'custom', baseUrl: req.base_url ?? null, apiKey: req.api_key }, MAX_PROVIDER_CONNECTIONS);
    ctx.status = 201;
    ctx.body = response(c);
  });

  router.patch('/:connection_id', validate({ body: ProviderConnectionUpdateRequest }), async (ctx) => {
    const req = ctx.state['body'] as ProviderConnectionUpdateRequest;
    const given = Object.keys(req) as (keyof ProviderConnectionUpdateRequest)[];
    if (given.length === 0) throw new Invalid([{ loc: ['body'], msg: 'Provide at least one provider connection field to update', type: 'value_error' }]);
    for (const f of ['display_name', 'provider'] as const) {
      if (f in req && req[f] === null) throw new Invalid([{ loc: ['body'], msg: `Value error, ${f} cannot be set to null`, type: 'value_error' }]);
    }
    usableKey(req.api_key);
    if ('api_key' in req && req.api_key === null) throw new Invalid([{ loc: ['body', 'api_key'], msg: 'api_key cannot be cleared; provide a new key to rotate it', type: 'value_error' }]);
    if (req.base_url != null) checkBaseUrl({ base_url: req.base_url } as LLM, ['body']);
    const c = connections.update(ctx.params['connection_id']!, {
      ...(req.display_name != null ? { displayName: req.display_name } : {}),
      ...(req.provider != null ? { provider: req.provider } : {}),
      ...('base_url' in req ? { baseUrl: req.base_url ?? null } : {}),
      ...(req.api_key != null ? { apiKey: req.api_key } : {}),
    });
    ctx.body = response(c);
  });

  router.delete('/:connection_id', async (ctx) => {
    const id = ctx.params['connection_id']!;
    const c = connections.get(id);
    if (!c) throw new NotFound(`Provider connection '${id}' not found`);
    const linked = profiles.linkedTo(id);
    if (linked.length > 0) throw new Conflict(`Provider connection cannot be deleted while it is referenced by LLM profile(s): ${linked.join(', ')}. Update those references before deleting it.`);
    connections.delete(id);
    ctx.body = response(c, false);
  });

  return router;
}
