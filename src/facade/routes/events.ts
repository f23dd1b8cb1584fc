// /api/v1/conversation/{id}/events: search, count and batch reads from the app's event log, so a
// transcript stays readable after its sandbox is gone. Cursors are sequence numbers (stable).
import Router from '@koa/router';
import { ConversationKind } from '../../api/conversation.ts';
import { Invalid, NotFound } from '../../api/errors.ts';
import { normalizeEventKind } from '../../api/events/index.ts';
import { input, userOf, type Facade } from '../context.ts';
import type { EventFilter } from '../db/event-log.ts';
import { timeParam } from '../paging.ts';
import { getOwned } from '../resources.ts';
import { EventCountQuery, EventSearchQuery, IdQuery } from '../../api/app/requests.ts';
import { validate } from '../validate.ts';

/** The filter, or undefined when `kind__eq` names no kind there is (nothing can match). */
function filterOf(q: EventCountQuery): EventFilter | undefined {
  const f: EventFilter = {};
  if (q.kind__eq !== undefined && q.kind__eq !== '') {
    const kind = normalizeEventKind(q.kind__eq);
    if (kind === undefined) return undefined;
    f.kind = kind;
  }
  const gte = timeParam(q.timestamp__gte, 'timestamp__gte');
  const lt = timeParam(q.timestamp__lt, 'timestamp__lt');
  if (gte !== undefined) f.timestampGte = gte;
  if (lt !== undefined) f.timestampLt = lt;
  return f;
}

function pageStart(pageId: string | undefined): number | undefined {
  if (pageId === undefined || pageId === '') return undefined;
  if (!/^\d{1,15}$/.test(pageId)) throw new Invalid([{ loc: ['query', 'page_id'], msg: 'Invalid page_id', type: 'value_error' }]);
  return Number(pageId);
}

/** Items (read in OpenHands' exclude_none form) spliced as JSON text, without re-serialising the page. */
function itemsJson(items: (string | undefined)[]): string {
  return `[${items.map((j) => j ?? 'null').join(',')}]`;
}

export function eventRoutes({ d }: Facade): Router {
  const r = new Router({ prefix: '/conversation/:conversation_id/events' });

  r.use(async (ctx, next) => {
    const id = ctx.params['conversation_id']!;
    const conv = await getOwned(d, ConversationKind, userOf(ctx).id, id);
    if (!conv) throw new NotFound(`Conversation ${id} not found`);
    ctx.state.conversationId = conv.metadata.name;
    await next();
  });

  r.get('/search', validate({ query: EventSearchQuery }), async (ctx) => {
    const q = input<EventSearchQuery>(ctx).query;
    const f = filterOf(q);
    const fromSeq = pageStart(q.page_id);
    const page = f
      ? await d.db.events.search(ctx.state.conversationId!, { ...f, limit: q.limit ?? 100, descending: q.sort_order === 'TIMESTAMP_DESC', wire: true, ...(fromSeq !== undefined ? { fromSeq } : {}) })
      : { items: [], nextSeq: null };
    ctx.type = 'application/json';
    ctx.body = `{"items":${itemsJson(page.items)},"next_page_id":${page.nextSeq === null ? 'null' : `"${page.nextSeq}"`}}`;
  });

  r.get('/count', validate({ query: EventCountQuery }), async (ctx) => {
    const f = filterOf(input<EventCountQuery>(ctx).query);
    ctx.body = f ? await d.db.events.count(ctx.state.conversationId!, f) : 0;
  });

  r.get('/', validate({ query: IdQuery }), async (ctx) => {
    ctx.type = 'application/json';
    ctx.body = itemsJson(await d.db.events.getMany(ctx.state.conversationId!, input<IdQuery>(ctx).query.id, { wire: true }));
  });

  return r;
}
