// The OpenAI-compatible gateway (OpenHands 1.58 `openai/service.py`): a chat-completions or
// responses request becomes a conversation in the server's workspace whose first message is the
// request's last user message (system and developer texts appended to the system prompt); the run is
// awaited, and its final answer (the finish message, else the agent's last text) is the reply.
//
// Models: as OpenHands, one per stored LLM profile (`openhands_<name>`, /api/profiles), run with that
// profile's LLM by the default agent (terminal, file editor, task tracker; OpenHands runs its active
// agent profile, which this server does not keep). Besides them, `openhands_default` is the model the
// server is configured with (LLM_MODEL, LLM_BASE_URL, LLM_API_KEY), unless a stored profile is named
// `default`. Without either the list is empty and every model is unknown.
import { randomUUID } from 'node:crypto';
import type { ConversationInfo, StartConversationRequest } from '../../api/agent-server/index.ts';
import { parseStartConversationRequest } from '../../api/agent-server/parse.ts';
import {
  GATEWAY_MODEL_PREFIX,
  type ChatCompletion,
  type ChatCompletionRequest,
  type ChatMessage,
  type ModelList,
  type OpenAIResponse,
  type ResponseInputMessage,
  type ResponseRequest,
} from '../../api/agent-server/openai.ts';
import { BadRequest, Conflict, GatewayTimeout, NotFound, ServerError } from '../../api/errors.ts';
import type { ImageContent, TextContent } from '../../api/events/content.ts';
import { usageSummary } from '../conversation/info.ts';
import type { ObservabilityOverrides } from '../http/observability.ts';
import type { ConversationService } from '../conversation/service.ts';
import type { LLM } from '../../api/agent-server/index.ts';
import type { ProfileStore } from '../store/profile-store.ts';
import { finalResponse } from '../routes/conversations.ts';
import { conversationDefaults, type SettingsDoc } from '../settings-doc.ts';

/** The name of the one LLM profile here: the server's configured model. */
export const DEFAULT_PROFILE = 'default';
/** As OpenHands' fixed gateway timeout: a run not stopped by then answers 504 (it goes on running). */
export const GATEWAY_TIMEOUT_MS = 120_000;
/** The tools of OpenHands' seeded `default` agent profile (finish and think are built in). */
const GATEWAY_TOOLS = ['terminal', 'file_editor', 'task_tracker'];
/** A run has stopped in these (OpenHands: terminal statuses, paused, waiting for confirmation). */
const STOPPED = new Set(['finished', 'error', 'stuck', 'paused', 'waiting_for_confirmation']);

type Content = TextContent | ImageContent;


export interface GatewayOptions {
  service: ConversationService;
  /** The stored settings: their conversation settings are the defaults of every gateway conversation (as OpenHands' create_request). */
  settings?: { load(): SettingsDoc };
  /** The stored LLM profiles offered as models (absent: only the configured model). */
  profiles?: ProfileStore;
  timeoutMs?: number;
}

/** The profile names offered, sorted: the stored ones, and `default` for the configured model. */
function profileNames(g: GatewayOptions): string[] {
  const names = new Set((g.profiles?.list() ?? []).map((p) => p.name));
  if (g.service.llmDefaults) names.add(DEFAULT_PROFILE);
  return [...names].sort();
}

export function listModels(g: GatewayOptions): ModelList {
  return { object: 'list', data: profileNames(g).map((name) => ({ id: GATEWAY_MODEL_PREFIX + name, created: 0, object: 'model' as const, owned_by: 'openhands' })) };
}

/** The LLM a gateway model runs with: a stored profile's (with its key), else the configured model's. */
function profileLlm(g: GatewayOptions, model: string): LLM {
  if (!model.startsWith(GATEWAY_MODEL_PREFIX) || model.length === GATEWAY_MODEL_PREFIX.length) {
    throw new NotFound(`Unknown OpenHands model '${model}'. Use GET /v1/models.`);
  }
  const name = model.slice(GATEWAY_MODEL_PREFIX.length);
  const stored = g.profiles?.get(name)?.name === name ? g.profiles.runnable(name) : undefined;
  if (stored) return { ...stored.llm, usage_id: 'agent', ...(stored.apiKey !== undefined ? { api_key: stored.apiKey } : {}) };
  if (name !== DEFAULT_PROFILE || !g.service.llmDefaults) throw new NotFound(`Profile '${name}' not found`);
  return { usage_id: 'agent' };
}

function chatParts(message: ChatMessage): Content[] {
  const content = message.content;
  if (content == null) return [];
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  const parts: Content[] = [];
  for (const part of content) {
    if (part.type === 'text') {
      if (part.text) parts.push({ type: 'text', text: part.text });
    } else if (part.type === 'image_url') {
      const url = typeof part.image_url === 'string' ? part.image_url : part.image_url?.url;
      if (url == null) throw new BadRequest('image_url content part is missing a url');
      parts.push({ type: 'image', image_urls: [url] });
    } else {
      throw new BadRequest(`Unsupported content part type: ${part.type}`);
    }
  }
  return parts;
}

