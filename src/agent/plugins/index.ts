// The plugins of one conversation (start request `plugins`), public face of src/agent/plugins:
//   ConversationPlugins   fetched and read in the background from the agent's creation on; skills, MCP sources, hook configs
//   fetchPlugin / loadPluginDir / pluginInfo   for the plugins API
// Merge rules (OpenHands load_plugins): skills override by name (later plugin wins), MCP servers
// override by key (plugins after agent.mcp_config), hooks are concatenated after hook_config.
import { rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import type { PluginSource } from '../../api/agent-server/index.ts';
import type { PluginInfo } from '../../api/agent-server/plugins.ts';
import { createLogger } from '../../util/log.ts';
import { loadHookConfigFile, type HookConfig } from '../hooks/index.ts';
import type { McpSource } from '../mcp/index.ts';
import { mergeByName, type Skill } from '../skills/index.ts';
import type { AgentHost } from '../types.ts';
import { loadPluginDir, PluginLoadError, type LoadedPlugin } from './load.ts';
import { fetchPlugin, PluginFetchError, redactUrl } from './source.ts';
import { autoLoading, resolveAutoLoads } from './registered.ts';
import { availablePlugins } from './discovery.ts';

export { checkRepoPath, fetchPlugin, parseSource, PluginFetchError, redactUrl, type FetchedPlugin, type PluginSourceSpec } from './source.ts';
export { availablePlugins, installedPluginMeta, projectPlugins, userPlugins } from './discovery.ts';
export { commandSkill, loadPluginDir, pluginAgent, PluginLoadError, type LoadedPlugin, type PluginAgent } from './load.ts';

const log = createLogger('plugins');

/** At most this many skills from plugins (OpenHands). */
export const MAX_PLUGIN_SKILLS = 100;

/** PluginsResponse item (OpenHands PluginInfo), plus the subagent definitions found (run by the task tool). */
export function pluginInfo(p: LoadedPlugin): PluginInfo {
  return {
    name: p.name,
    version: p.version ?? '',
    description: p.description ?? '',
    path: p.dir,
    skills: p.skills.map((s) => ({ name: s.name, description: s.description })),
    files: p.files,
    agents: p.agents.map((a) => ({ name: a.name, description: a.description, runnable: true })),
  };
}

/** Hook commands may name their scripts by `${CLAUDE_PLUGIN_ROOT}` / `${PLUGIN_ROOT}` (Claude Code plugins); they run in the workspace. */
function withPluginRoot(cfg: HookConfig, dir: string): HookConfig {
  // Raw, so both `${CLAUDE_PLUGIN_ROOT}/x.sh` and `"${CLAUDE_PLUGIN_ROOT}/x.sh"` work (the clone path has no spaces).
  const fill = (c: string) => c.replace(/\$\{(CLAUDE_PLUGIN_ROOT|PLUGIN_ROOT)\}/g, dir);
  return Object.fromEntries(
    Object.entries(cfg).map(([field, matchers]) => [field, (matchers ?? []).map((m) => ({ ...m, hooks: (m.hooks ?? []).map((h) => ({ ...h, command: fill(h.command) })) }))]),
  ) as HookConfig;
}

export class ConversationPlugins {
  readonly plugins: LoadedPlugin[] = [];
  /** Why the plugins could not be loaded; the run reports it (ConversationErrorEvent PluginLoadError). */
  error: string | undefined;
  readonly #cacheDir: string;
  readonly #host: Pick<AgentHost, 'request' | 'workspaceDir' | 'conversationId' | 'userHome'>;
  readonly #abort = new AbortController();
  #loading: Promise<void> | undefined;

  /**
   * The ambient plugins (OpenHands 1.58 LocalConversation): the user's (~/.agents/plugins,
   * ~/.openhands/plugins, the enabled installed ones) and the workspace's, read from disk at the
   * agent's creation; they join the start request's plugins after them, one of a name already
   * attached skipped. A broken one is logged and skipped, never fails the conversation.
   */
  readonly #ambient: LoadedPlugin[];

  constructor(host: Pick<AgentHost, 'request' | 'workspaceDir' | 'conversationId' | 'userHome'>, opts: { cacheDir?: string } = {}) {
    this.#host = host;
    this.#cacheDir = opts.cacheDir ?? join(tmpdir(), `agentyard-plugins-${randomBytes(6).toString('hex')}`);
    this.#ambient = availablePlugins({ loadUser: true, loadProject: true, projectDir: host.workspaceDir, ...(host.userHome !== undefined ? { home: host.userHome } : {}) });
  }

  /** Standalone skills of the auto-loaded marketplaces (lower precedence than every other source). */
  marketplaceSkills: Skill[] = [];
  /** How many of `plugins` (the first ones) the marketplaces auto-loaded, before the start request's. */
  #autoCount = 0;

  /** Whether there is any plugin to load: named by the start request, auto-loaded by a registered marketplace, or ambient. */
  get wanted(): boolean {
    return (this.#host.request.plugins ?? []).length > 0 || (this.#host.request.agent?.agent_context?.registered_marketplaces ?? []).some(autoLoading) || this.#ambient.length > 0;
  }

  /**
   * Fetches (git clone) and reads every plugin of the start request, in order; once, whoever asks
   * first. Never rejects for a bad plugin: see `error`.
   */
  load(): Promise<void> {
    return (this.#loading ??= this.#load());
  }

  async #load(): Promise<void> {
    const host = this.#host;
    await this.#loadAutoLoads();
    const sources: readonly PluginSource[] = host.request.plugins ?? [];
    try {
      for (const [i, src] of sources.entries()) {
        try {
          const fetched = await fetchPlugin(src, { cacheDir: this.#cacheDir, baseDir: host.workspaceDir, signal: this.#abort.signal });
          const plugin = loadPluginDir(fetched.dir);
          this.plugins.push(plugin);
          log.info({ conversationId: host.conversationId, plugin: plugin.name, commit: fetched.commit }, 'plugin loaded');
        } catch (err) {
          // Anything else (an unreadable file) is reported the same way: the agent must still run to say so.
          const why = err instanceof PluginFetchError || err instanceof PluginLoadError ? err.message : `unexpected failure: ${err instanceof Error ? err.message : String(err)}`;
          throw new PluginFetchError(`plugins[${i}] (${redactUrl(src.source)}${src.ref ? `@${src.ref}` : ''}): ${why}`);
        }
      }
      const attached = new Set(this.plugins.map((p) => p.name));
      for (const p of this.#ambient) if (!attached.has(p.name)) this.plugins.push(p);
      if (this.#ambient.length) log.info({ conversationId: host.conversationId, ambient: this.#ambient.map((p) => p.name) }, 'ambient plugins loaded');
    } catch (err) {
      if (!(err instanceof PluginFetchError)) throw err;
      this.error = err.message;
      this.plugins.length = 0;
      this.#autoCount = 0;
      log.warn({ conversationId: host.conversationId, error: err.message }, 'plugins not loaded; the next run reports it');
    }
  }

  /**
   * The registered marketplaces' auto_load (OpenHands LocalConversation): their plugins load first
   * (the start request's come after and win by name), their standalone skills go under every other
   * source. A marketplace, plugin or skill that cannot be had is logged and left out, as OpenHands
   * does: it is the operator's catalog, not a plugin the request named.
   */
  async #loadAutoLoads(): Promise<void> {
    const host = this.#host;
    const regs = (host.request.agent?.agent_context?.registered_marketplaces ?? []).filter(autoLoading);
    if (!regs.length) return;
    const fetchOpts = { cacheDir: this.#cacheDir, baseDir: host.workspaceDir, signal: this.#abort.signal };
    const auto = await resolveAutoLoads(regs, fetchOpts);
    this.marketplaceSkills = auto.skills;
    for (const p of auto.plugins) {
      try {
        const plugin = loadPluginDir((await fetchPlugin(p.source, fetchOpts)).dir);
        this.plugins.push(plugin);
        this.#autoCount++;
        log.info({ conversationId: host.conversationId, marketplace: p.marketplace, plugin: plugin.name }, 'marketplace plugin loaded');
      } catch (err) {
        log.warn({ conversationId: host.conversationId, marketplace: p.marketplace, plugin: p.name, reason: (err as Error).message }, 'marketplace plugin not loaded');
      }
    }
  }

  /** Their skills and commands, later plugins overriding earlier ones by name, at most MAX_PLUGIN_SKILLS. */
  skills(): Skill[] {
    return mergeByName(...this.plugins.map((p) => p.skills)).slice(0, MAX_PLUGIN_SKILLS);
  }

  /** Their MCP servers; `${CLAUDE_PLUGIN_ROOT}` / `${PLUGIN_ROOT}` and the plugin's launch parameters fill placeholders before secrets. */
  mcpSources(request: Pick<AgentHost['request'], 'plugins'>): McpSource[] {
    return this.plugins.flatMap((p, i) => {
      if (!Object.keys(p.mcpServers).length) return [];
      // Marketplace plugins come first and have no launch parameters.
      const params = Object.fromEntries(Object.entries((i >= this.#autoCount ? request.plugins?.[i - this.#autoCount]?.parameters : undefined) ?? {}).map(([k, v]) => [k, String(v)]));
      return [{ origin: `plugin '${p.name}' .mcp.json`, servers: p.mcpServers, vars: { ...params, CLAUDE_PLUGIN_ROOT: p.dir, PLUGIN_ROOT: p.dir } }];
    });
  }

  /**
   * What a conversation without the task tool is told when its plugins ship subagents (agents/*.md):
   * they run only through the task tool (agent.tools naming `task_tool_set`, as in OpenHands), so
   * here they will not. Said in the conversation rather than only logged, so neither the user nor the
   * model counts on them.
   */
  agentsNotice(): string | undefined {
    const agents = this.plugins.flatMap((p) => p.agents.map((a) => `${p.name}:${a.name} (${relative(p.dir, a.source)})`));
    if (!agents.length) return undefined;
    return `Plugin subagents will not run: they run through the task tool, which this conversation does not have (agent.tools does not name task_tool_set), so ${agents.join(', ')} ${agents.length === 1 ? 'is' : 'are'} not available in this conversation. The plugins' skills, commands, hooks and MCP servers are loaded.`;
  }

  /** Their hooks/hooks.json files, in plugin order (throws Invalid naming the file for a bad one). */
  async hookConfigs(): Promise<HookConfig[]> {
    const out: HookConfig[] = [];
    for (const p of this.plugins) {
      if (!p.hooksFile) continue;
      const cfg = await loadHookConfigFile(p.hooksFile);
      if (cfg) out.push(withPluginRoot(cfg, p.dir));
    }
    return out;
  }

  /** Stops a load still running (its git processes) and removes the clones. */
  async close(): Promise<void> {
    this.#abort.abort();
    await this.#loading?.catch(() => undefined);
    rmSync(this.#cacheDir, { recursive: true, force: true });
  }
}
