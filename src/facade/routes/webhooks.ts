// /api/v1/webhooks/{sandbox_id}/...: the event sink agent servers push to (src/api/event-sink.ts).
// Authenticated by the sandbox's session key (X-Session-API-Key), not by user API keys.
import Router from '@koa/router';
import { SINK_BATCH_MAX_BYTES, SinkConversationUpdate, SinkEventBatch } from '../../api/event-sink.ts';
import { closeIfBody } from '../auth.ts';
import { input, type Facade } from '../context.ts';
import { authenticateSandbox, ingestEvents, updateConversation } from '../sink.ts';
import { validate } from '../validate.ts';

export const WEBHOOK_PREFIX = '/webhooks';
/** A batch of up to 100 events, some of which may carry a whole user message (MAX_MESSAGE_BYTES). */

/** The AGENTYARD_EVENT_SINK_URL a runtime hands to the agent server of `sandboxName`. */
export function eventSinkUrl(apiBaseUrl: string, sandboxName: string): string {
  return `${apiBaseUrl.replace(/\/+$/, '')}/api/v1${WEBHOOK_PREFIX}/${encodeURIComponent(sandboxName)}`;
}

export function webhookRoutes({ d, activity }: Facade): Router {
  const r = new Router({ prefix: `${WEBHOOK_PREFIX}/:sandbox_id` });

  // Before any body is read (validate reads it per route).
  r.use(async (ctx, next) => {
    const sb = await authenticateSandbox(d, ctx.params['sandbox_id']!, ctx.get('x-session-api-key')).catch((err: unknown) => {
      closeIfBody(ctx);
      throw err;
    });
    ctx.state.sandbox = sb;
    await next();
  });

  r.post('/events/:conversation_id', validate({ body: SinkEventBatch, bodyLimitBytes: SINK_BATCH_MAX_BYTES }), async (ctx) => {
    const batch = input<unknown, SinkEventBatch>(ctx).body;
    ctx.body = await ingestEvents(d, activity, ctx.state.sandbox!, ctx.params['conversation_id']!, batch);
  });

  r.post('/conversations', validate({ body: SinkConversationUpdate }), async (ctx) => {
    await updateConversation(d, ctx.state.sandbox!, input<unknown, SinkConversationUpdate>(ctx).body);
    ctx.body = { success: true };
  });

  return r;
}
