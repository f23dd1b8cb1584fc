// /v1/models, /v1/chat/completions, /v1/responses: the OpenAI-compatible gateway (OpenHands 1.58
// `openai/router.py`), behind the session key in either header shape (app.ts). What a request means
// is in ../openai/gateway.ts; here are the headers: the conversation to continue, and the
// observability overrides (X-OpenHands-Observability-*), validated as the start request's fields.
import Router from '@koa/router';
import { PassThrough } from 'node:stream';
import { ChatCompletionRequest, GATEWAY_CONVERSATION_HEADER, ResponseRequest } from '../../api/agent-server/openai.ts';
import { parseBody } from '../../api/agent-server/parse.ts';
import { Invalid } from '../../api/errors.ts';
import { normalizeConversationId } from '../conversation/service.ts';
import { observabilityHeaders as observability } from '../http/observability.ts';
import { chatCompletion, completionChunks, createResponse, listModels, type GatewayOptions } from '../openai/gateway.ts';

/** The conversation a chat completion continues (or creates with this id). */
function reuseId(raw: string): string | undefined {
  if (!raw) return undefined;
  const id = normalizeConversationId(raw);
  if (!id) throw new Invalid([{ loc: ['header', 'X-OpenHands-ServerConversation-ID'], msg: 'Input should be a valid UUID', type: 'uuid_parsing' }]);
  return id;
}

export function openaiRoutes(g: GatewayOptions): Router {
  const router = new Router({ prefix: '/v1' });

  router.get('/models', (ctx) => {
    ctx.body = listModels(g);
  });

  router.post('/chat/completions', async (ctx) => {
    const body = parseBody(ChatCompletionRequest, ctx.request.body);
    const reuse = reuseId(ctx.get(GATEWAY_CONVERSATION_HEADER));
    const { conversationId, completion } = await chatCompletion(g, body, { ...(reuse ? { reuseId: reuse } : {}), observability: observability((h) => ctx.get(h)) });
    ctx.set('X-OpenHands-ServerConversation-ID', conversationId);
    if (!body.stream) {
      ctx.body = completion;
      return;
    }
    // As OpenHands 1.58: the run is awaited, then its answer is sent as chunks (not token by token).
    const stream = new PassThrough();
    ctx.type = 'text/event-stream';
    ctx.body = stream;
    for (const frame of completionChunks(completion, body.stream_options?.include_usage === true)) stream.write(frame);
    stream.end();
  });

  router.post('/responses', async (ctx) => {
    const body = parseBody(ResponseRequest, ctx.request.body);
    const { conversationId, response } = await createResponse(g, body, { observability: observability((h) => ctx.get(h)) });
    ctx.set('X-OpenHands-ServerConversation-ID', conversationId);
    ctx.body = response;
  });

  return router;
}
