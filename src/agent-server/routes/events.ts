// `/api/conversations/{id}/events`: send a message, search, count, read by id, batch read.
// Paging cursors are sequence numbers: stable while new events are appended.
import Router from '@koa/router';
import { ConfirmationResponseRequest, SendMessageRequest } from '../../api/agent-server/index.ts';
import { Invalid, NotFound } from '../../api/errors.ts';
import type { ConversationService } from '../conversation/service.ts';
import { EventCountQuery, EventIdList, EventSearchQuery } from '../http/queries.ts';
import { parseQuery, readJsonBody, validate, withConversationIdParam } from '../http/validate.ts';
import { parseValue } from '../../api/events/validate.ts';
import type { EventFilter, EventStore } from '../store/event-store.ts';
import { timestampParam, toWireJson } from '../store/wire.ts';

function filterOf(q: EventCountQuery): EventFilter {
  const gte = timestampParam(q.timestamp__gte, ['query', 'timestamp__gte']);
  const lt = timestampParam(q.timestamp__lt, ['query', 'timestamp__lt']);
  return {
    ...(q.kind ? { kind: q.kind } : {}),
    ...(q.source ? { source: q.source } : {}),
    ...(q.body ? { body: q.body } : {}),
    ...(gte ? { timestampGte: gte } : {}),
    ...(lt ? { timestampLt: lt } : {}),
  };
}

export function eventRoutes(service: ConversationService, events: EventStore): Router {
  const router = withConversationIdParam(new Router({ prefix: '/conversations/:conversation_id/events' }));
  const conversation = (params: Record<string, string | undefined>) => service.get(params['conversation_id']!);

  router.post('/', validate({ body: SendMessageRequest }), async (ctx) => {
    const body = ctx.state['body'] as SendMessageRequest;
    await conversation(ctx.params).sendMessage(body, body.run === true);
    ctx.body = { success: true };
  });

  router.get('/search', async (ctx) => {
    const rt = conversation(ctx.params);
    const q = parseQuery(EventSearchQuery, ctx.query);
    let fromSeq: number | undefined;
    if (q.page_id !== undefined && q.page_id !== '') {
      // Our cursors are sequence numbers; an event id (OpenHands' cursor) is accepted too.
      fromSeq = /^\d+$/.test(q.page_id) ? Number(q.page_id) : events.get(rt.conversationId, q.page_id)?.seq;
      if (fromSeq === undefined) throw new Invalid([{ loc: ['query', 'page_id'], msg: 'Unknown page_id', type: 'value_error' }]);
    }
    const page = events.search(rt.conversationId, {
      ...filterOf(q),
      limit: q.limit ?? 100,
      descending: q.sort_order === 'TIMESTAMP_DESC',
      ...(fromSeq !== undefined ? { fromSeq } : {}),
    });
    // Items in OpenHands' exclude_none form; spliced as text to avoid re-serialising.
    ctx.type = 'application/json';
    ctx.body = `{"items":[${page.items.map((r) => toWireJson(r.json)).join(',')}],"next_page_id":${page.nextSeq === null ? 'null' : `"${page.nextSeq}"`}}`;
  });

  router.get('/count', validate({ query: EventCountQuery }), async (ctx) => {
    const rt = conversation(ctx.params);
    ctx.body = events.count(rt.conversationId, filterOf(ctx.state['query'] as EventCountQuery));
  });

  router.post('/respond_to_confirmation', validate({ body: ConfirmationResponseRequest }), async (ctx) => {
    const body = ctx.state['body'] as ConfirmationResponseRequest;
    conversation(ctx.params).respondToConfirmation(body.accept, body.reason ?? 'User rejected the action.');
    ctx.body = { success: true };
  });

  router.get('/:event_id', async (ctx) => {
    const rt = conversation(ctx.params);
    const row = events.get(rt.conversationId, ctx.params['event_id']!);
    if (!row) throw new NotFound(`Event not found: ${ctx.params['event_id']}`);
    ctx.type = 'application/json';
    ctx.body = row.json;
  });

  // Batch read: a GET whose JSON body is an array of ids; null for each unknown id.
  router.get('/', async (ctx) => {
    const rt = conversation(ctx.params);
    const ids = parseValue(EventIdList, await readJsonBody(ctx), { prefix: ['body'] });
    ctx.type = 'application/json';
    ctx.body = `[${ids.map((id) => events.get(rt.conversationId, id)?.json ?? 'null').join(',')}]`;
  });

  return router;
}
