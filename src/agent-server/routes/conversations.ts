// `/api/conversations`: create (idempotent by id), read, page, count, update, delete, run, pause.
import Router from '@koa/router';
import { observabilityHeaders, withObservabilityHeaders } from '../http/observability.ts';
import { AskAgentRequest, ForkConversationRequest, NavigateConversationRequest, StartChildConversationRequest, StartGoalRequest, LoadPluginRequest, parseStartConversationRequest, SetConfirmationPolicyRequest, SetSecurityAnalyzerRequest, SwitchLlmRequest, UpdateConversationRequest, UpdateSecretsRequest } from '../../api/agent-server/index.ts';
import { checkRequestHookConfig } from '../../agent/hooks/index.ts';
import { Invalid } from '../../api/errors.ts';
import type { ConversationService } from '../conversation/service.ts';
import {
  ConversationBatchQuery,
  ConversationCountQuery,
  ConversationSearchQuery,
} from '../http/queries.ts';
import { uuidIssue, validate, withConversationIdParam } from '../http/validate.ts';

/** The routes that answer with conversation records (ConversationInfo, a page or a batch of them). */
const RECORD_ROUTES = /^\/api\/conversations(\/search|\/[^/]+|\/[^/]+\/(fork|navigate))?\/?$/;
const TRUE = new Set(['true', '1', 'yes', 'on']);
const FALSE = new Set(['false', '0', 'no', 'off']);

/**
 * OpenHands 1.58: records carry `agent.agent_context.skills: []` unless `include_skills=true` (a
 * stock agent's skills are hundreds of kilobytes no client reads); the conversation keeps them.
 */
function trimSkills(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(trimSkills);
  if (!value || typeof value !== 'object') return value;
  const v = value as { items?: unknown; agent?: { agent_context?: { skills?: unknown } | null } };
  if (Array.isArray(v.items)) return { ...v, items: v.items.map(trimSkills) };
  const ctx = v.agent?.agent_context;
  if (!ctx || !Array.isArray(ctx.skills)) return value;
  return { ...v, agent: { ...v.agent, agent_context: { ...ctx, skills: [] } } };
}

