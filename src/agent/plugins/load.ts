// Reading a plugin directory (Claude Code compatible layout, OpenHands plugin/loader.py):
//   .plugin/plugin.json | .claude-plugin/plugin.json   manifest: name, version, description, ...
//   skills/            SKILL.md skills (loaded by src/agent/skills)
//   commands/*.md      keyword-triggered skills "/<plugin>:<command>"
//   agents/*.md        subagent definitions, run by the task tool (tools/task.ts) when agent.tools names task_tool_set
//   hooks/hooks.json   hook configuration (loaded by src/agent/hooks when the run starts)
//   .mcp.json          {"mcpServers": {...}}
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { loadSkillsDirSync } from '../skills/load.ts';
import { splitFrontmatter } from '../skills/parse.ts';
import { parseAgentDefinition, type AgentDefinition } from '../subagent-definitions.ts';
import type { Skill } from '../skills/index.ts';
import { McpConfigError, serversOf, type McpServers } from '../mcp/config.ts';

/** A plugin directory that cannot be used (bad manifest, bad .mcp.json). */
export class PluginLoadError extends Error {}

export interface PluginAgent {
  name: string;
  description: string | null;
  /** The file it was read from. */
  source: string;
  /** Its system prompt: the file's body, added to the sub-agent's system message (OpenHands' system_message_suffix). */
  prompt: string;
  /** `tools:` of its frontmatter (tool names as agent.tools takes them); empty: the default tools. */
  tools: string[];
  /** `max_iteration_per_run:` (else the parent conversation's limit). */
  maxIterations: number | null;
  /** `model:`: `inherit` (the parent's model) or the model the sub-agent calls. */
  model: string;
  /** `skills:`: the names of the skills the sub-agent gets. */
  skills: string[];
}

export interface LoadedPlugin {
  name: string;
  version: string | null;
  description: string | null;
  dir: string;
  skills: Skill[];
  /** `hooks/hooks.json` when present (read when the run starts). */
  hooksFile: string | null;
  mcpServers: McpServers;
  agents: PluginAgent[];
  /** Files of the plugin, relative to its directory (PluginsResponse.files). */
  files: string[];
}

const MANIFESTS = ['.plugin/plugin.json', '.claude-plugin/plugin.json'];
const MAX_FILES = 500;

function readJson(path: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new PluginLoadError(`${what} is not valid JSON: ${(err as Error).message}`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new PluginLoadError(`${what} must be a JSON object`);
  return value as Record<string, unknown>;
}

const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() ? v.trim() : null);

/** Markdown files directly in a directory, sorted (commands/, agents/). */
function markdownFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.md') && statSync(join(dir, f)).isFile())
    .sort()
    .map((f) => join(dir, f));
}

/** A command file as OpenHands turns it into a skill: trigger `/<plugin>:<command>`, `$ARGUMENTS` hint kept. */
export function commandSkill(plugin: string, path: string): Skill {
  const { meta, body } = splitFrontmatter(readFileSync(path, 'utf8'));
  const command = basename(path, '.md');
  const description = str(meta.description);
  const hint = str(meta['argument-hint'] ?? meta.argument_hint);
  const content = [description ? `## ${command}\n\n${description}\n` : '', hint ? `**Arguments**: \`$ARGUMENTS\` - ${hint}\n` : '', body.trim() ? `\n${body.trim()}` : '']
    .filter(Boolean)
    .join('\n')
    .trim();
  return {
    name: `${plugin}:${command}`,
    type: 'knowledge',
    content,
    triggers: [`/${plugin}:${command}`],
    source: path,
    description: description ?? `Command ${command} from ${plugin}`,
    is_agentskills_format: false,
    disable_model_invocation: false,
    root: null,
    origin: `plugin:${plugin}`,
  };
}

function listFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (out.length >= MAX_FILES) return;
      if (e.name === '.git') continue;
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.push(relative(dir, p));
    }
  };
  walk(dir);
  return out;
}

/** A definition as the task tool runs it (plugin, project and user definitions alike). */
export function pluginAgent(def: AgentDefinition): PluginAgent {
  return {
    name: def.name,
    description: def.description || null,
    source: def.source ?? `builtin:${def.name}`,
    prompt: def.systemPrompt,
    tools: def.tools,
    maxIterations: def.maxIterations,
    model: def.model,
    skills: def.skills,
  };
}

/** Reads one plugin directory. Throws PluginLoadError for a broken manifest or MCP file. */
export function loadPluginDir(dir: string): LoadedPlugin {
  const manifestPath = MANIFESTS.map((m) => join(dir, m)).find((p) => existsSync(p));
  const manifest = manifestPath ? readJson(manifestPath, relative(dir, manifestPath)) : {};
  const name = str(manifest.name) ?? basename(dir);
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)) throw new PluginLoadError(`plugin name '${name}' may contain only letters, digits, '.', '_' and '-'`);
  const origin = `plugin:${name}`;

  const skills = [...loadSkillsDirSync(join(dir, 'skills'), origin), ...markdownFiles(join(dir, 'commands')).map((p) => commandSkill(name, p))];

  const agents = markdownFiles(join(dir, 'agents')).map((p): PluginAgent => {
    let def;
    try {
      def = parseAgentDefinition(p, 'plugin');
    } catch (err) {
      throw new PluginLoadError(`${relative(dir, p)}: ${(err as Error).message}`);
    }
    return pluginAgent(def);
  });

  let mcpServers: McpServers = {};
  try {
    // Claude Code also allows servers inline in the manifest; .mcp.json wins by name.
    if (manifest.mcpServers && typeof manifest.mcpServers === 'object') mcpServers = serversOf({ mcpServers: manifest.mcpServers }, 'plugin.json');
    const mcpFile = join(dir, '.mcp.json');
    if (existsSync(mcpFile)) mcpServers = { ...mcpServers, ...serversOf(readJson(mcpFile, '.mcp.json'), '.mcp.json') };
  } catch (err) {
    if (err instanceof McpConfigError) throw new PluginLoadError(err.message);
    throw err;
  }

  const hooksFile = join(dir, 'hooks', 'hooks.json');
  return {
    name,
    version: str(manifest.version),
    description: str(manifest.description),
    dir,
    skills,
    hooksFile: existsSync(hooksFile) ? hooksFile : null,
    mcpServers,
    agents,
    files: listFiles(dir),
  };
}
