import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { ModelClient } from '../../agent/llm/client.ts';
import { endpointModelName } from '../../agent/llm/model-name.ts';
import { startScriptedLlm } from './server.ts';

describe('scripted model server', () => {
  it('plays replies to the official client, streaming and not, and records requests', async () => {
    const llm = await startScriptedLlm([{ content: 'plain' }, { content: 'streamed', toolCalls: [{ name: 'finish', arguments: { message: 'm' } }] }]);
    try {
      const client = new OpenAI({ baseURL: llm.url, apiKey: 'x' });
      const plain = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
      expect(plain.choices[0]?.message.content).toBe('plain');
      const stream = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true });
      let text = '';
      let tool = '';
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? '';
        tool += chunk.choices[0]?.delta.tool_calls?.[0]?.function?.name ?? '';
      }
      expect([text, tool]).toEqual(['streamed', 'finish']);
      expect(llm.requests).toHaveLength(2);
      const exhausted = await fetch(`${llm.url}/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'm', messages: [] }) });
      expect(exhausted.status).toBe(500);
      expect(((await exhausted.json()) as { error: { message: string } }).error.message).toMatch(/no more responses/);
    } finally {
      await llm.close();
    }
  });

  it('the model client retries a 429 and a 503, then succeeds', async () => {
    const llm = await startScriptedLlm([{ status: 429 }, { status: 503 }, { content: 'finally', usage: { prompt_tokens: 3, completion_tokens: 2 } }]);
    try {
      const client = new ModelClient({ model: 'litellm_proxy/some-model', baseUrl: llm.url }, { maxRetries: 3 });
      const done = await client.complete([{ role: 'user', content: 'x' }], []);
      expect(done.content).toBe('finally');
      expect(done.usage).toMatchObject({ promptTokens: 3, completionTokens: 2 });
      expect(llm.requests.map((r) => r.model)).toEqual(['some-model', 'some-model', 'some-model']);
    } finally {
      await llm.close();
    }
  });

  it.each([
    ['openai/gpt-4o', 'gpt-4o'],
    ['litellm_proxy/claude-sonnet', 'claude-sonnet'],
    ['anthropic/claude-3', 'claude-3'],
    ['gpt-4o', 'gpt-4o'],
    ['my-org/custom-model', 'my-org/custom-model'],
  ])('maps %s to %s', (input, want) => expect(endpointModelName(input)).toBe(want));
});
