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

/** The tools a client may offer for `agent.tools` (GET /api/tools/catalog), as OpenHands 1.58 lists them. */
export interface CatalogEntry {
  name: string;
  user_selectable: boolean;
  usable: boolean;
  description: string;
  in_default_set: boolean;
}

/**
 * Built-ins (think, finish, invoke_skill) are not listed: every agent has them, so there is nothing
 * to choose, as in OpenHands. An agent that names no tools gets the terminal and the file editor
 * (src/agent/toolbox.ts). The browser tool set is listed either way, `usable` saying whether a
 * Chromium is there to drive.
 */
export function toolCatalogEntries(opts: { browser: boolean }): CatalogEntry[] {
  const entry = (name: string, description: string, o: { usable?: boolean; inDefault?: boolean } = {}): CatalogEntry => ({ name, user_selectable: true, usable: o.usable ?? true, description, in_default_set: o.inDefault ?? false });
  return [
    entry('terminal', 'Run shell commands in a persistent terminal session.', { inDefault: true }),
    entry('file_editor', 'View, create and edit files.', { inDefault: true }),
    entry('task_tracker', 'Keep a running task list to organise multi-step work.'),
    entry('glob', 'Find files by name pattern, such as **/*.ts.'),
    entry('grep', 'Search file contents with regular expressions.'),
    entry('task_tool_set', 'Delegate a self-contained sub-task to a separate agent.'),
    entry('browser_tool_set', 'Browse the web: navigate pages, click, type and read content.', { usable: opts.browser }),
  ];
}
