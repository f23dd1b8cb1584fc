// Model calls through a ChatGPT subscription: OpenAI's Codex Responses endpoint
// (`<codex base>/responses`), as OpenHands 1.58 makes them. The wire contract it follows:
// - the access token as the bearer, the `chatgpt-account-id` of the verified token, and the
//   originator / OpenAI-Beta headers of OpenAI's Codex CLI;
// - always streamed (the endpoint refuses anything else), `store: false`, `tool_choice: "auto"`, no
//   temperature, max_output_tokens, include or reasoning (the endpoint answers nothing when they are
//   present);
// - short `instructions` (long ones are refused): the system prompt goes, as a "Context" text, in
//   front of the first user message instead;
// - the finished output items arrive as `response.output_item.done` events, and the closing
//   `response.completed` may carry an empty `output`: the answer is assembled from the items.
// The chat-completions messages and tools of the agent are mapped here, so the rest of the agent
// does not know which protocol a model speaks.
import { machine, type } from 'node:os';
import type OpenAI from 'openai';
import type { ChatMessage, ChatTool, ToolCall } from './client.ts';
import { ModelCallError } from './errors.ts';
import { sdkInCall } from './sdk.ts';

/** A ChatGPT subscription the agent server signed in with (agent-server/subscription). */
export interface SubscriptionAccess {
  vendor: 'openai';
  /** The Codex base URL (OpenAI's `…/backend-api/codex`, or the setting that replaces it). */
  baseUrl: string;
  /** A usable access token (refreshed first when it is about to expire) and the verified account id; throws ModelCallError when nobody is signed in. */
  credentials(): Promise<{ accessToken: string; accountId: string | null }>;
}

/** Short, as the endpoint wants them; the real system prompt travels in the first user message. */
export const CODEX_INSTRUCTIONS = 'You are a coding agent working for the user in a sandboxed workspace.';

/** The headers every Codex call carries beside the bearer token. */
export function codexHeaders(accountId: string | null): Record<string, string> {
  return {
    originator: 'codex_cli_rs',
    'OpenAI-Beta': 'responses=experimental',
    'User-Agent': `agentyard (${type()}; ${machine()})`,
    ...(accountId ? { 'chatgpt-account-id': accountId } : {}),
  };
}

type InputItem = Record<string, unknown>;

const textOf = (content: unknown): string => {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p: { type?: string; text?: string }) => (p.type === 'text' ? (p.text ?? '') : '')).join('');
  return '';
};

/** A user message's parts as Responses input parts (text, and images by URL). */
function userParts(content: unknown): InputItem[] {
  if (typeof content === 'string') return [{ type: 'input_text', text: content }];
  if (!Array.isArray(content)) return [];
  return content.flatMap((p: { type?: string; text?: string; image_url?: { url?: string } }): InputItem[] => {
    if (p.type === 'text') return [{ type: 'input_text', text: p.text ?? '' }];
    if (p.type === 'image_url' && p.image_url?.url) return [{ type: 'input_image', image_url: p.image_url.url, detail: 'auto' }];
    return [];
  });
}

/** The request body of one Codex call for the agent's chat-completions messages and tools. */
export function codexRequest(model: string, messages: ChatMessage[], tools: ChatTool[], extraBody: Record<string, unknown>): Record<string, unknown> {
  const system: string[] = [];
  const input: InputItem[] = [];
  for (const m of messages) {
    if (m.role === 'system' || m.role === 'developer') {
      const s = textOf(m.content).trim();
      if (s) system.push(s);
    } else if (m.role === 'user') {
      input.push({ role: 'user', content: userParts(m.content) });
    } else if (m.role === 'assistant') {
      const text = textOf(m.content);
      if (text) input.push({ role: 'assistant', content: [{ type: 'output_text', text }] });
      for (const c of m.tool_calls ?? []) if (c.type === 'function') input.push({ type: 'function_call', call_id: c.id, name: c.function.name, arguments: c.function.arguments });
    } else if (m.role === 'tool') {
      input.push({ type: 'function_call_output', call_id: m.tool_call_id, output: textOf(m.content) });
    }
  }
  if (system.length > 0) {
    const prefix = { type: 'input_text', text: `Context (system prompt):\n${system.join('\n\n---\n\n')}\n\n` };
    const first = input.find((i) => i['role'] === 'user');
    if (first) first['content'] = [prefix, ...(first['content'] as InputItem[])];
    else input.unshift({ role: 'user', content: [prefix] });
  }
  const fns = tools.flatMap((t) => (t.type === 'function' ? [{ type: 'function', name: t.function.name, description: t.function.description ?? '', parameters: t.function.parameters ?? { type: 'object', properties: {} }, strict: false }] : []));
  return {
    ...extraBody,
    model,
    instructions: CODEX_INSTRUCTIONS,
    input,
    ...(fns.length ? { tools: fns } : {}),
    tool_choice: 'auto',
    store: false,
    stream: true,
  };
}

