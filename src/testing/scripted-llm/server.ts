// A local OpenAI-compatible chat-completions server that plays scripted responses over real HTTP.
// It is the stand-in for a model provider in every test that runs the agent.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ScriptedToolCall {
  name: string;
  /** An object (sent as its JSON) or a raw string (to send malformed JSON on purpose). */
  arguments: Record<string, unknown> | string;
  id?: string;
}

export interface ScriptedUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  /** `prompt_tokens_details.cached_tokens`. */
  cached_tokens?: number;
  /** `completion_tokens_details.reasoning_tokens`. */
  reasoning_tokens?: number;
  /** Some proxies (LiteLLM, OpenRouter) report the cost of the call in `usage.cost`. */
  cost?: number;
}

export interface ScriptedReply {
  content?: string;
  /** `reasoning_content`, as reasoning models behind LiteLLM return it. */
  reasoning?: string;
  toolCalls?: ScriptedToolCall[];
  usage?: ScriptedUsage;
  /** Answer with this HTTP status and an OpenAI error body instead (retry and failure tests). */
  status?: number;
  /** With `status`: the error body's message, and its `code` (e.g. `context_length_exceeded`). */
  errorMessage?: string;
  errorCode?: string;
  /** With `status`: a `retry-after-ms` header, so retry tests need not wait for the client's backoff. */
  retryAfterMs?: number;
  /** With `status`: a `Retry-After` header in seconds, as providers send it with a 429 (rate limit). */
  retryAfterSeconds?: number;
  /** Token ids as vLLM returns them when asked (return_token_ids): `prompt_token_ids` and the choice's `token_ids`. */
  tokenIds?: { prompt: number[]; response: number[] };
  /** Streaming only: send this many chunks, then nothing more, holding the connection open (a stalled stream). */
  stallAfterChunks?: number;
}

/**
 * A reply, or a function of the request returning one (to look at what the model was sent, or to
 * hold the answer back: a step may wait on `request.signal`, which aborts when the client hangs up).
 */
export type ScriptStep = ScriptedReply | ((request: RecordedRequest) => ScriptedReply | Promise<ScriptedReply>);

