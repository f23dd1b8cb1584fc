// The model gateway (the spec's "model proxy"), on the API's listener at /model-gateway/v1: agent
// servers call it as their OpenAI-compatible endpoint with their sandbox's model token; it forwards
// to the provider with the installation's key, which so never enters a sandbox, and records each
// call's usage for the sandbox's owner. Mounted before the API's body parser and key check: it
// authenticates first and reads the body itself, only after that.
import { pipeline, Readable } from 'node:stream';
import type { Context, Middleware } from 'koa';
import { AgentyardError, BadGateway, BadRequest, NotImplemented, Unauthorized, Unavailable } from '../../api/errors.ts';
import { LABEL_OWNER } from '../../api/meta.ts';
import { CONVERSATION_HEADER, MODEL_GATEWAY_PATH, MODEL_TOKEN_KEY, modelTokenSandbox } from '../../api/model-gateway.ts';
import { SandboxKind, type Sandbox } from '../../api/sandbox.ts';
import { SecretKind } from '../../api/secret.ts';
import { closeIfBody } from '../auth.ts';
import type { Facade } from '../context.ts';
import { STATUS_BY_CODE } from '../errors.ts';
import { keyMatches, sandboxNameOf, sessionSecretName } from '../resources.ts';
import { conversationByAgentId } from '../sink.ts';
import type { ModelUpstream } from './upstream.ts';
import { SseUsageTap, usageOf, type CallUsage } from './usage.ts';

/** A request body larger than this is refused (a long conversation with images stays well below). */
export const MAX_REQUEST_BYTES = 32 * 1024 * 1024;
const BEARER = /^Bearer\s+(\S+)\s*$/i;
/** Response headers worth passing back: the type and what OpenAI clients read to retry. */
const PASSED_HEADERS = ['content-type', 'retry-after', 'retry-after-ms', 'x-should-retry', 'x-request-id'];

class PayloadTooLarge extends BadRequest {}

export interface ModelGatewayOptions {
  /** Where calls go; undefined: no model is configured, and every call is answered 503. */
  upstream: ModelUpstream | undefined;
}

