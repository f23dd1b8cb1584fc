// A local OpenAI-compatible chat-completions server that plays scripted responses over real HTTP.
// It is the stand-in for a model provider in every test that runs the agent.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ScriptedToolCall {
  name: string;
  arguments: Record<string, unknown> | string;
  id?: string;
}

export interface ScriptedReply {
  content?: string;
  toolCalls?: ScriptedToolCall[];
  usage?: { prompt_tokens: number; completion_tokens: number };
  /** Answer with this HTTP status and an error body instead (retry tests). */
  status?: number;
}

/** A reply, or a function of the request that returns one (to look at what the model was sent). */
export type ScriptStep = ScriptedReply | ((request: RecordedRequest) => ScriptedReply);

export interface RecordedRequest {
  model: string;
  messages: { role: string; content?: unknown; tool_calls?: unknown; tool_call_id?: string }[];
  tools?: { type: string; function: { name: string } }[];
  stream?: boolean;
  headers: Record<string, string | string[] | undefined>;
}

export interface ScriptedLlm {
  /** Base URL ending in /v1, as OpenAI clients expect. */
  url: string;
  requests: RecordedRequest[];
  push(...steps: ScriptStep[]): void;
  remaining(): number;
  close(): Promise<void>;
}

export async function startScriptedLlm(script: ScriptStep[] = [], opts: { port?: number } = {}): Promise<ScriptedLlm> {
  const steps = [...script];
  const requests: RecordedRequest[] = [];

  const server = createServer(async (req, res) => {
    try {
      if (req.method === 'GET' && req.url === '/v1/models') return json(res, 200, { object: 'list', data: [{ id: 'scripted', object: 'model', owned_by: 'agentyard-tests' }] });
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') return json(res, 404, { error: { message: `no route ${req.method} ${req.url}` } });
      const body = JSON.parse(await readBody(req)) as Omit<RecordedRequest, 'headers'>;
      const recorded: RecordedRequest = { ...body, headers: req.headers };
      requests.push(recorded);
      const step = steps.shift();
      if (!step) return json(res, 500, { error: { message: 'The scripted model has no more responses', type: 'script_exhausted' } });
      const reply = typeof step === 'function' ? step(recorded) : step;
      if (reply.status) return json(res, reply.status, { error: { message: `scripted status ${reply.status}`, type: 'scripted' } });
      const completion = toCompletion(body.model, reply);
      if (body.stream) return stream(res, completion);
      return json(res, 200, completion);
    } catch (err) {
      json(res, 400, { error: { message: String(err) } });
    }
  });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    push: (...more) => steps.push(...more),
    remaining: () => steps.length,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function toCompletion(model: string, reply: ScriptedReply) {
  const toolCalls = reply.toolCalls?.map((c) => ({
    id: c.id ?? `call_${randomUUID().slice(0, 8)}`,
    type: 'function' as const,
    function: { name: c.name, arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments) },
  }));
  return {
    id: `chatcmpl-${randomUUID()}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: reply.content ?? null, ...(toolCalls?.length ? { tool_calls: toolCalls } : {}) },
        finish_reason: toolCalls?.length ? 'tool_calls' : 'stop',
      },
    ],
    usage: { prompt_tokens: 0, completion_tokens: 0, ...reply.usage, total_tokens: (reply.usage?.prompt_tokens ?? 0) + (reply.usage?.completion_tokens ?? 0) },
  };
}

/** Server-sent events in the chat.completion.chunk format, one chunk per field. */
function stream(res: ServerResponse, completion: ReturnType<typeof toCompletion>): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const choice = completion.choices[0]!;
  const base = { id: completion.id, object: 'chat.completion.chunk', created: completion.created, model: completion.model };
  const send = (delta: unknown, finish: string | null = null, usage?: unknown) =>
    res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }], ...(usage ? { usage } : {}) })}\n\n`);
  send({ role: 'assistant', content: choice.message.content ?? '' });
  choice.message.tool_calls?.forEach((call, index) => send({ tool_calls: [{ index, ...call }] }));
  send({}, choice.finish_reason, completion.usage);
  res.end('data: [DONE]\n\n');
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
