// Builds the chat messages the model sees from the persisted events of a conversation, so a
// re-created agent (after a restart, or in a fork) continues from exactly the same view.
import type { ActionEvent, Event } from '../api/events/index.ts';
import type { ChatMessage } from './llm/client.ts';
import { contentText, observationText } from './tools/output.ts';

type AssistantMessage = Extract<ChatMessage, { role: 'assistant' }>;

export const INTERRUPTED_CALL = 'ERROR: this tool call was interrupted before it produced a result.';

export function buildMessages(events: readonly Event[]): ChatMessage[] {
  const messages: ChatMessage[] = [];
  /** Tool answers by call id; they are placed right after the assistant message that made the call. */
  const answers = new Map<string, string>();
  let open: { responseId: string; message: AssistantMessage } | undefined;
  const push = (m: ChatMessage) => {
    open = undefined;
    messages.push(m);
  };
  const answer = (toolCallId: string, text: string) => {
    if (!answers.has(toolCallId)) answers.set(toolCallId, text);
  };
  for (const e of events) {
    switch (e.kind) {
      case 'SystemPromptEvent':
        push({ role: 'system', content: [e.system_prompt.text, e.dynamic_context?.text].filter(Boolean).join('\n\n') });
        break;
      case 'MessageEvent': {
        const body = [contentText(e.llm_message.content), contentText(e.extended_content)].filter(Boolean).join('\n');
        push(e.llm_message.role === 'assistant' ? { role: 'assistant', content: body } : { role: 'user', content: body });
        break;
      }
      case 'ActionEvent': {
        const call = { id: e.tool_call.id, type: 'function' as const, function: { name: e.tool_call.name, arguments: e.tool_call.arguments } };
        // Actions of one response (parallel calls) are one assistant message with several tool calls.
        if (open && open.responseId === e.llm_response_id) {
          open.message.tool_calls = [...(open.message.tool_calls ?? []), call];
        } else {
          const message: AssistantMessage = { role: 'assistant', content: contentText(e.thought) || null, tool_calls: [call] };
          push(message);
          open = { responseId: e.llm_response_id, message };
        }
        break;
      }
      case 'ObservationEvent':
        answer(e.tool_call_id, observationText(e.observation));
        break;
      case 'AgentErrorEvent':
        answer(e.tool_call_id, `ERROR: ${e.error}`);
        break;
      case 'CondensationSummaryEvent':
        // What a condensation left of the forgotten events; the model reads it as user input (OpenHands).
        push({ role: 'user', content: e.summary });
        break;
      case 'UserRejectObservation':
        answer(e.tool_call_id, `Action rejected: ${e.rejection_reason ?? 'User rejected the action'}`);
        break;
      default:
        // State updates, conversation errors, pauses, tokens: not part of what the model reads.
        break;
    }
  }
  // Chat APIs want every tool call answered right after its assistant message, even when the
  // answer was recorded later (a confirmed batch) or never (an interrupted call).
  // The system prompt leads even when it was recorded after the first user message (the agent
  // server creates the agent, and so records the prompt, at the first run).
  const ordered = [...messages.filter((m) => m.role === 'system'), ...messages.filter((m) => m.role !== 'system')];
  const out: ChatMessage[] = [];
  for (const m of ordered) {
    const last = out.at(-1);
    // OpenHands merges adjacent plain user messages; some chat templates require alternation.
    if (m.role === 'user' && last?.role === 'user' && typeof last.content === 'string' && typeof m.content === 'string') {
      last.content = `${last.content}\n\n${m.content}`;
      continue;
    }
    out.push(m);
    if (m.role === 'assistant' && m.tool_calls?.length) {
      for (const c of m.tool_calls) out.push({ role: 'tool', tool_call_id: c.id, content: answers.get(c.id) ?? INTERRUPTED_CALL });
    }
  }
  return out;
}

/**
 * ActionEvents recorded but not answered by an observation, a rejection or an error: a batch that
 * waited for confirmation, or one a stopped run did not finish. Running again executes them.
 */
export function pendingActions(events: readonly Event[]): ActionEvent[] {
  const answered = new Set<string>();
  for (const e of events) {
    if (e.kind === 'ObservationEvent' || e.kind === 'AgentErrorEvent' || e.kind === 'UserRejectObservation') answered.add(e.tool_call_id);
  }
  return events.filter((e): e is ActionEvent => e.kind === 'ActionEvent' && e.action != null && !answered.has(e.tool_call_id));
}