export function conversationRoutes(service: ConversationService): Router {
  const router = withConversationIdParam(new Router({ prefix: '/conversations' }));

  router.use(async (ctx, next) => {
    const raw = ctx.query['include_skills'];
    const given = Array.isArray(raw) ? raw.at(-1) : raw;
    if (given !== undefined && !TRUE.has(given.toLowerCase()) && !FALSE.has(given.toLowerCase())) {
      throw new Invalid([{ loc: ['query', 'include_skills'], msg: 'Input should be a valid boolean, unable to interpret input', type: 'bool_parsing' }]);
    }
    await next();
    if (given !== undefined && TRUE.has(given.toLowerCase())) return;
    if ((ctx.method === 'GET' || ctx.method === 'POST') && RECORD_ROUTES.test(ctx.path) && ctx.status < 300) ctx.body = trimSkills(ctx.body);
  });

  router.post('/', async (ctx) => {
    const body = ctx.request.body;
    const req = withObservabilityHeaders(parseStartConversationRequest(body), body, observabilityHeaders((h) => ctx.get(h)));
    checkRequestHookConfig(req.hook_config);
    // An initial message always starts the run, whatever its `run` says, as OpenHands does: the
    // Python SDK sends `run: false` and relies on it (e2e/parity shows both servers agree).
    const { info, created } = await service.create(req);
    ctx.status = created ? 201 : 200;
    ctx.body = info;
  });

  router.get('/', validate({ query: ConversationBatchQuery }), async (ctx) => {
    const { ids } = ctx.state['query'] as ConversationBatchQuery;
    ids.forEach((id, i) => {
      const bad = uuidIssue(id, ['query', 'ids', i]);
      if (bad) throw bad;
    });
    ctx.body = ids.map((id) => service.find(id)?.info() ?? null);
  });

  router.get('/search', validate({ query: ConversationSearchQuery }), async (ctx) => {
    const q = ctx.state['query'] as ConversationSearchQuery;
    const page = service.search({
      sortOrder: q.sort_order ?? 'CREATED_AT_DESC',
      limit: q.limit ?? 100,
      ...(q.status ? { status: q.status } : {}),
      ...(q.page_id ? { pageId: q.page_id } : {}),
    });
    ctx.body = { items: page.items, next_page_id: page.nextPageId };
  });

  router.get('/count', validate({ query: ConversationCountQuery }), async (ctx) => {
    ctx.body = service.count((ctx.state['query'] as ConversationCountQuery).status);
  });

  router.get('/:conversation_id', async (ctx) => {
    ctx.body = service.get(ctx.params['conversation_id']!).info();
  });

  router.patch('/:conversation_id', validate({ body: UpdateConversationRequest }), async (ctx) => {
    const body = ctx.state['body'] as UpdateConversationRequest;
    const rt = service.find(ctx.params['conversation_id']!);
    // OpenHands answers an unknown id with 200 {success:false}.
    if (!rt) {
      ctx.body = { success: false };
      return;
    }
    rt.update({
      ...(body.title != null ? { title: body.title } : {}),
      ...(body.tags != null ? { tags: body.tags } : {}),
    });
    ctx.body = { success: true };
  });

  router.delete('/:conversation_id', async (ctx) => {
    await service.delete(ctx.params['conversation_id']!);
    ctx.body = { success: true };
  });

  router.post('/:conversation_id/run', async (ctx) => {
    service.get(ctx.params['conversation_id']!).run();
    ctx.body = { success: true };
  });

  router.post('/:conversation_id/pause', async (ctx) => {
    service.get(ctx.params['conversation_id']!).pause();
    ctx.body = { success: true };
  });

  router.post('/:conversation_id/interrupt', async (ctx) => {
    service.get(ctx.params['conversation_id']!).pause('InterruptEvent');
    ctx.body = { success: true };
  });

  router.post('/:conversation_id/fork', validate({ body: ForkConversationRequest }), async (ctx) => {
    // A fork keeps the source's agent. OpenHands 1.58 has no `agent` here and ignores one silently; a
    // caller who sends it expects it to apply, so it is refused (a deliberate difference, e2e/parity).
    const raw = ctx.request.body as Record<string, unknown> | undefined;
    if (raw && typeof raw === 'object' && 'agent' in raw) {
      throw new Invalid([{ loc: ['body', 'agent'], msg: "A fork keeps the source conversation's agent; start a new conversation for another agent", type: 'extra_forbidden' }]);
    }
    ctx.status = 201;
    ctx.body = service.fork(ctx.params['conversation_id']!, ctx.state['body'] as ForkConversationRequest);
  });

  // A child conversation on this server: the parent's configuration, `task` as its first message.
  router.post('/:conversation_id/children', validate({ body: StartChildConversationRequest }), async (ctx) => {
    ctx.status = 201;
    ctx.body = await service.startChild(ctx.params['conversation_id']!, ctx.state['body'] as StartChildConversationRequest);
  });

  // /goal loops: judge-driven runs toward an objective, inside this conversation (conversation/goal.ts).
  // A run slot is claimed first, as for the gateway: 429 when every slot is taken.
  router.post('/:conversation_id/goal', validate({ body: StartGoalRequest }), async (ctx) => {
    const rt = service.get(ctx.params['conversation_id']!);
    const body = ctx.state['body'] as StartGoalRequest;
    const slot = service.reserveRunSlot(rt);
    try {
      await rt.startGoal(body.objective, body.max_iterations ?? 10);
    } finally {
      slot.release();
    }
    ctx.body = { success: true };
  });

  router.post('/:conversation_id/goal/stop', async (ctx) => {
    service.get(ctx.params['conversation_id']!).stopGoal();
    ctx.body = { success: true };
  });

  router.post('/:conversation_id/goal/resume', async (ctx) => {
    const rt = service.get(ctx.params['conversation_id']!);
    const slot = service.reserveRunSlot(rt);
    try {
      await rt.resumeGoal();
    } finally {
      slot.release();
    }
    ctx.body = { success: true };
  });

  // A plugin of the conversation's registered marketplaces, loaded after start.
  router.post('/:conversation_id/load_plugin', validate({ body: LoadPluginRequest }), async (ctx) => {
    await service.get(ctx.params['conversation_id']!).loadPlugin((ctx.state['body'] as LoadPluginRequest).plugin_ref);
    ctx.body = { success: true };
  });

  // Moves HEAD (the parent of the next event) to an event of the conversation; no new conversation.
  router.post('/:conversation_id/navigate', validate({ body: NavigateConversationRequest }), async (ctx) => {
    const rt = service.get(ctx.params['conversation_id']!);
    rt.navigate((ctx.state['body'] as NavigateConversationRequest).event_id ?? null);
    ctx.body = rt.info();
  });

  router.post('/:conversation_id/confirmation_policy', validate({ body: SetConfirmationPolicyRequest }), async (ctx) => {
    service.get(ctx.params['conversation_id']!).setConfirmationPolicy((ctx.state['body'] as SetConfirmationPolicyRequest).policy);
    ctx.body = { success: true };
  });

  router.post('/:conversation_id/security_analyzer', validate({ body: SetSecurityAnalyzerRequest }), async (ctx) => {
    service.setSecurityAnalyzer(ctx.params['conversation_id']!, (ctx.state['body'] as SetSecurityAnalyzerRequest).security_analyzer);
    ctx.body = { success: true };
  });

  // Allowed while running (OpenHands does not refuse it): the next model call uses the new LLM.
  router.post('/:conversation_id/switch_llm', validate({ body: SwitchLlmRequest }), async (ctx) => {
    service.switchLlm(ctx.params['conversation_id']!, ctx.state['body'] as SwitchLlmRequest);
    ctx.body = { success: true };
  });

  router.post('/:conversation_id/secrets', validate({ body: UpdateSecretsRequest }), async (ctx) => {
    await service.updateSecrets(ctx.params['conversation_id']!, ctx.state['body'] as UpdateSecretsRequest);
    ctx.body = { success: true };
  });

  // Forces a condensation (OpenHands answers once it is done; a running agent does it at its next step).
  router.post('/:conversation_id/condense', async (ctx) => {
    await service.get(ctx.params['conversation_id']!).condense();
    ctx.body = { success: true };
  });

  // A side question: answered by the conversation's model, recorded nowhere (OpenHands ask_agent).
  router.post('/:conversation_id/ask_agent', validate({ body: AskAgentRequest }), async (ctx) => {
    const rt = service.get(ctx.params['conversation_id']!);
    const gone = new AbortController();
    ctx.res.once('close', () => gone.abort());
    ctx.body = { response: await rt.askAgent((ctx.state['body'] as AskAgentRequest).question, gone.signal) };
  });

  router.get('/:conversation_id/agent_final_response', async (ctx) => {
    ctx.body = { response: finalResponse(service.get(ctx.params['conversation_id']!).events()) };
  });

  return router;
}

/** Text of the last FinishAction or agent MessageEvent (OpenHands `agent_final_response`). */
export function finalResponse(events: readonly import('../../api/events/index.ts').Event[]): string {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.kind === 'ActionEvent' && e.action?.kind === 'FinishAction') return e.action.message;
    if (e.kind === 'MessageEvent' && e.source === 'agent') {
      return (e.llm_message.content ?? []).flatMap((c) => ('text' in c ? [c.text] : [])).join('');
    }
  }
  return '';
}
