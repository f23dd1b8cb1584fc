// Sub-agent definitions (OpenHands sdk/subagent): Markdown files with YAML frontmatter, the body
// being the sub-agent's prompt. Found in a plugin's agents/ and in the project's and user's
// `.agents/agents` and `.openhands/agents` (first wins by name: project over user, `.agents` over
// `.openhands`; README.md skipped). POST /api/sub-agents lists them; the task tool runs them.
import { readdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, join } from 'node:path';
import { splitFrontmatter } from './skills/parse.ts';
import { createLogger } from '../util/log.ts';

const log = createLogger('subagents');

export const AGENT_DIRS = ['.agents/agents', '.openhands/agents'] as const;
const SKIP = new Set(['README.md', 'readme.md']);
const KNOWN = new Set(['name', 'description', 'model', 'color', 'tools', 'skills', 'max_iteration_per_run', 'max_budget_per_run', 'hooks', 'profile_store_dir', 'mcp_config', 'mcp_servers', 'permission_mode', 'condenser']);
const PERMISSION_MODES = new Set(['always_confirm', 'never_confirm', 'confirm_risky']);

export type AgentDefinitionLevel = 'project' | 'user' | 'builtin' | 'plugin' | 'programmatic';

/** An agent definition, with the fields OpenHands' SubAgentInfo lists. */
export interface AgentDefinition {
  name: string;
  description: string;
  /** `inherit` (the parent's model) or the model the sub-agent calls. */
  model: string;
  color: string | null;
  tools: string[];
  /** Names of the skills the sub-agent gets (resolved from the project's and user's skills, and the conversation's plugins). */
  skills: string[];
  systemPrompt: string;
  whenToUseExamples: string[];
  permissionMode: string | null;
  maxIterations: number | null;
  maxBudget: number | null;
  mcpConfig: Record<string, unknown> | null;
  profileStoreDir: string | null;
  hooks: Record<string, unknown> | null;
  condenser: Record<string, unknown> | null;
  metadata: Record<string, unknown>;
  level: AgentDefinitionLevel | null;
  /** The file it was read from; null for a built-in. */
  source: string | null;
}

/** `a, b` or a list: tools and skills are written either way. */
function names(v: unknown, split: boolean): string[] {
  const items = typeof v === 'string' ? (split ? v.split(',') : [v]) : Array.isArray(v) ? v.map(String) : [];
  return items.map((t) => t.trim()).filter(Boolean);
}

const obj = (v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null);

/** One definition file. Throws for a file OpenHands refuses too (bad permission_mode, bad mcp_config). */
export function parseAgentDefinition(path: string, level: AgentDefinitionLevel | null = null): AgentDefinition {
  const { meta, body } = splitFrontmatter(readFileSync(path, 'utf8'));
  const description = meta['description'] == null ? '' : String(meta['description']);
  const mode = meta['permission_mode'] == null ? null : String(meta['permission_mode']).trim().toLowerCase();
  if (mode !== null && !PERMISSION_MODES.has(mode)) throw new Error(`Invalid permission_mode '${String(meta['permission_mode'])}'. Must be one of: ${[...PERMISSION_MODES].sort().join(', ')}`);
  const mcpRaw = meta['mcp_config'] ?? meta['mcp_servers'];
  if (mcpRaw != null && !obj(mcpRaw)) throw new Error('mcp_config must be a mapping of server names to configs');
  const max = Number(meta['max_iteration_per_run']);
  const budget = typeof meta['max_budget_per_run'] === 'boolean' ? NaN : Number(meta['max_budget_per_run']);
  const condenser = meta['condenser'];
  return {
    name: meta['name'] == null ? basename(path, '.md') : String(meta['name']),
    description,
    model: meta['model'] == null ? 'inherit' : String(meta['model']),
    color: meta['color'] == null ? null : String(meta['color']),
    // OpenHands takes a `tools:` string as one tool; Claude Code agent files write `a, b`: both work here.
    tools: names(meta['tools'], true),
    skills: names(meta['skills'], true),
    systemPrompt: body.trim(),
    whenToUseExamples: [...description.matchAll(/<example>([\s\S]*?)<\/example>/gi)].map((m) => m[1]!.trim()).filter(Boolean),
    permissionMode: mode,
    maxIterations: meta['max_iteration_per_run'] != null && Number.isInteger(max) && max > 0 ? max : null,
    maxBudget: meta['max_budget_per_run'] != null && Number.isFinite(budget) && budget > 0 ? budget : null,
    mcpConfig: obj(mcpRaw),
    profileStoreDir: meta['profile_store_dir'] == null ? null : String(meta['profile_store_dir']),
    hooks: obj(meta['hooks']),
    condenser: obj(condenser) ?? (condenser === false || (typeof condenser === 'string' && /^(none|off|false|no|disabled?)$/i.test(condenser.trim())) ? { kind: 'NoOpCondenser' } : null),
    metadata: Object.fromEntries(Object.entries(meta).filter(([k]) => !KNOWN.has(k))),
    level,
    source: path,
  };
}

