// `task` (OpenHands openhands-tools TaskToolSet, named `task_tool_set` in agent.tools): the model
// hands a self-contained job to a sub-agent — an agent definition of the conversation's plugins, or
// of the project's or user's .agents/agents (src/agent/subagent-definitions.ts) — which runs to its end (blocking) and answers with its final response (src/agent/subagent.ts).
import { randomBytes } from 'node:crypto';
import type { TaskAction } from '../../api/events/index.ts';
import type { PluginAgent } from '../plugins/index.ts';
import type { SubAgentResult } from '../subagent.ts';
import { optional, requireString, textContent, type AgentTool, type ToolContext } from './tool.ts';

/** agent.tools names that ask for it (the tool set's name and class name, and the tool's own). */
export const TASK_TOOL_NAMES = new Set(['task_tool_set', 'tasktoolset', 'task', 'tasktool']);

export function wantsTaskTool(tools: readonly { name: string }[] | undefined): boolean {
  return (tools ?? []).some((t) => TASK_TOOL_NAMES.has(t.name.toLowerCase()));
}

export interface TaskToolDeps {
  /** The sub-agents it can start (known once the plugins are loaded). */
  agents(): readonly PluginAgent[];
  run(def: PluginAgent, prompt: string, signal: AbortSignal, taskId: string): Promise<SubAgentResult>;
}

function agentTypesInfo(agents: readonly PluginAgent[]): string {
  if (!agents.length) return '- None: no agent is defined (plugin agents/, .agents/agents of the project or the user).';
  return agents.map((a) => `- ${a.name}: ${a.description ?? '(no description)'} (Tools: ${a.tools.length ? a.tools.join(', ') : 'terminal, file_editor'})`).join('\n');
}

/** OpenHands' task ids: `task_` and 8 hex digits. */
const taskId = () => `task_${randomBytes(4).toString('hex')}`;

export function taskTool(d: TaskToolDeps): AgentTool<TaskAction> {
  return {
    name: 'task',
    definitionKind: 'TaskTool',
    actionKind: 'TaskAction',
    observationKind: 'TaskObservation',
    // Read at each model call: the plugins' agents are known once they are loaded.
    get description() {
      return (
        'Launch a subagent to handle complex, multi-step tasks autonomously. Subagents work independently in the same workspace and return their result to you.\n\n' +
        `Available agent types and the tools they have access to:\n${agentTypesInfo(d.agents())}\n\n` +
        'Write a detailed prompt describing exactly what you need and what to report back. The subagent does not see this conversation.'
      );
    },
    parameters: {
      type: 'object',
      properties: {
        description: { type: 'string', description: 'A short (3-5 word) description of the task.' },
        prompt: { type: 'string', description: 'The task for the agent to perform.' },
        subagent_type: { type: 'string', description: 'The type of specialized agent to use for this task.', default: 'general-purpose' },
        resume: { type: 'string', description: 'Task ID of the task to resume from.' },
      },
      required: ['prompt'],
    },
    toAction: (args) => ({
      kind: 'TaskAction',
      prompt: requireString(args, 'prompt'),
      description: optional<string>(args, 'description', 'string') ?? null,
      subagent_type: optional<string>(args, 'subagent_type', 'string') ?? 'general-purpose',
      resume: optional<string>(args, 'resume', 'string') ?? null,
    }),
    async execute(action, ctx: ToolContext) {
      const subagent = action.subagent_type ?? 'general-purpose';
      const fail = (text: string, id = 'unknown') => ({ kind: 'TaskObservation' as const, content: textContent(text), is_error: true, task_id: id, subagent, status: 'error' });
      // A finished task's sub-agent is gone (OpenHands evicts it too), so there is nothing to resume.
      if (action.resume) return fail(`Failed to execute task: Task '${action.resume}' not found. Available tasks: `);
      const def = d.agents().find((a) => a.name === subagent);
      if (!def) return fail(`Failed to execute task: Unknown agent '${subagent}'. Available agents: ${d.agents().map((a) => a.name).join(', ') || 'none'}`);
      const id = taskId();
      const result = await d.run(def, action.prompt, ctx.signal ?? new AbortController().signal, id);
      if (!result.ok) return fail(ctx.mask(result.text), id);
      return { kind: 'TaskObservation', content: textContent(ctx.mask(result.text)), is_error: false, task_id: id, subagent, status: 'completed' };
    },
  };
}
