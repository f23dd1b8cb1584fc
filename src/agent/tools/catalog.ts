// The tools this agent can be given, by the names a start request uses in `agent.tools` (and the
// agent shows the model). Listed by /server_info `usable_tools` and GET /api/tools/. MCP tools are
// left out on purpose: they come from each conversation's own MCP configuration and plugins, so no
// server-wide list can name them (a conversation's SystemPromptEvent lists the tools it really has).
import { BROWSER_TOOL_NAMES } from './browser/tools.ts';

/** Always offered to the model. */
const BUILT_IN = ['terminal', 'file_editor', 'think', 'finish'];
/** Offered when the start request names them in agent.tools. */
const ON_REQUEST = ['task_tracker', 'glob', 'grep', 'task_tool_set'];
/** Offered when the conversation has skills to invoke. */
const WITH_SKILLS = ['invoke_skill'];

/**
 * `browser`: whether a Chromium was found for the browser tools. Without one they are not listed
 * (a request for them still gets them, and each call answers that no browser is available).
 */
export function toolCatalog(opts: { browser: boolean }): string[] {
  return [...BUILT_IN, ...ON_REQUEST, ...WITH_SKILLS, ...(opts.browser ? ['browser_tool_set', ...BROWSER_TOOL_NAMES] : [])];
}
