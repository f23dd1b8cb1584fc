// One ACP server process and the session it serves: spawn (stdio), initialize, session/new, the
// session mode and the model; then prompts, cancel, live model switches, and the end of it.
// The Agent Client Protocol SDK is imported lazily: only a conversation or a discovery that uses an
// ACP agent pays for it (start-up loads nothing of it; metrics.test.ts checks heavy modules).
import { spawn, type ChildProcess } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import type { ClientConnection, PromptResponse, SessionUpdate, NewSessionResponse, ContentBlock, McpServer } from '@agentclientprotocol/sdk';
import type { AcpModelInfo } from '../../api/agent-server/index.ts';
import { maskSecrets } from '../secrets.ts';
import { detectProvider, type AcpProvider } from './providers.ts';

/** Failure codes as OpenHands 1.58 reports a failed start (ConversationErrorEvent.code, discovery's error.code). */
export type AcpStartErrorCode = 'ACPAuthRequired' | 'ACPStartupTimeout' | 'ACPSpawnError' | 'ACPInitError';

export class AcpStartError extends Error {
  readonly code: AcpStartErrorCode;
  constructor(code: AcpStartErrorCode, detail: string) {
    super(detail);
    this.code = code;
  }
}

/** A prompt or a model switch the server refused or did not answer. */
export class AcpRequestError extends Error {
  readonly code: string;
  constructor(code: string, detail: string) {
    super(detail);
    this.code = code;
  }
}

export interface AcpLaunch {
  /** The resolved command (providers.ts resolveAcpCommand), then `args`. */
  command: string[];
  args: string[];
  /** The session's working directory (the conversation's workspace). */
  cwd: string;
  /** The whole environment of the process: a sandbox base and the conversation's credentials, nothing of the agent server's. */
  env: Record<string, string>;
  /** `acp_server`, when the request named one. */
  server: string | null;
  mode: string | null;
  model: string | null;
  startupTimeoutMs: number;
  /** The conversation's MCP servers, for session/new (remote ones only where the server advertises their transport). */
  mcpServers: McpServer[];
  /** Values masked out of any text that leaves this module (error details from the server's stderr). */
  secrets: readonly string[];
  /**
   * A session this conversation had on an earlier server process (1.58: agent_state's acp_session_id,
   * kept across agent-server restarts): loaded with session/load instead of a new one, so the server
   * keeps its context. `viaConfigOption`: how that session switched models, for a load response
   * without a model block.
   */
  resume?: { sessionId: string; viaConfigOption: boolean } | null;
}

/** Why a session to resume was not resumed (a fresh session was started instead). */
export interface AcpResumeFailure {
  sessionId: string;
  reason: string;
}

export interface AcpModels {
  currentModelId: string | null;
  /** null: the server reported no model list (distinct from an empty one). */
  availableModels: AcpModelInfo[] | null;
}

const STDERR_KEEP = 4000;

/** An ACP error's text as the JSON-RPC error carries it (message and data). */
export function acpErrorText(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const data = (e as { data?: unknown }).data;
  const extra = data === undefined || data === null ? '' : typeof data === 'string' ? data : JSON.stringify(data);
  return extra ? `${e.message}: ${extra}` : e.message;
}

function indicatesAuth(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  if (code === -32000) return true;
  return /\b(401|403)\b|unauthori[sz]ed|authenticat(e|ion) required|invalid api key/i.test(acpErrorText(e));
}

/** The models a session/new (or session/load) response reports, and which call switches them. */
function sessionModels(res: NewSessionResponse, defaultViaConfigOption = false): AcpModels & { viaConfigOption: boolean } {
  const option = (res.configOptions ?? []).find((o) => o.type === 'select' && (o.category === 'model' || o.id === 'model'));
  if (option && option.type === 'select') {
    const flat = (option.options as unknown[]).flatMap((o) => ((o as { options?: unknown[] }).options ?? [o]) as { value?: unknown; name?: unknown; description?: unknown }[]);
    return {
      currentModelId: typeof option.currentValue === 'string' ? option.currentValue : null,
      availableModels: flat.map((o) => modelInfo(o.value, o.name, o.description)),
      viaConfigOption: true,
    };
  }
  const models = (res as { models?: { currentModelId?: unknown; availableModels?: unknown } }).models;
  if (models && typeof models === 'object') {
    const list = Array.isArray(models.availableModels) ? (models.availableModels as { modelId?: unknown; name?: unknown; description?: unknown }[]) : [];
    return {
      currentModelId: typeof models.currentModelId === 'string' ? models.currentModelId : null,
      availableModels: list.map((m) => modelInfo(m.modelId, m.name, m.description)),
      viaConfigOption: false,
    };
  }
  return { currentModelId: null, availableModels: null, viaConfigOption: defaultViaConfigOption };
}

