// The events the agent emits, built in one place so every producer fills the same fields.
import { randomBytes } from 'node:crypto';
import type { ActionEvent, Event, ErrorClassification, Observation, ObservationEvent } from '../api/events/index.ts';
import { newEventBase } from '../api/events/index.ts';
import type { Completion, ToolCall } from './llm/client.ts';
import type { AgentTool } from './tools/tool.ts';

type Of<K extends Event['kind']> = Extract<Event, { kind: K }>;

export function conversationError(code: string, detail: string, classification?: ErrorClassification): Of<'ConversationErrorEvent'> {
  return { ...newEventBase('environment'), code, detail, ...(classification ? { classification } : {}), kind: 'ConversationErrorEvent' };
}

export function agentError(toolName: string, toolCallId: string, error: string): Of<'AgentErrorEvent'> {
  return { ...newEventBase('agent'), tool_name: toolName, tool_call_id: toolCallId, error, kind: 'AgentErrorEvent' };
}

export function observationEvent(action: ActionEvent, observation: Observation): ObservationEvent {
  return { ...newEventBase('environment'), tool_name: action.tool_name, tool_call_id: action.tool_call_id, observation, action_id: action.id, kind: 'ObservationEvent' };
}

export function userReject(action: ActionEvent, reason: string, source: 'user' | 'hook'): Of<'UserRejectObservation'> {
  return {
    ...newEventBase('environment'),
    tool_name: action.tool_name,
    tool_call_id: action.tool_call_id,
    action_id: action.id,
    rejection_reason: reason,
    rejection_source: source,
    kind: 'UserRejectObservation',
  };
}

export function stateUpdate(key: string, value: unknown): Of<'ConversationStateUpdateEvent'> {
  return { ...newEventBase('environment'), key, value, kind: 'ConversationStateUpdateEvent' };
}

/** The model's text-only answer. */
export function assistantMessage(completion: Completion): Of<'MessageEvent'> {
  return {
    ...newEventBase('agent'),
    llm_message: {
      role: 'assistant',
      content: [{ type: 'text', text: completion.content ?? '' }],
      ...(completion.reasoning ? { reasoning_content: completion.reasoning } : {}),
    },
    llm_response_id: completion.responseId,
    activated_skills: [],
    extended_content: [],
    kind: 'MessageEvent',
  };
}

/**
 * One ActionEvent per tool call of a response, sharing its llm_response_id. The first carries the
 * response's text as thought (and its reasoning), as OpenHands does; `summary` and the predicted
 * `security_risk` are lifted from the arguments onto the event.
 */
export function actionEvent(
  completion: Completion,
  call: ToolCall,
  index: number,
  action: ActionEvent['action'],
  summary: string | undefined,
  risk: ActionEvent['security_risk'] = 'UNKNOWN',
): ActionEvent {
  const first = index === 0;
  return {
    ...newEventBase('agent'),
    thought: first && completion.content ? [{ type: 'text', text: completion.content }] : [],
    ...(first && completion.reasoning ? { reasoning_content: completion.reasoning } : {}),
    thinking_blocks: [],
    action: action ?? null,
    tool_name: call.name,
    tool_call_id: call.id,
    tool_call: { id: call.id, name: call.name, arguments: call.arguments, origin: 'completion' },
    llm_response_id: completion.responseId,
    security_risk: risk,
    summary: summary ?? null,
    kind: 'ActionEvent',
  };
}

/** An environment message the model reads as user input (the one-time stuck nudge). */
export function environmentMessage(text: string): Of<'MessageEvent'> {
  return { ...newEventBase('environment'), llm_message: { role: 'user', content: [{ type: 'text', text }] }, activated_skills: [], extended_content: [], kind: 'MessageEvent' };
}

/** The system prompt with the tool definitions, as OpenHands records it before the first step. */
export function systemPromptEvent(tools: readonly AgentTool[], prompt: string, dynamicContext: string): Of<'SystemPromptEvent'> {
  return {
    ...newEventBase('agent'),
    system_prompt: { type: 'text', text: prompt },
    tools: tools.map((t) => ({
      description: t.description,
      action_type: t.actionKind,
      observation_type: t.observationKind,
      annotations: { title: t.name, readOnlyHint: t.readOnly ?? false, destructiveHint: !t.readOnly, idempotentHint: false, openWorldHint: t.name === 'terminal' },
      title: t.name,
      ...t.definition,
      kind: t.definitionKind,
    })) as Of<'SystemPromptEvent'>['tools'],
    dynamic_context: { type: 'text', text: dynamicContext },
    kind: 'SystemPromptEvent',
  };
}

/**
 * A model call's completion log (`agent.llm.log_completions`), streamed as OpenHands' agent server
 * streams it instead of writing files in the sandbox: the file name it would have had
 * (`<model with / as __>-<epoch seconds>-<4 hex>[-error].json`) and the JSON it would have held.
 */
export function completionLog(model: string, usageId: string, data: Record<string, unknown>, failed: boolean): Of<'LLMCompletionLogEvent'> {
  const now = Date.now() / 1000;
  const filename = `${model.replaceAll('/', '__')}-${now.toFixed(3)}-${randomBytes(2).toString('hex')}${failed ? '-error' : ''}.json`;
  return { ...newEventBase('environment'), filename, log_data: JSON.stringify({ ...data, timestamp: now }), model_name: model, usage_id: usageId, kind: 'LLMCompletionLogEvent' };
}

/** The token ids of one model call (vLLM, asked with litellm_extra_body.return_token_ids), as OpenHands records them. */
export function tokenEvent(prompt: number[], response: number[]): Of<'TokenEvent'> {
  return { ...newEventBase('agent'), prompt_token_ids: prompt, response_token_ids: response, kind: 'TokenEvent' };
}
