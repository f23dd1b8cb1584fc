// `task_tracker`: the model's plan for the task (OpenHands tools/task_tracker). The list lives in
// the conversation itself: the latest successful `plan` observation is the current list, so a
// restarted or forked conversation continues with the same plan and nothing is written to disk.
import type { Event, TaskItem, TaskTrackerAction, TaskTrackerObservation } from '../../api/events/index.ts';
import { textContent, ToolArgumentError, type AgentTool } from './tool.ts';

const DESCRIPTION = `Keep a structured task list for work with several steps, to stay organised and show the user the progress.

Use it for tasks of three or more steps, when the user gives several things to do or asks for a plan, and whenever new sub-tasks come up; skip it for a single simple step or a purely informational question.

Commands:
* \`view\` shows the current list. Always view it before changing it.
* \`plan\` replaces the whole list with \`task_list\` (send every task, not only the changed ones).

Each task has a short \`title\`, optional \`notes\` and a \`status\`: \`todo\`, \`in_progress\` (at most one at a time) or \`done\`. Mark a task in_progress before starting it and done as soon as it is completely finished (not when tests fail or work is partial); add follow-up tasks when you find more to do.`;

const STATUSES = ['todo', 'in_progress', 'done'] as const;
const ICON: Record<string, string> = { todo: '⏳', in_progress: '🔄', done: '✅' };

function parseTasks(v: unknown): TaskItem[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new ToolArgumentError("Parameter 'task_list' must be a list of tasks");
  return v.map((t, i) => {
    if (!t || typeof t !== 'object' || Array.isArray(t)) throw new ToolArgumentError(`task_list[${i}] must be an object with title, notes and status`);
    const { title, notes, status, ...rest } = t as Record<string, unknown>;
    if (typeof title !== 'string' || !title) throw new ToolArgumentError(`task_list[${i}].title is required and must be a string`);
    if (notes != null && typeof notes !== 'string') throw new ToolArgumentError(`task_list[${i}].notes must be a string`);
    if (status != null && !STATUSES.includes(status as (typeof STATUSES)[number])) throw new ToolArgumentError(`task_list[${i}].status must be one of ${STATUSES.join(', ')}`);
    if (Object.keys(rest).length) throw new ToolArgumentError(`task_list[${i}] has unknown fields: ${Object.keys(rest).join(', ')}`);
    return { title, notes: (notes as string | null | undefined) ?? '', status: (status as TaskItem['status']) ?? 'todo' };
  });
}

/** The list the last successful `plan` set, or [] before any. */
export function currentTasks(events: readonly Event[]): TaskItem[] {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.kind !== 'ObservationEvent') continue;
    const o = e.observation;
    if (o.kind === 'TaskTrackerObservation' && o.command === 'plan' && !o.is_error) return o.task_list ?? [];
  }
  return [];
}

export function formatTasks(tasks: readonly TaskItem[]): string {
  if (!tasks.length) return 'No tasks in the list.';
  return ['# Task List', '', ...tasks.map((t, i) => `${i + 1}. ${ICON[t.status ?? 'todo']} ${t.title}${t.notes ? `\n   ${t.notes}` : ''}\n`)].join('\n').trim();
}

export function taskTrackerTool(events: () => readonly Event[]): AgentTool<TaskTrackerAction> {
  return {
    name: 'task_tracker',
    definitionKind: 'TaskTrackerTool',
    actionKind: 'TaskTrackerAction',
    observationKind: 'TaskTrackerObservation',
    description: DESCRIPTION,
    parameters: {
      type: 'object',
      properties: {
        command: { type: 'string', enum: ['view', 'plan'], description: 'view shows the current task list; plan replaces it with task_list. View the list before changing it.' },
        task_list: {
          type: 'array',
          description: 'The full task list. Required for plan.',
          items: {
            type: 'object',
            properties: {
              title: { type: 'string', description: 'A short title for the task.' },
              notes: { type: 'string', description: 'Details or notes about the task.' },
              status: { type: 'string', enum: [...STATUSES], description: 'todo (not started), in_progress (being worked on) or done (finished).' },
            },
            required: ['title'],
          },
        },
      },
      required: ['command'],
    },
    toAction(args) {
      const command = args['command'] ?? 'view';
      if (command !== 'view' && command !== 'plan') throw new ToolArgumentError(`Unknown command: ${String(command)}. Supported commands are "view" and "plan".`);
      return { kind: 'TaskTrackerAction', command, task_list: parseTasks(args['task_list']) };
    },
    // It changes only the conversation's own plan.
    readOnly: true,
    async execute(action): Promise<TaskTrackerObservation> {
      if (action.command === 'plan') {
        const tasks = action.task_list ?? [];
        return { kind: 'TaskTrackerObservation', content: textContent(`Task list has been updated with ${tasks.length} item(s).`), is_error: false, command: 'plan', task_list: tasks };
      }
      const tasks = currentTasks(events());
      const text = tasks.length ? formatTasks(tasks) : 'No task list found. Use the "plan" command to create one.';
      return { kind: 'TaskTrackerObservation', content: textContent(text), is_error: false, command: 'view', task_list: tasks };
    },
  };
}