function modelInfo(id: unknown, name: unknown, description: unknown): AcpModelInfo {
  return { model_id: typeof id === 'string' ? id : '', name: typeof name === 'string' ? name : null, description: typeof description === 'string' ? description : null };
}

export class AcpSession {
  readonly #child: ChildProcess;
  readonly #conn: ClientConnection;
  readonly #launch: AcpLaunch;
  readonly sessionId: string;
  readonly agentName: string;
  readonly agentVersion: string;
  readonly provider: AcpProvider | undefined;
  #models: AcpModels;
  /** The model is switched with session/set_config_option (else session/set_model). */
  readonly viaConfigOption: boolean;
  /** The session is `launch.resume`'s, loaded (the server kept its context). */
  readonly resumed: boolean;
  /** `launch.resume` was asked for and could not be loaded: why (a fresh session serves instead). */
  readonly resumeFailure: AcpResumeFailure | null;
  #stderr: { text: string };
  #closed = false;

  private constructor(init: { child: ChildProcess; conn: ClientConnection; launch: AcpLaunch; sessionId: string; agentName: string; agentVersion: string; models: AcpModels; viaConfigOption: boolean; resumed: boolean; resumeFailure: AcpResumeFailure | null; stderr: { text: string } }) {
    this.#child = init.child;
    this.#conn = init.conn;
    this.#launch = init.launch;
    this.sessionId = init.sessionId;
    this.agentName = init.agentName;
    this.agentVersion = init.agentVersion;
    this.provider = detectProvider(init.launch.server, init.launch.command, init.agentName);
    this.#models = init.models;
    this.viaConfigOption = init.viaConfigOption;
    this.resumed = init.resumed;
    this.resumeFailure = init.resumeFailure;
    this.#stderr = init.stderr;
  }

  get models(): AcpModels {
    return this.#models;
  }

  get supportsModelSwitch(): boolean {
    return this.provider?.supportsModelSwitch ?? false;
  }

  /** The process ended or was closed: the session cannot serve another turn. */
  get closed(): boolean {
    return this.#closed || this.#child.exitCode !== null || this.#child.signalCode !== null;
  }

