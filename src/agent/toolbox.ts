// The tools of one agent and the sessions behind them: the built-in tools (terminal with its
// persistent shell, file editor, think, finish, the browser when asked for, the optional ones),
// the skills' tools (invoke_skill, also once plugins bring the first AgentSkills) and the MCP
// servers' tools, connected at a run's start and let go when it is aborted.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConversationMcp, type McpSource } from './mcp/index.ts';
import type { ConversationSkills } from './skills/conversation.ts';
import { BrowserSession } from './tools/browser/session.ts';
import { browserTools, wantsBrowser } from './tools/browser/tools.ts';
import { fileEditorTool } from './tools/file-editor.ts';
import { optionalTools } from './tools/optional-tools.ts';
import { finishTool, thinkTool } from './tools/simple-tools.ts';
import { TerminalSession, type TerminalSessionOptions } from './tools/terminal-session.ts';
import { terminalTool } from './tools/terminal.ts';
import type { AgentTool } from './tools/tool.ts';
import type { AgentHost } from './types.ts';

export interface ToolboxOptions {
  terminal?: TerminalSessionOptions;
  /** Where full texts of capped terminal outputs go (outside the workspace). Default: a temp dir per agent, removed by close(). */
  outputDir?: string;
}

/**
 * The terminal and the file editor, when `agent.tools` names them (by tool name or OpenHands class
 * name): as in OpenHands, the model is offered exactly the tools named, plus the built-ins think and
 * finish (and invoke_skill when skills need it). No list, or an empty one, means both: OpenHands would
 * offer only think and finish then, an agent that can do nothing, and the controller starts agents
 * without naming tools.
 */
function namedTools(tools: readonly { name: string }[] | undefined): Set<'terminal' | 'file_editor'> {
  if (!tools?.length) return new Set(['terminal', 'file_editor']);
  const out = new Set<'terminal' | 'file_editor'>();
  for (const { name } of tools) {
    const n = name.toLowerCase();
    if (n === 'terminal' || n === 'terminaltool' || n === 'bash' || n === 'bashtool') out.add('terminal');
    if (n === 'file_editor' || n === 'fileeditortool') out.add('file_editor');
  }
  return out;
}

export class Toolbox {
  /** What the model is offered, in this order; MCP and skill tools are added as they come. */
  readonly tools: AgentTool[];
  #terminal: TerminalSession | undefined;
  #browser: BrowserSession | undefined;
  #ownOutputDir: string | undefined;
  /** MCP servers: connected at a run's start, closed when a run is aborted (pause, interrupt, delete) or the agent closes. */
  readonly #mcp: ConversationMcp;

  constructor(host: AgentHost, opts: ToolboxOptions, skills: ConversationSkills) {
    this.#mcp = new ConversationMcp({ cwd: host.workspaceDir, secrets: () => host.secrets, oauth: host.mcpOAuth });
    const named = namedTools(host.request.agent?.tools);
    this.tools = [
      ...(named.has('terminal')
        ? [
            terminalTool({
              session: () => (this.#terminal ??= new TerminalSession(host.workspaceDir, opts.terminal)),
              secrets: () => host.secrets,
              outputDir: () => opts.outputDir ?? (this.#ownOutputDir ??= join(tmpdir(), `agentyard-outputs-${randomBytes(6).toString('hex')}`)),
            }),
          ]
        : []),
      ...(named.has('file_editor') ? [fileEditorTool()] : []),
      // 1.58's order of its built-ins (the critic's trace lists the tools in this order).
      finishTool,
      thinkTool,
      ...(wantsBrowser(host.request.agent?.tools) ? browserTools(() => (this.#browser ??= new BrowserSession(undefined, host.persistenceDir ? { recordingsDir: join(host.persistenceDir, 'browser_recordings') } : {}))) : []),
      ...optionalTools(host),
      ...skills.tools(),
    ];
  }

  /**
   * Opens the MCP servers of `sources` unless they are open, their tools replacing those of an
   * earlier connection (a built-in tool keeps its name: an MCP tool of the same name is left out).
   * Throws McpConfigError / McpConnectError. A run aborted afterwards lets the servers go.
   */
  async connectMcp(sources: () => McpSource[], signal: AbortSignal): Promise<void> {
    if (this.#mcp.connected) return;
    const list = sources();
    if (list.length === 0) return;
    const tools = await this.#mcp.connect(list, signal);
    for (let i = this.tools.length - 1; i >= 0; i--) if (this.tools[i]!.definitionKind === 'MCPToolDefinition') this.tools.splice(i, 1);
    this.tools.push(...tools.filter((t) => !this.tools.some((b) => b.name === t.name)));
    // A paused or interrupted run lets its servers go; the next run opens them again.
    signal.addEventListener('abort', () => void this.#mcp.close(), { once: true });
  }

  async closeMcp(): Promise<void> {
    await this.#mcp.close();
  }

  /** The shell, the browser and the output files. */
  async close(): Promise<void> {
    await this.#terminal?.close();
    this.#terminal = undefined;
    await this.#browser?.close();
    this.#browser = undefined;
    if (this.#ownOutputDir) rmSync(this.#ownOutputDir, { recursive: true, force: true });
    this.#ownOutputDir = undefined;
  }
}
