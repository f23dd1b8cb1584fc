// ask_agent (OpenHands `LocalConversation.ask_agent`): a side question the conversation's model
// answers from what it sees of the conversation, recording nothing: no event, no status change, and
// the agent's own view stays as it was. Its usage is counted under its own usage id, as in OpenHands.
import type { Event } from '../api/events/index.ts';
import type { ChatMessage } from './llm/client.ts';
import { buildMessages } from './messages.ts';

/** OpenHands' usage id for these calls (`ConversationStats.usage_to_metrics` key). */
export const ASK_USAGE_ID = 'ask-agent-llm';

function askPrompt(question: string): string {
  return [
    '<QUESTION>',
    'A side question about this conversation. Answer it from what happened so far, in text only: do not call any tool.',
    '',
    question,
    '</QUESTION>',
  ].join('\n');
}

/**
 * The model's view of the conversation (`view`: condensed, as the agent sees it) plus the question.
 * `systemPrompt` stands in when none was recorded yet (no run so far); it is not recorded either.
 */
export function askMessages(view: readonly Event[], systemPrompt: Event | undefined, question: string): ChatMessage[] {
  const events = systemPrompt && !view.some((e) => e.kind === 'SystemPromptEvent') ? [systemPrompt, ...view] : view;
  const messages = buildMessages(events);
  const last = messages.at(-1);
  // Chat templates that require alternating roles: a trailing user message takes the question in.
  if (last?.role === 'user' && typeof last.content === 'string') last.content = `${last.content}\n\n${askPrompt(question)}`;
  else messages.push({ role: 'user', content: askPrompt(question) });
  return messages;
}