const texts = (parts: Content[]) => parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n');

function responseParts(message: ResponseInputMessage): Content[] {
  if (typeof message.content === 'string') return [{ type: 'text', text: message.content }];
  const parts: Content[] = [];
  for (const part of message.content) {
    if (part.type === 'input_text' || part.type === 'output_text') {
      if (part.text) parts.push({ type: 'text', text: part.text });
    } else if (part.type === 'input_image') {
      if (!part.image_url) throw new BadRequest('input_image content part is missing an image_url');
      parts.push({ type: 'image', image_urls: [part.image_url] });
    } else {
      throw new BadRequest(`Unsupported Responses content part type: ${part.type}`);
    }
  }
  return parts;
}

const isSystem = (role: string) => role === 'system' || role === 'developer';

/** The user content of a responses request: one user message as is, a dialogue wrapped in `<message role=...>` parts. */
function responseUserContent(req: ResponseRequest): Content[] {
  if (typeof req.input === 'string') {
    if (!req.input) throw new BadRequest('Responses input must not be empty');
    return [{ type: 'text', text: req.input }];
  }
  const messages = req.input.filter((m) => !isSystem(m.role));
  if (!messages.some((m) => m.role === 'user')) throw new BadRequest('Responses input must include a user message');
  if (messages.length === 1) return responseParts(messages[0]!);
  return messages.flatMap((m): Content[] => [{ type: 'text', text: `<message role="${m.role}">` }, ...responseParts(m), { type: 'text', text: '</message>' }]);
}

function responseSystemText(req: ResponseRequest): string {
  const out = req.instructions ? [req.instructions.trim()] : [];
  if (typeof req.input !== 'string') for (const m of req.input) if (isSystem(m.role)) out.push(texts(responseParts(m)));
  return out.filter(Boolean).join('\n\n');
}

/**
 * The start request OpenHands builds from the active agent profile, with the model's LLM, and the
 * stored conversation settings' max_iterations, confirmation policy and analyzer (its create_request).
 */
function startRequest(g: GatewayOptions, o: { llm: LLM; systemText: string; content: Content[]; conversationId?: string; observability: ObservabilityOverrides }): StartConversationRequest {
  return parseStartConversationRequest({
    agent: {
      kind: 'Agent',
      llm: o.llm,
      tools: GATEWAY_TOOLS.map((name) => ({ name, params: {} })),
      // 1.58 launches the active agent profile here, whose context has the user's skills (its
      // catalog) and load_project_skills: the same two sources, asked for with the flags.
      agent_context: { load_user_skills: true, load_project_skills: true, ...(o.systemText ? { system_message_suffix: o.systemText } : {}) },
    },
    workspace: { kind: 'LocalWorkspace', working_dir: g.service.workspaceDir },
    ...(g.settings ? conversationDefaults(g.settings.load()) : {}),
    ...(o.conversationId ? { conversation_id: o.conversationId } : {}),
    initial_message: { role: 'user', content: o.content, run: true },
    autotitle: false,
    ...o.observability,
  });
}

/** Resolves with the execution status once the conversation's run has stopped, or throws 504 after `timeoutMs`. */
function whenStopped(service: ConversationService, id: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let unsubscribe = () => {};
    const finish = (fn: () => void) => {
      clearTimeout(timer);
      clearInterval(poll);
      unsubscribe();
      fn();
    };
    const check = () => {
      const rt = service.find(id);
      if (!rt) return finish(() => reject(new ServerError('Conversation did not complete: it was deleted')));
      const status = rt.executionStatus();
      // A message sent during the run starts another one after it: wait for that too.
      if (STOPPED.has(status) && !rt.runPending) finish(() => resolve(status));
    };
    const timer = setTimeout(() => finish(() => reject(new GatewayTimeout('Agent run timed out'))), timeoutMs);
    // Events say when the status changes; the poll covers a run that ends without one more event.
    const poll = setInterval(check, 1000);
    unsubscribe = service.subscribe(id, check);
    check();
  });
}

function raiseForStatus(status: string): void {
  if (status === 'finished') return;
  if (status === 'error' || status === 'stuck') throw new ServerError(`Agent run ended with status: ${status}`);
  if (status === 'paused' || status === 'waiting_for_confirmation') throw new Conflict(`Agent run ended with status: ${status}`);
  throw new ServerError(`Agent run ended with unexpected status: ${status}`);
}

interface RunResult {
  conversationId: string;
  text: string;
  usage: NonNullable<ReturnType<typeof usageSummary>>['accumulated_token_usage'] | undefined;
}

/**
 * Runs the agent: in the conversation `reuseId` names when it exists (the message is added and run),
 * else in a new one (with that id when given).
 */
