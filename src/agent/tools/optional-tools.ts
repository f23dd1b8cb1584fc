// Tools attached only when the start request lists them in agent.tools (by tool name or OpenHands
// class name): task_tracker, glob, grep. The default set stays terminal, file_editor, think, finish.
import type { AgentHost } from '../types.ts';
import { globTool } from './glob.ts';
import { grepTool } from './grep.ts';
import { taskTrackerTool } from './task-tracker.ts';
import type { AgentTool } from './tool.ts';

const NAMES: Record<string, string> = { task_tracker: 'task_tracker', tasktrackertool: 'task_tracker', glob: 'glob', globtool: 'glob', grep: 'grep', greptool: 'grep' };

export function optionalTools(host: Pick<AgentHost, 'request' | 'workspaceDir' | 'events'>): AgentTool[] {
  const wanted = new Set((host.request.agent?.tools ?? []).map((t) => NAMES[t.name.toLowerCase()]).filter(Boolean));
  const tools: AgentTool[] = [];
  if (wanted.has('task_tracker')) tools.push(taskTrackerTool(() => host.events()) as AgentTool);
  if (wanted.has('glob')) tools.push(globTool(host.workspaceDir) as AgentTool);
  if (wanted.has('grep')) tools.push(grepTool(host.workspaceDir) as AgentTool);
  return tools;
}
