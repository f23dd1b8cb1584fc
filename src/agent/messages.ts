// Builds the chat messages the model sees from the persisted events of a conversation, so a
// re-created agent (after a restart, or in a fork) continues from exactly the same view.
import type { ActionEvent, Event } from '../api/events/index.ts';
import type { ChatMessage } from './llm/client.ts';
import { contentText, observationText } from './tools/output.ts';

type AssistantMessage = Extract<ChatMessage, { role: 'assistant' }>;

export const INTERRUPTED_CALL = 'ERROR: this tool call was interrupted before it produced a result.';

export function buildMessages(events: readonly Event[]): ChatMessage[] {
  const builder = new MessageBuilder();
  for (const e of events) builder.add(e);
  return builder.messages();
}

type ToolMessage = Extract<ChatMessage, { role: 'tool' }>;

/**
 * The chat messages of a list of events, built one event at a time, so that an agent step adds its
 * own events instead of rebuilding the whole history (a step would otherwise cost more the longer
 * the conversation). buildMessages is this over a whole list; both give the same messages.
 *
 * Chat APIs want every tool call answered right after its assistant message, even when the answer
 * is recorded later (a confirmed batch) or never (an interrupted call): the tool message is placed
 * with the call and filled in when its answer comes. The system prompt leads even when it was
 * recorded after the first user message (the agent server creates the agent, and so records the
 * prompt, at the first run). Adjacent plain user messages are merged, as OpenHands does (some chat
 * templates require alternation).
 */
export class MessageBuilder {
  readonly #system: ChatMessage[] = [];
  readonly #body: ChatMessage[] = [];
  /** Tool answers by call id (the first one counts). */
  readonly #answers = new Map<string, string>();
  /** The tool messages placed for each call id, to fill in when the answer comes. */
  readonly #placed = new Map<string, ToolMessage[]>();
  /** The assistant message of the last response while its parallel calls keep coming. */
  #open: { responseId: string; message: AssistantMessage } | undefined;

  add(e: Event): void {
    switch (e.kind) {
      case 'SystemPromptEvent':
        this.#open = undefined;
        this.#system.push({ role: 'system', content: [e.system_prompt.text, e.dynamic_context?.text].filter(Boolean).join('\n\n') });
        break;
      case 'MessageEvent': {
        const body = [contentText(e.llm_message.content), contentText(e.extended_content)].filter(Boolean).join('\n');
        if (e.llm_message.role === 'assistant') this.#push({ role: 'assistant', content: body });
        else this.#pushUser(body);
        break;
      }
      case 'ActionEvent': {
        const call = { id: e.tool_call.id, type: 'function' as const, function: { name: e.tool_call.name, arguments: e.tool_call.arguments } };
        // Actions of one response (parallel calls) are one assistant message with several tool calls;
        // nothing else was placed since, so its tool messages end the list and this one goes after them.
        if (this.#open && this.#open.responseId === e.llm_response_id) {
          this.#open.message.tool_calls = [...(this.#open.message.tool_calls ?? []), call];
        } else {
          const message: AssistantMessage = { role: 'assistant', content: contentText(e.thought) || null, tool_calls: [call] };
          this.#push(message);
          this.#open = { responseId: e.llm_response_id, message };
        }
        this.#placeToolMessage(call.id);
        break;
      }
      case 'ObservationEvent':
        this.#answer(e.tool_call_id, observationText(e.observation));
        break;
      case 'AgentErrorEvent':
        this.#answer(e.tool_call_id, `ERROR: ${e.error}`);
        break;
      case 'CondensationSummaryEvent':
        // What a condensation left of the forgotten events; the model reads it as user input (OpenHands).
        this.#pushUser(e.summary);
        break;
      case 'UserRejectObservation':
        this.#answer(e.tool_call_id, `Action rejected: ${e.rejection_reason ?? 'User rejected the action'}`);
        break;
      default:
        // State updates, conversation errors, pauses, tokens: not part of what the model reads.
        break;
    }
  }

  /** The messages so far (a new array; the builder goes on from here). */
  messages(): ChatMessage[] {
    return [...this.#system, ...this.#body];
  }

  #push(m: ChatMessage): void {
    this.#open = undefined;
    this.#body.push(m);
  }

  #pushUser(content: string): void {
    const last = this.#body.at(-1);
    if (last?.role === 'user' && typeof last.content === 'string') {
      // A new object: messages handed out earlier keep what they said.
      this.#body[this.#body.length - 1] = { role: 'user', content: `${last.content}\n\n${content}` };
      this.#open = undefined;
      return;
    }
    this.#push({ role: 'user', content });
  }

  #placeToolMessage(callId: string): void {
    const m: ToolMessage = { role: 'tool', tool_call_id: callId, content: this.#answers.get(callId) ?? INTERRUPTED_CALL };
    this.#body.push(m);
    this.#placed.set(callId, [...(this.#placed.get(callId) ?? []), m]);
  }

  #answer(callId: string, text: string): void {
    if (this.#answers.has(callId)) return;
    this.#answers.set(callId, text);
    const placed = this.#placed.get(callId);
    if (!placed) return;
    // New objects in place of the placeholders, for the same reason as in #pushUser.
    for (const m of placed) this.#body[this.#body.lastIndexOf(m)] = { ...m, content: text };
    this.#placed.delete(callId);
  }
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
