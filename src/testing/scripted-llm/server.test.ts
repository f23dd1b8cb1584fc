import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { SCRIPT_EXHAUSTED, startScriptedLlm, type ScriptedLlm } from './server.ts';

const servers: ScriptedLlm[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function start(...args: Parameters<typeof startScriptedLlm>) {
  const llm = await startScriptedLlm(...args);
  servers.push(llm);
  return { llm, client: new OpenAI({ baseURL: llm.url, apiKey: 'sk-x', maxRetries: 2 }) };
}

const hi = [{ role: 'user' as const, content: 'hi' }];

describe('scripted model server', () => {
  it('plays a plain reply with tool calls, reasoning and usage to the official client, and records the request', async () => {
    const { llm, client } = await start([
      { content: 'plain', reasoning: 'hmm', toolCalls: [{ name: 'think', arguments: { thought: 't' }, id: 'call_1' }], usage: { prompt_tokens: 7, completion_tokens: 3, cached_tokens: 2, cost: 0.5 } },
    ]);
    const tools = [{ type: 'function' as const, function: { name: 'think', parameters: { type: 'object' } } }];
    const r = await client.chat.completions.create({ model: 'm', messages: hi, tools });
    const message = r.choices[0]!.message as OpenAI.Chat.ChatCompletionMessage & { reasoning_content?: string };
    expect(message).toMatchObject({ content: 'plain', reasoning_content: 'hmm', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'think', arguments: '{"thought":"t"}' } }] });
    expect(r.choices[0]!.finish_reason).toBe('tool_calls');
    expect(r.usage).toMatchObject({ prompt_tokens: 7, completion_tokens: 3, total_tokens: 10, prompt_tokens_details: { cached_tokens: 2 }, cost: 0.5 });
    expect(llm.requests).toHaveLength(1);
    expect(llm.requests[0]).toMatchObject({ model: 'm', messages: hi, tools });
    expect(llm.requests[0]!.headers.authorization).toBe('Bearer sk-x');
    expect(llm.remaining()).toBe(0);
  });

  it('streams content and tool-call arguments in pieces, with usage last when asked for', async () => {
    const args = { command: 'echo a fairly long command line', summary: 'echo' };
    const { client } = await start([{ content: 'streamed text in several pieces', toolCalls: [{ name: 'terminal', arguments: args }], usage: { prompt_tokens: 4, completion_tokens: 2 } }]);
    const stream = await client.chat.completions.create({ model: 'm', messages: hi, stream: true, stream_options: { include_usage: true } });
    let text = '';
    let name = '';
    let argText = '';
    let chunks = 0;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      chunks++;
      usage = chunk.usage ?? usage;
      const delta = chunk.choices[0]?.delta;
      text += delta?.content ?? '';
      name += delta?.tool_calls?.[0]?.function?.name ?? '';
      argText += delta?.tool_calls?.[0]?.function?.arguments ?? '';
    }
    expect(chunks).toBeGreaterThan(6);
    expect([text, name, JSON.parse(argText)]).toEqual(['streamed text in several pieces', 'terminal', args]);
    expect(usage).toMatchObject({ prompt_tokens: 4, completion_tokens: 2 });
  });

  it('the SDK stream helper assembles the scripted chunks into a whole completion', async () => {
    const { client } = await start([{ content: 'whole', toolCalls: [{ name: 'finish', arguments: { message: 'done' } }] }]);
    const final = await client.chat.completions.stream({ model: 'm', messages: hi }).finalChatCompletion();
    expect(final.choices[0]!.message).toMatchObject({ content: 'whole', tool_calls: [{ function: { name: 'finish', arguments: '{"message":"done"}' } }] });
  });

  it('answers an exhausted script with a clear 500 the client does not retry', async () => {
    const { llm, client } = await start([]);
    const err = await client.chat.completions.create({ model: 'm', messages: hi }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    expect((err as Error).message).toContain(SCRIPT_EXHAUSTED);
    expect(llm.requests).toHaveLength(1);
  });

  it('answers scripted error statuses with the message and code, honouring retry-after-ms', async () => {
    const { llm, client } = await start([
      { status: 429, retryAfterMs: 1 },
      { status: 400, errorMessage: 'too long', errorCode: 'context_length_exceeded' },
    ]);
    const err = await client.chat.completions.create({ model: 'm', messages: hi }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err).toMatchObject({ status: 400, code: 'context_length_exceeded', message: expect.stringContaining('too long') });
    expect(llm.requests).toHaveLength(2);
  });

  it('lets a step look at the request, records what a step threw, and answers GET /v1/models', async () => {
    const { llm, client } = await start([
      (req) => ({ content: `you said ${String(req.messages[0]!.content)}` }),
      () => {
        throw new Error('expected something else');
      },
    ]);
    expect((await client.chat.completions.create({ model: 'm', messages: hi })).choices[0]!.message.content).toBe('you said hi');
    const err = await client.chat.completions.create({ model: 'm', messages: hi }).catch((e: unknown) => e);
    expect((err as Error).message).toContain('A scripted step threw: expected something else');
    expect(llm.failures.map((f) => f.message)).toEqual(['expected something else']);
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual(['scripted']);
  });

  it('a step can hold its answer until the client gives up; the request signal tells it', async () => {
    let seen: AbortSignal | undefined;
    const { llm } = await start();
    llm.push((req) => {
      seen = req.signal;
      return new Promise((resolve) => req.signal.addEventListener('abort', () => resolve({ content: 'too late' })));
    });
    const caller = new AbortController();
    const client = new OpenAI({ baseURL: llm.url, apiKey: 'x', maxRetries: 0 });
    const pending = client.chat.completions.create({ model: 'm', messages: hi }, { signal: caller.signal }).catch((e: unknown) => e);
    await new Promise<void>((resolve) => {
      const poll = () => (llm.requests.length ? resolve() : setImmediate(poll));
      poll();
    });
    caller.abort();
    expect(await pending).toBeInstanceOf(OpenAI.APIUserAbortError);
    await new Promise<void>((resolve) => (seen!.aborted ? resolve() : seen!.addEventListener('abort', () => resolve())));
    expect(seen!.aborted).toBe(true);
  });

  it('refuses malformed requests and unknown routes', async () => {
    const { llm } = await start();
    expect((await fetch(`${llm.url}/chat/completions`, { method: 'POST', body: '{nope' })).status).toBe(400);
    expect((await fetch(`${llm.url}/chat/completions`, { method: 'POST', body: '{}' })).status).toBe(400);
    expect((await fetch(`${llm.url}/embeddings`, { method: 'POST', body: '{}' })).status).toBe(404);
    expect(llm.requests).toHaveLength(0);
  });
});