export function modelGateway({ d }: Facade, o: ModelGatewayOptions): Middleware {
  /** The sandbox whose model token this is: it exists, is not being deleted, and its Secret (still its own) holds the token. */
  async function authenticate(ctx: Context): Promise<Sandbox> {
    const token = BEARER.exec(ctx.get('authorization'))?.[1];
    const name = token ? modelTokenSandbox(token) : undefined;
    const sb = name ? await d.store.get(SandboxKind, d.namespace, name) : undefined;
    const secret = sb && !sb.metadata.deletionTimestamp ? await d.store.get(SecretKind, d.namespace, sessionSecretName(sb.metadata.name)) : undefined;
    const own = secret?.metadata.ownerReferences?.some((r) => r.kind === 'Sandbox' && r.uid === sb!.metadata.uid) ?? false;
    const expected = own ? secret?.data?.[MODEL_TOKEN_KEY] : undefined;
    if (!token || !expected || !keyMatches(Buffer.from(expected, 'base64').toString('utf8'), token)) {
      throw new Unauthorized(token ? 'Invalid model token' : 'Missing Authorization: Bearer <model token> header');
    }
    return sb!;
  }

  /** The conversation the agent server names, if it is one of this sandbox's (same owner); else none. */
  async function conversationOf(ctx: Context, sb: Sandbox): Promise<string | null> {
    const claimed = ctx.get(CONVERSATION_HEADER);
    const conv = claimed ? await conversationByAgentId(d, claimed) : undefined;
    if (!conv || sandboxNameOf(conv) !== sb.metadata.name || (conv.spec.owner ?? '') !== (sb.spec.owner ?? '')) return null;
    return conv.metadata.name;
  }

  async function record(sb: Sandbox, conversationId: string | null, requested: string, usage: CallUsage | undefined): Promise<void> {
    if (!usage) {
      d.log.warn({ sandbox: sb.metadata.name }, 'model gateway: the provider reported no usage for a call');
      return;
    }
    try {
      await d.db.usage.record({
        userId: sb.spec.owner ?? sb.metadata.labels?.[LABEL_OWNER] ?? null,
        sandboxId: sb.metadata.name,
        conversationId,
        model: usage.model ?? requested,
        promptTokens: usage.promptTokens,
        completionTokens: usage.completionTokens,
        cacheReadTokens: usage.cacheReadTokens,
        reasoningTokens: usage.reasoningTokens,
        cost: usage.cost,
        at: d.clock.now().toUTC().toISO()!,
      });
    } catch (err) {
      // The answer still reaches the agent; the lost row is logged with what it held.
      d.log.error({ err, sandbox: sb.metadata.name, conversation: conversationId, usage }, 'model gateway: could not record usage');
    }
  }

  /** Sends the call on with the provider's key; aborted when the agent server hangs up. */
  async function forward(ctx: Context, upstream: ModelUpstream, path: string, init: { method: string; body?: string }): Promise<Response> {
    const abort = new AbortController();
    ctx.res.once('close', () => {
      if (!ctx.res.writableFinished) abort.abort();
    });
    try {
      return await fetch(`${upstream.baseUrl}${path}`, {
        method: init.method,
        headers: {
          accept: ctx.get('accept') || 'application/json',
          ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...(upstream.apiKey ? { authorization: `Bearer ${upstream.apiKey}` } : {}),
        },
        ...(init.body !== undefined ? { body: init.body } : {}),
        signal: abort.signal,
      });
    } catch (err) {
      if (abort.signal.aborted) throw err;
      throw new BadGateway('The model provider could not be reached', { cause: err });
    }
  }

  function answer(ctx: Context, res: Response): void {
    ctx.status = res.status;
    for (const name of PASSED_HEADERS) {
      const value = res.headers.get(name);
      if (value !== null) ctx.set(name, value);
    }
  }

  async function chatCompletions(ctx: Context, upstream: ModelUpstream, sb: Sandbox): Promise<void> {
    const body = await readJsonObject(ctx);
    if (typeof body.model !== 'string' || !Array.isArray(body.messages)) throw new BadRequest('model (string) and messages (array) are required');
    const streaming = body.stream === true;
    // Usage comes only in a last chunk that the client must ask for; the gateway always asks.
    if (streaming) body.stream_options = { ...(isObject(body.stream_options) ? body.stream_options : {}), include_usage: true };
    const conversationId = await conversationOf(ctx, sb);
    const res = await forward(ctx, upstream, '/chat/completions', { method: 'POST', body: JSON.stringify(body) });
    answer(ctx, res);
    const sse = res.headers.get('content-type')?.includes('text/event-stream') ?? false;
    if (res.ok && streaming && sse && res.body) {
      const tap = new SseUsageTap((usage) => record(sb, conversationId, body.model as string, usage));
      // pipeline, not pipe: a provider that breaks off mid-stream ends the answer with an error (the
      // connection closes) instead of leaving it open forever.
      pipeline(Readable.fromWeb(res.body as import('node:stream/web').ReadableStream), tap, (err) => {
        if (err && !abortedByClient(ctx)) d.log.warn({ err, sandbox: sb.metadata.name }, 'model gateway: the provider stream broke off');
      });
      ctx.body = tap;
      return;
    }
    const text = Buffer.from(await res.arrayBuffer());
    if (res.ok) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text.toString('utf8'));
      } catch {
        parsed = undefined;
      }
      await record(sb, conversationId, body.model, usageOf(parsed));
    }
    ctx.body = text;
  }

  async function models(ctx: Context, upstream: ModelUpstream): Promise<void> {
    const res = await forward(ctx, upstream, '/models', { method: 'GET' });
    answer(ctx, res);
    ctx.body = Buffer.from(await res.arrayBuffer());
  }

  return async function modelGatewayMiddleware(ctx, next) {
    if (!ctx.path.startsWith(`${MODEL_GATEWAY_PATH}/`)) return next();
    const route = `${ctx.method} ${ctx.path.slice(MODEL_GATEWAY_PATH.length)}`;
    try {
      const sb = await authenticate(ctx);
      if (!o.upstream) throw new Unavailable('No model is configured for this installation: set LLM_MODEL (and LLM_BASE_URL, LLM_API_KEY) where the API runs');
      if (route === 'POST /chat/completions') return await chatCompletions(ctx, o.upstream, sb);
      if (route === 'GET /models') return await models(ctx, o.upstream);
      throw new NotImplemented(`The model gateway forwards POST ${MODEL_GATEWAY_PATH}/chat/completions and GET ${MODEL_GATEWAY_PATH}/models only, not ${route}`);
    } catch (err) {
      if (!(err instanceof AgentyardError)) throw err;
      // As the API's own key check: a refused upload is not drained; its socket closes after the answer.
      if (err instanceof Unauthorized || err instanceof PayloadTooLarge) closeIfBody(ctx);
      // OpenAI clients read `error.message`; 4xx answers are final for them.
      ctx.status = err instanceof PayloadTooLarge ? 413 : STATUS_BY_CODE[err.code];
      if (ctx.status < 500) ctx.set('x-should-retry', 'false');
      ctx.body = { error: { message: err.message, type: err.code, param: null, code: null } };
    }
  };
}

/** The agent server hung up first (its call was cancelled): not the provider's fault. */
function abortedByClient(ctx: Context): boolean {
  return ctx.res.destroyed && !ctx.res.writableFinished;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The JSON object body, read only up to MAX_REQUEST_BYTES. */
async function readJsonObject(ctx: Context): Promise<Record<string, unknown>> {
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > MAX_REQUEST_BYTES) throw new PayloadTooLarge(`The request body is over ${MAX_REQUEST_BYTES} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_REQUEST_BYTES) throw new PayloadTooLarge(`The request body is over ${MAX_REQUEST_BYTES} bytes`);
    chunks.push(chunk);
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new BadRequest('The request body is not JSON');
  }
  if (!isObject(body)) throw new BadRequest('The request body must be a JSON object');
  return body;
}