  /**
   * Starts the server and a session on it. Every update the server sends for the session goes to
   * `onUpdate` (also those of later prompts). Throws AcpStartError.
   */
  static async start(launch: AcpLaunch, onUpdate: (update: SessionUpdate) => void): Promise<AcpSession> {
    const acp = await import('@agentclientprotocol/sdk');
    const [file, ...rest] = launch.command;
    if (!file) throw new AcpStartError('ACPSpawnError', 'The ACP command is empty');
    const stderr = { text: '' };
    // Its own process group: the server's children (tools, MCP servers) end with it.
    const child = spawn(file, [...rest, ...launch.args], { cwd: launch.cwd, env: launch.env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      stderr.text = (stderr.text + d).slice(-STDERR_KEEP);
    });
    const spawned = new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', reject);
    });
    const mask = (t: string) => maskSecrets(t, launch.secrets);
    const fail = (code: AcpStartErrorCode, detail: string): never => {
      killGroup(child);
      throw new AcpStartError(code, mask(detail));
    };
    try {
      await spawned;
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      return fail('ACPSpawnError', `Cannot start the ACP server ${JSON.stringify(file)}: ${err.code === 'ENOENT' ? 'command not found' : err.message}`);
    }
    let session: string | undefined;
    const conn = acp
      .client()
      .onNotification('session/update', (c) => {
        if (session === undefined || c.params.sessionId === session) onUpdate(c.params.update);
      })
      // Headless: nobody to ask, so the first option (allow) is taken, as OpenHands does.
      .onRequest('session/request_permission', (c) => {
        const first = c.params.options[0];
        return first ? { outcome: { outcome: 'selected', optionId: first.optionId } } : { outcome: { outcome: 'cancelled' } };
      })
      .connect(acp.ndJsonStream(Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>));
    const exited = new Promise<never>((_, reject) => child.once('exit', (code, signal) => reject(new Error(`The ACP server exited (${signal ?? `code ${code}`}) during start-up${stderr.text ? `: ${stderr.text.trim().slice(-1000)}` : ''}`))));
    exited.catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(Object.assign(new Error(`The ACP server did not start within ${launch.startupTimeoutMs / 1000}s`), { timeout: true })), launch.startupTimeoutMs);
    });
    try {
      const started = await Promise.race([
        (async () => {
          const init = await conn.agent.request('initialize', { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false } });
          const agentName = init.agentInfo?.name ?? '';
          const agentVersion = init.agentInfo?.version ?? '';
          // 1.58 forwards stdio servers always, http/sse ones only when the server says it speaks them.
          const caps = init.agentCapabilities?.mcpCapabilities;
          const mcpServers = launch.mcpServers.filter((m) => !('type' in m) || (m.type === 'sse' ? caps?.sse : caps?.http) === true);
          const provider = detectProvider(launch.server, launch.command, agentName);
          // Resume (1.58 _start_acp_server): session/load of the earlier session, with the same cwd and
          // MCP servers (a loaded session does not keep them). The server answering with an error
          // (it forgot the session: storage wiped, another host) falls back to a new session; a broken
          // connection does not (nothing to fall back on). Unlike 1.58, a server that does not
          // advertise loadSession is not asked (the protocol makes the capability the condition).
          let loaded: NewSessionResponse | undefined;
          let resumeFailure: AcpResumeFailure | null = null;
          if (launch.resume) {
            const { sessionId, viaConfigOption } = launch.resume;
            if (init.agentCapabilities?.loadSession !== true) {
              resumeFailure = { sessionId, reason: `${agentName || 'the ACP server'} does not advertise loadSession` };
            } else {
              session = sessionId;
              try {
                const res = await conn.agent.request('session/load', { sessionId, cwd: launch.cwd, mcpServers });
                loaded = { ...res, sessionId };
              } catch (e) {
                if (!(e instanceof acp.RequestError)) throw e;
                session = undefined;
                resumeFailure = { sessionId, reason: mask(`session/load failed: ${acpErrorText(e)}`) };
              }
            }
          }
          const res = loaded ?? (await conn.agent.request('session/new', { cwd: launch.cwd, mcpServers }));
          session = res.sessionId;
          // A load response often omits the model block: the recorded mechanism then says how the session switches.
          const models = sessionModels(res, loaded ? launch.resume!.viaConfigOption : false);
          let current = models.currentModelId;
          if (launch.model && !loaded) {
            await setModel(conn, res.sessionId, launch.model, models.viaConfigOption);
            current = launch.model;
          } else if (launch.model && (provider?.supportsModelSwitch ?? true)) {
            // A loaded session runs the server's default model: the conversation's is applied again; a
            // refusal keeps the resumed session (1.58 _reapply_session_model_on_resume).
            current = await setModel(conn, res.sessionId, launch.model, models.viaConfigOption).then(
              () => launch.model,
              (e: unknown) => {
                if (!(e instanceof acp.RequestError)) throw e;
                return current;
              },
            );
          }
          const mode = launch.mode ?? provider?.defaultMode ?? null;
          if (mode !== null) await conn.agent.request('session/set_mode', { sessionId: res.sessionId, modeId: mode });
          return { agentName, agentVersion, sessionId: res.sessionId, models: { currentModelId: current, availableModels: models.availableModels }, viaConfigOption: models.viaConfigOption, resumed: loaded !== undefined, resumeFailure };
        })(),
        exited,
        deadline,
      ]);
      return new AcpSession({ child, conn, launch, stderr, ...started });
    } catch (e) {
      if ((e as { timeout?: boolean }).timeout) return fail('ACPStartupTimeout', (e as Error).message);
      if (indicatesAuth(e)) return fail('ACPAuthRequired', `The ACP server needs credentials: ${acpErrorText(e)}`);
      return fail('ACPInitError', acpErrorText(e));
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * One turn. Resolves with the server's answer (stopReason `cancelled` after cancel()); rejects
   * with AcpRequestError when the server refuses, ends, or stays silent for `idleMs` (reset by every
   * update: `touch` is called from the update handler).
   */
  async prompt(blocks: ContentBlock[], idleMs: number, activity: { last: number }): Promise<PromptResponse> {
    const pending = this.#conn.agent.request('session/prompt', { sessionId: this.sessionId, prompt: blocks });
    let timer: NodeJS.Timeout | undefined;
    const idle = new Promise<never>((_, reject) => {
      const check = () => {
        const quiet = Date.now() - activity.last;
        if (quiet >= idleMs) reject(new AcpRequestError('ACPPromptTimeout', `The ACP server sent nothing for ${Math.round(idleMs / 1000)}s; the turn was given up`));
        else timer = setTimeout(check, idleMs - quiet);
      };
      timer = setTimeout(check, idleMs);
    });
    const exited = new Promise<never>((_, reject) => {
      const onExit = () => reject(new AcpRequestError('ACPPromptError', `The ACP server exited during the turn${this.#stderr.text ? `: ${this.#mask(this.#stderr.text.trim().slice(-1000))}` : ''}`));
      if (this.closed) onExit();
      else this.#child.once('exit', onExit);
    });
    exited.catch(() => undefined);
    try {
      return await Promise.race([pending, idle, exited]);
    } catch (e) {
      if (e instanceof AcpRequestError) throw e;
      const text = this.#mask(acpErrorText(e));
      throw new AcpRequestError(/usage policy|content policy/i.test(text) ? 'UsagePolicyRefusal' : indicatesAuth(e) ? 'ACPAuthRequired' : 'ACPPromptError', text);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Asks the server to stop the turn in progress (session/cancel); the prompt then answers `cancelled`. */
  async cancel(): Promise<void> {
    if (this.closed) return;
    await this.#conn.agent.notify('session/cancel', { sessionId: this.sessionId }).catch(() => undefined);
  }

  /** Switches the session's model (set_config_option or set_model, whichever the server uses). */
  async setModel(model: string, timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(Object.assign(new Error(`The ACP server did not answer the model switch within ${Math.round(timeoutMs / 1000)}s`), { timeout: true })), timeoutMs);
    });
    try {
      await Promise.race([setModel(this.#conn, this.sessionId, model, this.viaConfigOption), deadline]);
    } catch (e) {
      if ((e as { timeout?: boolean }).timeout) throw e;
      throw new AcpRequestError('ACPModelRejected', `ACP server rejected ${this.viaConfigOption ? 'set_config_option(model)' : 'set_session_model'}(model=${JSON.stringify(model)}): ${this.#mask(acpErrorText(e))}`);
    } finally {
      clearTimeout(timer);
    }
    this.#models = { ...this.#models, currentModelId: model };
  }

  /** Ends the connection and the server's process group. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#conn.close();
    const gone = new Promise<void>((resolve) => {
      if (this.#child.exitCode !== null || this.#child.signalCode !== null) resolve();
      else this.#child.once('exit', () => resolve());
    });
    killGroup(this.#child, 'SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([gone, new Promise<void>((resolve) => (timer = setTimeout(resolve, 3000)))]);
    clearTimeout(timer);
    killGroup(this.#child, 'SIGKILL');
  }

  #mask(text: string): string {
    return maskSecrets(text, this.#launch.secrets);
  }
}

async function setModel(conn: ClientConnection, sessionId: string, model: string, viaConfigOption: boolean): Promise<void> {
  if (viaConfigOption) await conn.agent.request('session/set_config_option', { sessionId, configId: 'model', value: model });
  else await conn.agent.request('session/set_model', { sessionId, modelId: model });
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}
