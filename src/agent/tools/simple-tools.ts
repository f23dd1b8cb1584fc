// `think` and `finish`: tools with no side effects that shape the run.
import { requireString, textContent, type AgentTool } from './tool.ts';

export const thinkTool: AgentTool = {
  name: 'think',
  definitionKind: 'ThinkTool',
  actionKind: 'ThinkAction',
  observationKind: 'ThinkObservation',
  description: 'Use the tool to think about something. It will not obtain new information or change anything; it just logs the thought.',
  parameters: { type: 'object', properties: { thought: { type: 'string', description: 'The thought to log.' } }, required: ['thought'] },
  toAction: (args) => ({ kind: 'ThinkAction', thought: requireString(args, 'thought') }),
  async execute() {
    const text = 'Your thought has been logged.';
    return { observation: { kind: 'ThinkObservation', content: textContent(text), is_error: false }, text, isError: false };
  },
};

export const finishTool: AgentTool = {
  name: 'finish',
  definitionKind: 'FinishTool',
  actionKind: 'FinishAction',
  observationKind: 'FinishObservation',
  description: 'Signals that the task is complete, with a final message to the user.',
  parameters: { type: 'object', properties: { message: { type: 'string', description: 'Final message to the user.' } }, required: ['message'] },
  toAction: (args) => ({ kind: 'FinishAction', message: requireString(args, 'message') }),
  async execute(action) {
    const text = String(action.message);
    return { observation: { kind: 'FinishObservation', content: textContent(text), is_error: false }, text, isError: false };
  },
};
