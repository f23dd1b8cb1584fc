// Builds the chat messages the model sees from the persisted events of a conversation.
import type { Event } from '../api/events/index.ts';
import type { ChatMessage } from './llm/client.ts';

type AssistantMessage = Extract<ChatMessage, { role: 'assistant' }>;

function text(content: readonly { type?: string; text?: string }[] | undefined): string {
  return (content ?? []).map((c) => (c.type === undefined || c.type === "text" ? (c.text ?? "") : "")).join('');
}

/** What the model reads for an observation: the output plus the shell state, as OpenHands renders it. */
export function observationText(observation: Record<string, unknown>): string {
  const body = text(observation.content as { type: string; text?: string }[] | undefined);
  if (observation.kind !== 'TerminalObservation') return body;
  if (observation.timeout) return `${body}\n[The command timed out and may still be running.]`;
  const meta = observation.metadata as { working_dir?: string | null } | undefined;
  const cwd = meta?.working_dir ? `\n[Current working directory: ${meta.working_dir}]` : '';
  const exit = observation.exit_code;
  return `${body}${cwd}${typeof exit === 'number' && exit !== -1 ? `\n[Command finished with exit code ${exit}]` : ''}`;
}

export function buildMessages(events: readonly Event[]): ChatMessage[] {
  const messages: ChatMessage[] = [];
  const answered = new Set<string>();
  let openAssistant: { responseId: string; message: AssistantMessage } | undefined;
  for (const e of events) {
    switch (e.kind) {
      case 'SystemPromptEvent':
        messages.push({ role: 'system', content: [e.system_prompt.text, e.dynamic_context?.text].filter(Boolean).join('\n\n') });
        break;
      case 'MessageEvent': {
        openAssistant = undefined;
        const body = [text(e.llm_message.content as { type: string; text?: string }[]), text(e.extended_content)].filter(Boolean).join('\n');
        if (e.llm_message.role === 'assistant') messages.push({ role: 'assistant', content: body });
        else messages.push({ role: 'user', content: body });
        break;
      }
      case 'ActionEvent': {
        const call = { id: e.tool_call.id, type: 'function' as const, function: { name: e.tool_call.name, arguments: e.tool_call.arguments } };
        if (openAssistant && openAssistant.responseId === e.llm_response_id) {
          openAssistant.message.tool_calls = [...(openAssistant.message.tool_calls ?? []), call];
        } else {
          const message: AssistantMessage = { role: 'assistant', content: text(e.thought) || null, tool_calls: [call] };
          messages.push(message);
          openAssistant = { responseId: e.llm_response_id, message };
        }
        break;
      }
      case 'ObservationEvent':
        answered.add(e.tool_call_id);
        messages.push({ role: 'tool', tool_call_id: e.tool_call_id, content: observationText(e.observation as Record<string, unknown>) });
        break;
      case 'AgentErrorEvent':
        answered.add(e.tool_call_id);
        messages.push({ role: 'tool', tool_call_id: e.tool_call_id, content: `ERROR: ${e.error}` });
        break;
      case 'UserRejectObservation':
        answered.add(e.tool_call_id);
        messages.push({ role: 'tool', tool_call_id: e.tool_call_id, content: `Action rejected: ${e.rejection_reason ?? 'User rejected the action'}` });
        break;
      default:
        break;
    }
  }
  return withAnswersForEveryCall(messages, answered);
}

/** Chat APIs refuse a tool call without a tool answer; an interrupted call gets an explicit one. */
function withAnswersForEveryCall(messages: ChatMessage[], answered: Set<string>): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const m of messages) {
    out.push(m);
    if (m.role !== 'assistant' || !m.tool_calls) continue;
    for (const call of m.tool_calls) {
      if (!answered.has(call.id)) out.push({ role: 'tool', tool_call_id: call.id, content: 'ERROR: this tool call was interrupted before it produced a result.' });
    }
  }
  return out;
}