export interface RecordedMessage {
  role: string;
  content?: unknown;
  tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

export interface RecordedRequest {
  model: string;
  messages: RecordedMessage[];
  tools?: { type: string; function: { name: string; description?: string; parameters?: unknown } }[];
  stream?: boolean;
  /** The whole request body as received. */
  body: Record<string, unknown>;
  headers: Record<string, string | string[] | undefined>;
  /** Aborts when the client disconnects before the answer (a cancelled or timed-out call). */
  signal: AbortSignal;
}

/** A request to the classification endpoint (vLLM's `POST /classify`, what OpenHands' critic calls). */
export interface RecordedClassification {
  model: string;
  /** The rendered conversation the critic scores. */
  input: string;
  headers: Record<string, string | string[] | undefined>;
}

export interface ScriptedLlm {
  /** Base URL ending in /v1, as OpenAI clients expect. */
  url: string;
  /** Every `POST .../classify` request, in arrival order. */
  classifications: RecordedClassification[];
  /** The next answers of `/classify`: the probabilities of each label (in the critic's label order), or an error status. */
  pushClassification(...answers: (number[] | { status: number })[]): void;
  /** Every chat-completions request, in arrival order (retries included). */
  requests: RecordedRequest[];
  /** With `apiKey`: the Authorization header of each request refused with 401, in arrival order (unset: ''). */
  refusedAuthorizations: string[];
  /** Errors thrown by function steps (e.g. failed expectations); they are answered with a non-retried 500. */
  failures: Error[];
  push(...steps: ScriptStep[]): void;
  remaining(): number;
  close(): Promise<void>;
}

export const SCRIPT_EXHAUSTED = 'The scripted model has no more responses';

export interface ScriptedLlmOptions {
  port?: number;
  /** The address to listen on (default 127.0.0.1); e2e/node uses the node's, so Pods reach it. */
  host?: string;
  /** The provider key: when set, a request without `Authorization: Bearer <apiKey>` gets 401, as a real provider answers. */
  apiKey?: string;
}

export async function startScriptedLlm(script: ScriptStep[] = [], opts: ScriptedLlmOptions = {}): Promise<ScriptedLlm> {
  const steps = [...script];
  const requests: RecordedRequest[] = [];
  const failures: Error[] = [];
  const inFlight = new Set<AbortController>();
  const classifications: RecordedClassification[] = [];
  const classifyAnswers: (number[] | { status: number })[] = [];
  const refusedAuthorizations: string[] = [];

  const server = createServer(async (req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (opts.apiKey !== undefined && req.headers.authorization !== `Bearer ${opts.apiKey}`) {
      refusedAuthorizations.push(req.headers.authorization ?? '');
      return json(res, 401, error('Incorrect API key provided', 'invalid_request_error', 'invalid_api_key'), { 'x-should-retry': 'false' });
    }
    if (req.method === 'GET' && path === '/v1/models') return json(res, 200, { object: 'list', data: [{ id: 'scripted', object: 'model', created: 0, owned_by: 'agentyard-tests' }] });
    if (req.method === 'POST' && path.endsWith('/classify')) {
      const body = JSON.parse(await readBody(req)) as { model?: unknown; input?: unknown };
      classifications.push({ model: String(body.model), input: String(body.input), headers: req.headers });
      const answer = classifyAnswers.shift();
      if (!answer) return json(res, 500, error(SCRIPT_EXHAUSTED, 'script_exhausted'));
      if (!Array.isArray(answer)) return json(res, answer.status, error(`Scripted status ${answer.status}`, 'scripted'));
      return json(res, 200, { id: 'classify-scripted', object: 'list', created: 0, model: body.model, data: [{ index: 0, label: null, probs: answer, num_classes: answer.length }], usage: { prompt_tokens: 1, total_tokens: 1 } });
    }
    if (req.method !== 'POST' || path !== '/v1/chat/completions') return json(res, 404, error(`No route ${req.method} ${path}`, 'not_found'));
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(await readBody(req)) as Record<string, unknown>;
      if (typeof body.model !== 'string' || !Array.isArray(body.messages)) throw new Error('model (string) and messages (array) are required');
    } catch (err) {
      return json(res, 400, error(`Malformed request: ${(err as Error).message}`, 'invalid_request_error'));
    }
    const hangUp = new AbortController();
    inFlight.add(hangUp);
    res.on('close', () => {
      inFlight.delete(hangUp);
      if (!res.writableFinished) hangUp.abort();
    });
    const recorded: RecordedRequest = {
      model: body.model as string,
      messages: body.messages as RecordedMessage[],
      ...(body.tools ? { tools: body.tools as RecordedRequest['tools'] } : {}),
      ...(body.stream !== undefined ? { stream: Boolean(body.stream) } : {}),
      body,
      headers: req.headers,
      signal: hangUp.signal,
    };
    requests.push(recorded);
    const step = steps.shift();
    // x-should-retry: false tells OpenAI clients not to retry: a broken script should fail fast and clearly.
    if (!step) return json(res, 500, error(SCRIPT_EXHAUSTED, 'script_exhausted'), { 'x-should-retry': 'false' });
    let reply: ScriptedReply;
    try {
      reply = typeof step === 'function' ? await step(recorded) : step;
    } catch (err) {
      const e = err instanceof Error ? err : new Error(String(err));
      failures.push(e);
      return json(res, 500, error(`A scripted step threw: ${e.message}`, 'script_step_failed'), { 'x-should-retry': 'false' });
    }
    if (hangUp.signal.aborted) return;
    if (reply.status) {
      const headers: Record<string, string> = {
        ...(reply.retryAfterMs !== undefined ? { 'retry-after-ms': String(reply.retryAfterMs) } : {}),
        ...(reply.retryAfterSeconds !== undefined ? { 'retry-after': String(reply.retryAfterSeconds) } : {}),
      };
      return json(res, reply.status, error(reply.errorMessage ?? `Scripted status ${reply.status}`, 'scripted', reply.errorCode), headers);
    }
    const completion = toCompletion(recorded.model, reply);
    if (body.stream) return stream(res, completion, Boolean((body.stream_options as { include_usage?: boolean } | undefined)?.include_usage), reply.stallAfterChunks);
    json(res, 200, completion);
  });
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}/v1`,
    requests,
    refusedAuthorizations,
    failures,
    classifications,
    pushClassification: (...more) => classifyAnswers.push(...more),
    push: (...more) => steps.push(...more),
    remaining: () => steps.length + classifyAnswers.length,
    close: () =>
      new Promise<void>((resolve) => {
        // Steps still waiting on their request see it end.
        for (const c of inFlight) c.abort();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function error(message: string, type: string, code?: string) {
  return { error: { message, type, param: null, code: code ?? null } };
}

function toCompletion(model: string, reply: ScriptedReply) {
  const toolCalls = reply.toolCalls?.map((c) => ({
    id: c.id ?? `call_${randomUUID().replaceAll('-', '').slice(0, 24)}`,
    type: 'function' as const,
    function: { name: c.name, arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments) },
  }));
  const u = reply.usage ?? {};
  const prompt = u.prompt_tokens ?? 0;
  const completion = u.completion_tokens ?? 0;
  return {
    id: `chatcmpl-${randomUUID()}`,
    object: 'chat.completion' as const,
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant' as const,
          content: reply.content ?? null,
          ...(reply.reasoning !== undefined ? { reasoning_content: reply.reasoning } : {}),
          ...(toolCalls?.length ? { tool_calls: toolCalls } : {}),
        },
        finish_reason: toolCalls?.length ? 'tool_calls' : 'stop',
        ...(reply.tokenIds ? { token_ids: reply.tokenIds.response } : {}),
      },
    ],
    ...(reply.tokenIds ? { prompt_token_ids: reply.tokenIds.prompt } : {}),
    usage: {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
      prompt_tokens_details: { cached_tokens: u.cached_tokens ?? 0 },
      completion_tokens_details: { reasoning_tokens: u.reasoning_tokens ?? 0 },
      ...(u.cost !== undefined ? { cost: u.cost } : {}),
    },
  };
}

/** Splits text into a few pieces, as a provider streams tokens. */
export function pieces(text: string, size = 8): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/**
 * Server-sent events in the chat.completion.chunk format: content and tool-call arguments arrive in
 * pieces (the first piece of a call carries its id and name); usage only when the client asked for
 * it with stream_options.include_usage, in a last chunk without choices, as OpenAI does.
 */
function stream(res: ServerResponse, completion: ReturnType<typeof toCompletion>, includeUsage: boolean, stallAfterChunks = Infinity): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const choice = completion.choices[0]!;
  const message = choice.message as { content: string | null; reasoning_content?: string; tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[] };
  const base = { id: completion.id, object: 'chat.completion.chunk', created: completion.created, model: completion.model };
  let budget = stallAfterChunks;
  const write = (chunk: object) => budget-- > 0 && res.write(`data: ${JSON.stringify({ ...base, ...chunk })}\n\n`);
  const send = (delta: object, finish: string | null = null) => write({ choices: [{ index: 0, delta, finish_reason: finish }] });
  send({ role: 'assistant', content: '' });
  for (const p of pieces(message.reasoning_content ?? '')) send({ reasoning_content: p });
  for (const p of pieces(message.content ?? '')) send({ content: p });
  message.tool_calls?.forEach((call, index) => {
    send({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] });
    for (const p of pieces(call.function.arguments)) send({ tool_calls: [{ index, function: { arguments: p } }] });
  });
  send({}, choice.finish_reason);
  if (includeUsage) write({ choices: [], usage: completion.usage });
  if (budget < 0) return; // stalled: the connection stays open until the client hangs up
  res.end('data: [DONE]\n\n');
}

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