async function runAgent(g: GatewayOptions, start: StartConversationRequest, content: Content[], reuseId: string | undefined): Promise<RunResult> {
  const { service } = g;
  const existing = reuseId ? service.find(reuseId) : undefined;
  let id: string;
  // A slot first, as OpenHands claims capacity before saving anything: a 429 leaves nothing behind,
  // so an OpenAI client can send the same request again.
  const slot = service.reserveRunSlot(existing);
  try {
    if (existing) {
      id = existing.conversationId;
      await existing.sendMessage({ content }, true);
    } else {
      const { info }: { info: ConversationInfo } = await service.create(start);
      id = info.id;
    }
  } finally {
    slot.release();
  }
  const status = await whenStopped(service, id, g.timeoutMs ?? GATEWAY_TIMEOUT_MS);
  raiseForStatus(status);
  const rt = service.get(id);
  return { conversationId: id, text: finalResponse(rt.events()), usage: usageSummary(rt.stats())?.accumulated_token_usage };
}

export async function chatCompletion(g: GatewayOptions, req: ChatCompletionRequest, o: { reuseId?: string; observability: ObservabilityOverrides }): Promise<{ conversationId: string; completion: ChatCompletion }> {
  // The checks in OpenHands' order: a user message, then the model.
  const user = [...req.messages].reverse().find((m) => m.role === 'user');
  if (!user) throw new BadRequest('At least one user message is required');
  const systemText = req.messages.filter((m) => isSystem(m.role)).map((m) => texts(chatParts(m))).filter(Boolean).join('\n\n');
  const content = chatParts(user);
  const llm = profileLlm(g, req.model);
  const start = startRequest(g, { llm, systemText, content, ...(o.reuseId ? { conversationId: o.reuseId } : {}), observability: o.observability });
  const run = await runAgent(g, start, content, o.reuseId);
  const prompt = run.usage?.prompt_tokens ?? 0;
  const completion = run.usage?.completion_tokens ?? 0;
  return {
    conversationId: run.conversationId,
    completion: {
      id: `chatcmpl-${randomUUID().replaceAll('-', '')}`,
      choices: [{ finish_reason: 'stop', index: 0, message: { content: run.text, role: 'assistant' } }],
      created: Math.floor(Date.now() / 1000),
      model: req.model,
      object: 'chat.completion',
      usage: { completion_tokens: completion, prompt_tokens: prompt, total_tokens: prompt + completion },
    },
  };
}

export async function createResponse(g: GatewayOptions, req: ResponseRequest, o: { observability: ObservabilityOverrides }): Promise<{ conversationId: string; response: OpenAIResponse }> {
  if (req.stream) throw new BadRequest('Streaming responses are not supported yet');
  // `store` promises GET /v1/responses/{id}, which is not served: refused rather than silently lost.
  if (req.store) throw new BadRequest('Persistent response storage (store=True) is not supported yet');
  if (req.previous_response_id) throw new BadRequest('previous_response_id is not supported; replay input items instead');
  const content = responseUserContent(req);
  const llm = profileLlm(g, req.model);
  const start = startRequest(g, { llm, systemText: responseSystemText(req), content, observability: o.observability });
  const createdAt = Date.now() / 1000;
  const run = await runAgent(g, start, content, undefined);
  const u = run.usage;
  const input = u?.prompt_tokens ?? 0;
  const output = u?.completion_tokens ?? 0;
  return {
    conversationId: run.conversationId,
    response: {
      id: `resp_${randomUUID().replaceAll('-', '')}`,
      created_at: createdAt,
      completed_at: Date.now() / 1000,
      ...(req.instructions != null ? { instructions: req.instructions } : {}),
      ...(req.metadata != null ? { metadata: req.metadata } : {}),
      model: req.model,
      object: 'response',
      output: [{ id: `msg_${randomUUID().replaceAll('-', '')}`, content: [{ annotations: [], text: run.text, type: 'output_text' }], role: 'assistant', status: 'completed', type: 'message' }],
      parallel_tool_calls: false,
      status: 'completed',
      tool_choice: 'none',
      tools: [],
      usage: {
        input_tokens: input,
        input_tokens_details: { cached_tokens: u?.cache_read_tokens ?? 0 },
        output_tokens: output,
        output_tokens_details: { reasoning_tokens: u?.reasoning_tokens ?? 0 },
        total_tokens: input + output,
      },
    },
  };
}

/** The SSE frames of a finished completion, as OpenHands streams it: role, content, stop, usage (when asked), [DONE]. */
export function completionChunks(c: ChatCompletion, includeUsage: boolean): string[] {
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({ id: c.id, choices, created: c.created, model: c.model, object: 'chat.completion.chunk', ...extra })}\n\n`;
  const choice = c.choices[0]!;
  return [
    chunk([{ delta: { role: 'assistant' }, index: 0 }]),
    chunk([{ delta: { content: choice.message.content }, index: 0 }]),
    chunk([{ delta: {}, finish_reason: choice.finish_reason, index: 0 }]),
    ...(includeUsage ? [chunk([], { usage: c.usage })] : []),
    'data: [DONE]\n\n',
  ];
}