export interface CodexAnswer {
  id: string;
  content: string | null;
  reasoning: string | null;
  toolCalls: ToolCall[];
  /** In chat-completions terms, as the rest of the client counts usage. */
  usage: OpenAI.CompletionUsage | undefined;
}

type StreamEvent = { type: string } & Record<string, unknown>;

/** Reads a Codex event stream into one answer; `onDelta` sees text and reasoning as they arrive. */
export async function collectCodexStream(
  events: AsyncIterable<StreamEvent>,
  onDelta: ((d: { content: string | null; reasoning: string | null }) => void) | undefined,
  signal: AbortSignal | undefined,
  heard: () => void,
): Promise<CodexAnswer> {
  let id = '';
  const items: Record<string, unknown>[] = [];
  let completed: { id?: string; output?: Record<string, unknown>[]; usage?: Record<string, unknown> } | undefined;
  for await (const event of events) {
    if (signal?.aborted) throw new (sdkInCall().APIUserAbortError)();
    heard();
    const response = event['response'] as { id?: string } | undefined;
    if (response?.id) id ||= response.id;
    switch (event.type) {
      case 'response.output_text.delta':
        onDelta?.({ content: String(event['delta'] ?? ''), reasoning: null });
        break;
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        onDelta?.({ content: null, reasoning: String(event['delta'] ?? '') });
        break;
      case 'response.output_item.done':
        items.push(event['item'] as Record<string, unknown>);
        break;
      case 'response.completed':
        completed = event['response'] as typeof completed;
        break;
      case 'response.failed':
      case 'response.incomplete': {
        const r = event['response'] as { error?: { message?: string }; incomplete_details?: { reason?: string } } | undefined;
        throw new ModelCallError('LLMError', `The Codex endpoint ended the answer (${event.type}): ${r?.error?.message ?? r?.incomplete_details?.reason ?? 'no reason given'}`);
      }
      case 'error':
        throw new ModelCallError('LLMError', `The Codex endpoint reported an error: ${String(event['message'] ?? 'no message')}`);
    }
  }
  if (!completed) throw new ModelCallError('LLMNoResponseError', 'The Codex endpoint ended the stream before response.completed');
  const output = completed.output?.length ? completed.output : items;
  let content: string | null = null;
  let reasoning: string | null = null;
  const toolCalls: ToolCall[] = [];
  for (const item of output) {
    if (item['type'] === 'message') {
      for (const part of (item['content'] as { type?: string; text?: string }[] | undefined) ?? []) if (part.type === 'output_text' && part.text) content = (content ?? '') + part.text;
    } else if (item['type'] === 'function_call') {
      toolCalls.push({ id: String(item['call_id'] ?? item['id'] ?? ''), name: String(item['name'] ?? ''), arguments: String(item['arguments'] ?? '') });
    } else if (item['type'] === 'reasoning') {
      const parts = [...((item['summary'] as { text?: string }[] | undefined) ?? []), ...((item['content'] as { text?: string }[] | undefined) ?? [])];
      const text = parts.map((p) => p.text ?? '').join('');
      if (text) reasoning = (reasoning ?? '') + text;
    }
  }
  const u = completed.usage as { input_tokens?: number; output_tokens?: number; total_tokens?: number; input_tokens_details?: { cached_tokens?: number }; output_tokens_details?: { reasoning_tokens?: number } } | undefined;
  const usage = u && {
    prompt_tokens: u.input_tokens ?? 0,
    completion_tokens: u.output_tokens ?? 0,
    total_tokens: u.total_tokens ?? (u.input_tokens ?? 0) + (u.output_tokens ?? 0),
    prompt_tokens_details: { cached_tokens: u.input_tokens_details?.cached_tokens ?? 0 },
    completion_tokens_details: { reasoning_tokens: u.output_tokens_details?.reasoning_tokens ?? 0 },
  };
  return { id: completed.id ?? id, content, reasoning, toolCalls, usage };
}
