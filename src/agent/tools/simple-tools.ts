// `think` and `finish`: tools with no side effects that shape the run.
import type { FinishAction, ThinkAction } from '../../api/events/index.ts';
import { requireString, textContent, type AgentTool } from './tool.ts';

export const thinkTool: AgentTool<ThinkAction> = {
  name: 'think',
  definitionKind: 'ThinkTool',
  actionKind: 'ThinkAction',
  observationKind: 'ThinkObservation',
  description:
    'Use the tool to think about something. It will not obtain new information or make any changes to the repository, but just log the thought. ' +
    'Use it when complex reasoning or brainstorming is needed, e.g. to weigh several possible fixes or to plan a refactoring.',
  parameters: { type: 'object', properties: { thought: { type: 'string', description: 'The thought to log.' } }, required: ['thought'] },
  toAction: (args) => ({ kind: 'ThinkAction', thought: requireString(args, 'thought') }),
  readOnly: true,
  async execute() {
    return { kind: 'ThinkObservation', content: textContent('Your thought has been logged.'), is_error: false };
  },
};

export const finishTool: AgentTool<FinishAction> = {
  name: 'finish',
  definitionKind: 'FinishTool',
  actionKind: 'FinishAction',
  observationKind: 'FinishObservation',
  description: 'Signals the completion of the current task or conversation, with a final message to the user: what was done, and anything left open.',
  parameters: { type: 'object', properties: { message: { type: 'string', description: 'Final message to send to the user.' } }, required: ['message'] },
  toAction: (args) => ({ kind: 'FinishAction', message: requireString(args, 'message') }),
  async execute(action, ctx) {
    return { kind: 'FinishObservation', content: textContent(ctx.mask(action.message)), is_error: false };
  },
  readOnly: true,
  finishes: true,
};
