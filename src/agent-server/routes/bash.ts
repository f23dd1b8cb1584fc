// `/api/bash/*`: start a command, run one to its end, stop one, search / read / clear the recorded
// events. The same routes serve a conversation's runtime (`/api/conversations/{id}/bash/*`, see
// runtime.ts) with that conversation's own commands, whose `cwd` must stay in its workspace.
import Router from '@koa/router';
import type { Context } from 'koa';
import { BashEventIds, BashEventSearchQuery, ExecuteBashRequest, type BashOutput, type ClearBashEventsResponse } from '../../api/agent-server/bash.ts';
import { parseBody } from '../../api/agent-server/index.ts';
import { Invalid, NotFound } from '../../api/errors.ts';
import { uuidIssue } from '../http/validate.ts';
import type { BashService } from '../bash/service.ts';
import type { BashEventStore } from '../bash/store.ts';
import { readJsonBody, validate } from '../http/validate.ts';
import { timestampParam } from '../store/wire.ts';

/** OpenHands accepts UUIDs with or without dashes; ids are stored without. */
const normalizeId = (id: string) => id.replace(/-/g, '').toLowerCase();

export interface BashScope {
  service: BashService;
  store: BashEventStore;
  /** A conversation's runtime: `cwd` must resolve inside this directory (422 otherwise, as OpenHands). */
  confineCwd?(cwd: string): Promise<void>;
}

/** The commands a request addresses: the server's own, or (runtime routes) its conversation's. */
export type BashScopeOf = (ctx: Context) => BashScope;

/**
 * A finished command's whole output as one BashOutput (OpenHands 1.58): the final chunk (the one
 * with the exit code) with the stdout and stderr of every chunk joined in order.
 */
function joined(store: BashEventStore, final: BashOutput): BashOutput {
  const chunks: BashOutput[] = [];
  for (let page: string | undefined; ; ) {
    const p = store.search({ kind: 'BashOutput', commandId: final.command_id, descending: false, limit: 100, ...(page ? { pageId: page } : {}) });
    chunks.push(...(p.items as BashOutput[]));
    if (!p.next_page_id) break;
    page = p.next_page_id;
  }
  chunks.sort((a, b) => (a.order ?? 0) - (b.order ?? 0));
  const join = (key: 'stdout' | 'stderr') => chunks.map((c) => c[key] ?? '').join('') || null;
  return { ...final, stdout: join('stdout'), stderr: join('stderr'), exit_code: final.exit_code ?? -1 };
}

export function bashRoutes(scopeOf: BashScopeOf): Router {
  const r = new Router({ prefix: '/bash' });
  const start = async (ctx: Context) => {
    const scope = scopeOf(ctx);
    const req = ctx.state['body'] as ExecuteBashRequest;
    if (req.cwd != null) await scope.confineCwd?.(req.cwd);
    return scope.service.start(req);
  };

  r.post('/start_bash_command', validate({ body: ExecuteBashRequest }), async (ctx) => {
    ctx.body = (await start(ctx)).command;
  });

  r.post('/execute_bash_command', validate({ body: ExecuteBashRequest }), async (ctx) => {
    const { store } = scopeOf(ctx);
    ctx.body = joined(store, await (await start(ctx)).done);
  });

  // Stops one command. Idempotent: a command that already ended is a success too; an id never seen is a 404.
  r.post('/bash_commands/:command_id/stop', async (ctx) => {
    const raw = ctx.params['command_id']!;
    const bad = uuidIssue(raw, ['path', 'command_id']);
    if (bad) throw bad;
    const { service, store } = scopeOf(ctx);
    const id = normalizeId(raw);
    if (!(await service.stop(id)) && !store.get(id)) throw new NotFound(`Bash command ${raw} not found`);
    ctx.body = { success: true };
  });

  r.get('/bash_events/search', validate({ query: BashEventSearchQuery }), (ctx) => {
    const { store } = scopeOf(ctx);
    const q = ctx.state['query'] as BashEventSearchQuery;
    if (q.page_id !== undefined && !/^\d+$/.test(q.page_id)) throw new Invalid([{ loc: ['query', 'page_id'], msg: 'Unknown page_id: pass next_page_id of an earlier page', type: 'value_error' }]);
    ctx.body = store.search({
      ...(q.kind__eq ? { kind: q.kind__eq } : {}),
      ...(q.command_id__eq ? { commandId: normalizeId(q.command_id__eq) } : {}),
      ...(q.timestamp__gte ? { timestampGte: timestampParam(q.timestamp__gte, ['query', 'timestamp__gte'])! } : {}),
      ...(q.timestamp__lt ? { timestampLt: timestampParam(q.timestamp__lt, ['query', 'timestamp__lt'])! } : {}),
      ...(q.order__gt !== undefined ? { orderGt: q.order__gt } : {}),
      ...(q.page_id !== undefined ? { pageId: q.page_id } : {}),
      descending: q.sort_order === 'TIMESTAMP_DESC',
      limit: q.limit ?? 100,
    });
  });

  // Batch read: a GET with a JSON array of ids as its body; null for an unknown id.
  r.get('/bash_events/', async (ctx) => {
    const { store } = scopeOf(ctx);
    const ids = parseBody(BashEventIds, await readJsonBody(ctx));
    ctx.body = ids.map((id) => store.get(normalizeId(id)) ?? null);
  });

  r.get('/bash_events/:event_id', (ctx) => {
    const { store } = scopeOf(ctx);
    const event = store.get(normalizeId(ctx.params['event_id']!));
    if (!event) throw new NotFound(`Bash event ${ctx.params['event_id']} not found`);
    ctx.body = event;
  });

  r.delete('/bash_events', (ctx) => {
    const { store } = scopeOf(ctx);
    const body: ClearBashEventsResponse = { cleared_count: store.clear() };
    ctx.body = body;
  });
  return r;
}
