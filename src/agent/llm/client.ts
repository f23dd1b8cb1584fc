// The model client: OpenAI-compatible chat completions through the official SDK, which already does
// retries with backoff on 429/5xx/connection errors and request timeouts.
import OpenAI from 'openai';
import type { LlmConfig } from '../types.ts';
import { endpointModelName } from './model-name.ts';

export type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;
export type ChatTool = OpenAI.Chat.Completions.ChatCompletionTool;

export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface Completion {
  responseId: string;
  content: string | null;
  reasoning: string | null;
  toolCalls: ToolCall[];
  usage: { promptTokens: number; completionTokens: number; cacheReadTokens: number; reasoningTokens: number; cost: number };
}

export interface ModelClientOptions {
  maxRetries?: number;
  timeoutMs?: number;
}

export class ModelClient {
  readonly #client: OpenAI;
  readonly model: string;

  constructor(config: LlmConfig, opts: ModelClientOptions = {}) {
    this.model = config.model;
    this.#client = new OpenAI({
      apiKey: config.apiKey || 'not-needed',
      ...(config.baseUrl ? { baseURL: config.baseUrl } : {}),
      maxRetries: opts.maxRetries ?? 4,
      timeout: opts.timeoutMs ?? 120_000,
    });
  }

  async complete(messages: ChatMessage[], tools: ChatTool[], signal?: AbortSignal): Promise<Completion> {
    const response = await this.#client.chat.completions.create(
      { model: endpointModelName(this.model), messages, ...(tools.length ? { tools } : {}) },
      signal ? { signal } : {},
    );
    const choice = response.choices[0];
    const message = choice?.message;
    const usage = response.usage as (OpenAI.CompletionUsage & { cost?: number }) | undefined;
    return {
      responseId: response.id,
      content: message?.content ?? null,
      reasoning: (message as { reasoning_content?: string } | undefined)?.reasoning_content ?? null,
      toolCalls: (message?.tool_calls ?? [])
        .filter((c): c is OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall => c.type === 'function')
        .map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })),
      usage: {
        promptTokens: usage?.prompt_tokens ?? 0,
        completionTokens: usage?.completion_tokens ?? 0,
        cacheReadTokens: usage?.prompt_tokens_details?.cached_tokens ?? 0,
        reasoningTokens: usage?.completion_tokens_details?.reasoning_tokens ?? 0,
        cost: typeof usage?.cost === 'number' ? usage.cost : 0,
      },
    };
  }
}