/** The definitions directly in `dir` (sorted; a broken file is logged and skipped, as OpenHands does). */
export function loadAgentsDir(dir: string, level: AgentDefinitionLevel | null = null): AgentDefinition[] {
  let files: string[];
  try {
    files = readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isFile() && e.name.endsWith('.md') && !SKIP.has(e.name))
      .map((e) => e.name)
      .sort();
  } catch {
    return [];
  }
  const out: AgentDefinition[] = [];
  for (const f of files) {
    try {
      out.push(parseAgentDefinition(join(dir, f), level));
    } catch (err) {
      log.warn({ file: join(dir, f), error: (err as Error).message }, 'agent definition skipped');
    }
  }
  return out;
}

function firstWins(dirs: string[], level: AgentDefinitionLevel): AgentDefinition[] {
  const seen = new Set<string>();
  return dirs.flatMap((d) => loadAgentsDir(d, level)).filter((a) => !seen.has(a.name) && (seen.add(a.name), true));
}

export const projectAgents = (projectDir: string) => firstWins(AGENT_DIRS.map((d) => join(projectDir, d)), 'project');
export const userAgents = (home = homedir()) => firstWins(AGENT_DIRS.map((d) => join(home, d)), 'user');

/** OpenHands discover_agents: project over user, first wins by name. */
export function discoverAgents(projectDir: string | null, o: { project?: boolean; user?: boolean } = {}): AgentDefinition[] {
  const found = [...(projectDir && o.project !== false ? projectAgents(projectDir) : []), ...(o.user !== false ? userAgents() : [])];
  const seen = new Set<string>();
  return found.filter((a) => !seen.has(a.name) && (seen.add(a.name), true));
}

const builtin = (name: string, description: string, tools: string[], systemPrompt: string): AgentDefinition => ({
  name, description, model: 'inherit', color: null, tools, skills: [], systemPrompt, whenToUseExamples: [], permissionMode: null, maxIterations: null, maxBudget: null,
  mcpConfig: null, profileStoreDir: null, hooks: null, condenser: null, metadata: {}, level: 'builtin', source: null,
});

/**
 * The built-in agents, under OpenHands' names so that a model (or client) asking for one finds it;
 * the prompts are this server's own. OpenHands' browser-only web-researcher is not among them: this
 * agent server has no browser.
 */
export const BUILTIN_AGENTS: readonly AgentDefinition[] = [
  builtin('bash-runner', 'Runs shell commands (tests, builds, linters, git) and reports what matters: pass/fail counts, the failures and their reasons, never raw output.', ['terminal'],
    'You run shell commands for the agent that delegated to you; it sees only your final answer, not the terminal. Report concisely: for test runs the counts and each failure with its reason, for builds and installs whether they worked and the first real error. Never paste long raw output.'),
  builtin('code-explorer', 'Explores unfamiliar code before changes are made, read-only, and answers with file paths, line numbers and short snippets.', ['terminal'],
    'You explore a codebase for the agent that delegated to you, with read-only commands only (ls, find, grep, cat, sed -n, git log/show/diff/blame): never create, change, move or delete a file, and never run builds or installs. Answer with a structured summary naming files, line numbers and the snippets that matter.'),
  builtin('general-purpose', 'A general-purpose sub-agent: reads, writes and edits code, runs shell commands and tracks its tasks; for work that needs several of these or fits no specialised agent.', ['terminal', 'file_editor', 'task_tracker'],
    'You are a general-purpose agent working for the agent that delegated to you: read and change code, run commands, and track your steps until the task is done. Finish with a short report: what you did, what changed (files, tests, errors), and what is still open.'),
];

/** SubAgentInfo, as POST /api/sub-agents answers it. */
export function subAgentInfo(a: AgentDefinition) {
  return {
    name: a.name,
    description: a.description,
    model: a.model,
    color: a.color,
    tools: a.tools,
    skills: a.skills,
    system_prompt: a.systemPrompt,
    when_to_use_examples: a.whenToUseExamples,
    permission_mode: a.permissionMode,
    max_iteration_per_run: a.maxIterations,
    max_budget_per_run: a.maxBudget,
    mcp_config: a.mcpConfig,
    mcp_servers: a.mcpConfig,
    profile_store_dir: a.profileStoreDir,
    hooks: a.hooks,
    condenser: a.condenser,
    metadata: a.metadata,
    level: a.level,
    source: a.source,
    is_builtin: a.level === 'builtin',
  };
}
