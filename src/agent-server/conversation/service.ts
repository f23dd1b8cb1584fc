// Every conversation of this agent server: creation (idempotent by id), lookup, paging, deletion,
// and restart recovery. Runtimes are loaded for every live conversation; agents start lazily.
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { checkAnalyzer, splitAnalyzerKeys } from '../../agent/confirmation/policy.ts';
import { criticConfig, CriticConfigError } from '../../agent/critic/critic.ts';
import { conversationLlm } from '../../agent/llm/model-name.ts';
import { ModelCallError } from '../../agent/llm/errors.ts';
import type { LlmConfig } from '../../agent/types.ts';
import type { SubscriptionAccess } from '../../agent/llm/codex.ts';
import { toSecretSource, type ConversationInfo, type LookupSecret, type StartChildConversationRequest, type StartChildConversationResponse, type SecretInput, type UpdateSecretsRequest, type ForkConversationRequest, type StartConversationRequest, type SwitchLlmRequest, type SecurityAnalyzer } from '../../api/agent-server/index.ts';
import { Conflict, Invalid, NotFound, NotImplemented, TooManyRequests, type ValidationIssue } from '../../api/errors.ts';
import { AgentMcpServer, AgentMcpServerV144 } from '../../api/agent-server/settings.ts';
import { parseValue } from '../../api/events/validate.ts';
import type { ConversationRow, ConversationSearch, ConversationStore } from '../store/conversation-store.ts';
import { CRITIC_KEY_PLACE, type SecretSealer } from '../secrets.ts';
import { fetchLookupSecret, LookupFailed } from '../secret-lookup.ts';
import type { Fernet } from '../fernet.ts';
import { openLlm, openStartRequest } from '../secret-tokens.ts';
import { agentFromSettings } from './agent-settings.ts';
import { checkRouteLlms, splitRouteLlmKeys, type RouteLlmKeys } from './route-llms.ts';
import { lostMcpSecrets, splitMcpSecrets } from './mcp-secrets.ts';
import { conversationWorktreeDir, createWorktree, planWorktree, removeWorktrees, type WorktreePlan } from '../git/worktree.ts';
import { ConversationRuntime, type RuntimeContext } from './runtime.ts';
import { resolveAcpCommand } from '../acp/providers.ts';
import { acpAgentFromSettings } from '../../api/agent-server/parse.ts';

export interface ServiceOptions {
  ctx: RuntimeContext;
  conversations: ConversationStore;
  workspaceDir: string;
  llmDefaults: LlmConfig | undefined;
  /** Present when secrets may be persisted (sealed). */
  sealer: SecretSealer | undefined;
  /** The secret key as OpenHands' cipher, for `secrets_encrypted` requests (undefined: none; a hand-over changes it). */
  fernet?: () => Fernet | undefined;
  /** Runs `fn` in one database transaction. */
  transaction<T>(fn: () => T): T;
  /** How many conversations may run at once before the gateway answers 429 (OpenHands max_concurrent_runs). Default 10. */
  maxConcurrentRuns?: number;
  /** Answers a LookupSecret addressed to this server (secret-lookup.ts): value, null (no such secret), undefined (not ours). */
  lookupSecret?: (src: LookupSecret) => string | null | undefined;
  /** The ChatGPT subscription this server signed in with, for LLMs with `auth_type: "subscription"` (absent: such LLMs fail at their first call). */
  subscription?: () => SubscriptionAccess;
  /** A start request naming an agent profile made into one with its agent (absent: such requests are refused). */
  launchProfile?(req: StartConversationRequest): Promise<StartConversationRequest>;
}

/** OpenHands' default max_concurrent_runs. */
export const DEFAULT_MAX_CONCURRENT_RUNS = 10;
/** OpenHands' message when no run slot is free. */
export const RUN_LIMIT_REACHED = 'Conversation run limit reached. Retry the request later.';

const UUID = /^([0-9a-f]{8})-?([0-9a-f]{4})-?([0-9a-f]{4})-?([0-9a-f]{4})-?([0-9a-f]{12})$/i;

/** Dashed lowercase UUID for either accepted spelling (dashed or 32 hex digits); undefined otherwise. */
export function normalizeConversationId(id: string): string | undefined {
  const m = UUID.exec(id);
  return m ? m.slice(1).join('-').toLowerCase() : undefined;
}

/** The model config: the request's `agent.llm` over the server's defaults (rules in conversationLlm). */
/** The analyzer keys as sealed with the secrets (nothing when there are none). */
const sealedAnalyzerKeys = (keys: Readonly<Record<string, string>>) => (Object.keys(keys).length ? { analyzerKeys: { ...keys } } : {});
/** The routing tool's inline LLM keys as sealed with the secrets (nothing when there are none). */
const sealedRouteKeys = (keys: Readonly<RouteLlmKeys>) => (Object.keys(keys).length ? { routeLlmKeys: structuredClone(keys) as RouteLlmKeys } : {});

export function effectiveLlm(req: StartConversationRequest, apiKey: string | undefined, defaults: LlmConfig | undefined, subscription?: () => SubscriptionAccess): LlmConfig | undefined {
  const llm = req.agent?.llm;
  const resolved = llm?.auth_type === 'subscription' || llm?.is_subscription === true ? subscriptionLlm(llm.model, subscription) : conversationLlm({ model: llm?.model ?? null, base_url: llm?.base_url ?? null, api_key: apiKey ?? null }, defaults);
  // Timeout and retries are the conversation's own, also over the server's default model.
  const retry = llm && { timeout: llm.timeout, num_retries: llm.num_retries, retry_min_wait: llm.retry_min_wait, retry_max_wait: llm.retry_max_wait, retry_multiplier: llm.retry_multiplier };
  const withRetry = resolved && retry && Object.values(retry).some((v) => v !== undefined && v !== null) ? { ...resolved, retry } : resolved;
  const extraBody = llm?.litellm_extra_body;
  return withRetry && extraBody && Object.keys(extraBody).length > 0 ? { ...withRetry, extraBody } : withRetry;
}

/** The model the agent server calls for the conversation: none for an ACP agent (its server calls its own). */
function runtimeLlm(req: StartConversationRequest, apiKey: string | undefined, defaults: LlmConfig | undefined, subscription?: () => SubscriptionAccess): LlmConfig | undefined {
  return req.agent?.kind === 'ACPAgent' ? undefined : effectiveLlm(req, apiKey, defaults, subscription);
}

/**
 * `agent.mcp_config` checked at start as 1.58 checks its Agent's (a map of MCPServer, extra fields
 * refused, a command or a URL each), so a bad server is a 422 where it stands rather than an error
 * at the first run. Both forms are taken (agentMcpServers), each with its own version's fields: 1.58's
 * server map, and the `{"mcpServers": ...}` form of 1.44's clients (with `type`), which 1.58 refuses
 * (a deliberate difference: the official TypeScript client is generated from 1.44).
 */
function checkMcpConfig(config: unknown, loc: string[]): void {
  if (config == null) return;
  const wrapped = typeof config === 'object' && !Array.isArray(config) && 'mcpServers' in config;
  const at = wrapped ? [...loc, 'mcpServers'] : loc;
  const servers = wrapped ? (config as Record<string, unknown>)['mcpServers'] : config;
  if (servers === null || typeof servers !== 'object' || Array.isArray(servers)) throw new Invalid([{ loc: at, msg: 'Input should be a valid dictionary: MCP servers by name', type: 'dict_type' }]);
  const issues: ValidationIssue[] = [];
  for (const [name, server] of Object.entries(servers)) {
    try {
      const s = parseValue(wrapped ? AgentMcpServerV144 : AgentMcpServer, server, { prefix: [...at, name] });
      if (s.command === undefined && s.url === undefined) issues.push({ loc: [...at, name], msg: "Value error, an MCP server needs 'command' (stdio) or 'url' (http, sse)", type: 'value_error' });
    } catch (err) {
      if (!(err instanceof Invalid)) throw err;
      issues.push(...err.detail);
    }
  }
  if (issues.length) throw new Invalid(issues);
}

/** What an ACP agent asks for that cannot be done: refused at start rather than at its first run. */
function checkAcpAgent(agent: NonNullable<StartConversationRequest['agent']>, loc: string[]): void {
  resolveAcpCommand(agent.acp_server, agent.acp_command, loc);
  if (agent.tools?.length) throw new Invalid([{ loc: [...loc, 'tools'], msg: 'An ACP agent does not take tools: the ACP server manages its own', type: 'value_error' }]);
  if (agent.condenser) throw new Invalid([{ loc: [...loc, 'condenser'], msg: 'An ACP agent does not take a condenser: the ACP server manages its own context', type: 'value_error' }]);
}

/**
 * A model through the ChatGPT subscription: no key and no base URL of the request or the server's
 * defaults go with it (the token and the Codex endpoint are the subscription's). Without a
 * subscription service the calls fail saying so.
 */
function subscriptionLlm(model: string | undefined, subscription: (() => SubscriptionAccess) | undefined): LlmConfig {
  const access: SubscriptionAccess = subscription?.() ?? {
    vendor: 'openai',
    baseUrl: '',
    credentials: () => Promise.reject(new ModelCallError('LLMConfigError', 'This agent server has no ChatGPT subscription sign-in')),
  };
  return { model: model || 'openai/gpt-5.5', subscription: access };
}

/**
 * The critic's key (`agent.critic.api_key`) is sealed with the security analyzer's keys, at its own
 * place, and the stored request has it null (1.58 shows it null too). The runtime reads it from there.
 */
function splitCriticKey(critic: Record<string, unknown> | null | undefined): { stored?: Record<string, unknown>; keys: Record<string, string> } {
  const key = critic?.['api_key'];
  if (!critic || typeof key !== 'string' || key === '') return { keys: {} };
  return { stored: { ...critic, api_key: null }, keys: { [CRITIC_KEY_PLACE]: key } };
}

function criticKeys(keys: Readonly<Record<string, string>>): Record<string, string> {
  const key = keys[CRITIC_KEY_PLACE];
  return key ? { [CRITIC_KEY_PLACE]: key } : {};
}

/**
 * An OpenHands condenser carries its own `llm`; agentyard summarizes with the agent's model, and a
 * key there must not be stored or shown like any other secret.
 */
function withoutCondenserKey(condenser: Record<string, unknown> | null | undefined): { condenser?: Record<string, unknown> | null } {
  const llm = condenser?.['llm'];
  if (!condenser || !llm || typeof llm !== 'object' || !('api_key' in llm)) return {};
  return { condenser: { ...condenser, llm: { ...llm, api_key: null } } };
}

/**
 * The values of StaticSecrets, of LookupSecrets this server answers itself (`lookup`: a stored
 * secret, null when that names none), and of LookupSecrets of any other URL, fetched now
 * (secret-lookup.ts; a failed fetch is a 422 at the secret, an empty answer gives no variable, as in 1.58).
 */
async function secretValues(input: Record<string, SecretInput>, lookup: ServiceOptions['lookupSecret']): Promise<Record<string, string>> {
  const secrets: Record<string, string> = {};
  for (const [name, value] of Object.entries(input)) {
    const src = toSecretSource(value);
    if (src.kind === 'LookupSecret') {
      const found = lookup?.(src);
      if (found === null) throw new Invalid([{ loc: ['body', 'secrets', name], msg: 'Secret not found', type: 'value_error' }]);
      if (found !== undefined) {
        secrets[name] = found;
        continue;
      }
      let fetched: string;
      try {
        fetched = await fetchLookupSecret(src);
      } catch (err) {
        if (!(err instanceof LookupFailed)) throw err;
        throw new Invalid([{ loc: ['body', 'secrets', name], msg: `Secret lookup failed: ${err.message}`, type: 'value_error' }]);
      }
      if (fetched) secrets[name] = fetched;
      continue;
    }
    if (src.value != null) secrets[name] = src.value;
  }
  return secrets;
}

/**
 * The request of a conversation working in `plan`'s worktree: its working directory there, and the
 * agent told where it is (OpenHands' worktree guidance, appended to the system message suffix).
 */
function withWorktree(req: StartConversationRequest, plan: WorktreePlan): StartConversationRequest {
  const base = { default_branch: 'the main/master branch', head: "the original workspace's current HEAD", ref: `\`${plan.options.ref ?? ''}\`` }[plan.options.base ?? 'default_branch'];
  const guidance = [
    'This conversation uses a dedicated git worktree.',
    `- Original workspace: ${plan.sourceDir}`,
    `- Worktree root: ${plan.worktreeRoot}`,
    `- Active workspace: ${plan.workspaceDir}`,
    `- Branch: ${plan.branch}`,
    `Do all file and git work inside this worktree. Do your work on a new, appropriately-named branch, based off ${base}, and do not switch back to the original workspace.`,
  ].join('\n');
  const agent = req.agent;
  const ctx = agent?.agent_context;
  const suffix = ctx?.system_message_suffix ? `${ctx.system_message_suffix}\n\n${guidance}` : guidance;
  return {
    ...req,
    workspace: { ...req.workspace, working_dir: plan.workspaceDir },
    ...(agent ? { agent: { ...agent, agent_context: { ...(ctx ?? {}), system_message_suffix: suffix } as NonNullable<typeof ctx> } } : {}),
  };
}

export class ConversationService {
  readonly #o: ServiceOptions;
  readonly #loaded = new Map<string, ConversationRuntime>();
  /** Run slots claimed by callers that are about to start a run (see reserveRunSlot). */
  #reserved = 0;
  readonly #onDeleted: ((conversationId: string) => Promise<void>)[] = [];

  constructor(o: ServiceOptions) {
    this.#o = o;
  }

  /** Secret values of a request's `secrets` (StaticSecret, or a LookupSecret, fetched now). */
  secretValues(input: Record<string, SecretInput>): Promise<Record<string, string>> {
    return secretValues(input, this.#o.lookupSecret);
  }

  /** `llm` with the Fernet tokens of X-Expose-Secrets: encrypted in its key fields opened (422 at `loc` for another key's token). */
  openLlmTokens<T extends object>(llm: T, loc: (string | number)[]): T {
    return openLlm(llm, this.#o.fernet?.(), loc);
  }

  /** Where conversations keep files outside their workspace (`<data dir>/conversations`). */
  get conversationsDir(): string {
    return join(this.#o.ctx.persistenceDir, 'conversations');
  }

  /** The server's workspace root: relative working (and project) directories are taken inside it. */
  get workspaceDir(): string {
    return this.#o.workspaceDir;
  }

  /** The server's default model (LLM_MODEL, ...): the one LLM profile the OpenAI-compatible gateway offers. */
  get llmDefaults(): LlmConfig | undefined {
    return this.#o.llmDefaults;
  }

  /** The ChatGPT subscription for LLMs with `auth_type: "subscription"` (undefined: none on this server). */
  get subscription(): (() => SubscriptionAccess) | undefined {
    return this.#o.subscription;
  }

  /** Calls `fn` at every event of the conversation (state updates included) until the returned function is called. */
  subscribe(id: string, fn: () => void): () => void {
    return this.#o.ctx.bus.subscribe(id, Object.assign(() => fn(), { end: fn }));
  }

  /** Loads every live conversation and moves those left `running` by a previous process to error. */
  recover(): void {
    for (const row of this.#o.conversations.all()) {
      let secrets: Record<string, string> = {};
      let apiKey: string | undefined;
      let analyzerKeys: Record<string, string> | undefined;
      let mcpConfig: Record<string, unknown> | undefined;
      let routeLlmKeys: RouteLlmKeys | undefined;
      const lostMcp = lostMcpSecrets(row.request.agent?.mcp_config);
      if (row.sealedSecrets !== null) {
        const opened = this.#o.sealer?.open(row.sealedSecrets, row.id);
        if (opened) ({ secrets, llmApiKey: apiKey, analyzerKeys, mcpConfig, routeLlmKeys } = opened);
        else this.#o.ctx.log.warn({ conversationId: row.id }, 'cannot open stored secrets (OH_SECRET_KEY missing or changed? add the old key to OH_PREVIOUS_SECRET_KEYS)');
      } else if (Object.keys(row.request.secrets ?? {}).length > 0 || lostMcp.length > 0) {
        // #14: a relaunched ACP server without its config secret. Said, never silent: the names (not values) and the remedy.
        this.#o.ctx.log.warn({ conversationId: row.id, secretNames: Object.keys(row.request.secrets ?? {}), ...(lostMcp.length ? { mcpSecrets: lostMcp } : {}) }, 'the conversation\'s secrets were held in memory only (the server had no OH_SECRET_KEY) and are gone after this restart: its runs (and a relaunched ACP server) go without them until they are sent again (POST /api/conversations/{id}/secrets); set OH_SECRET_KEY to keep them');
      }
      const rt = new ConversationRuntime(this.#o.ctx, {
        row,
        workspaceDir: this.#workingDir(row.request),
        llm: runtimeLlm(row.request, apiKey, this.#o.llmDefaults, this.#o.subscription),
        secrets,
        ...(analyzerKeys ? { analyzerKeys } : {}),
        ...(routeLlmKeys ? { routeLlmKeys } : {}),
        mcpConfig,
      });
      this.#loaded.set(row.id, rt);
      rt.recoverFromRestart();
      rt.reconcileGoal();
    }
  }

  /**
   * `created` is false when the id already existed: the existing conversation is returned as is.
   * An initial message starts the run at once (OpenHands ignores its `run` field here).
   * A conversation with plugins gets its agent at once: the plugins load in the background (a
   * failure is reported by the first run), and their skills are listed as soon as they are loaded.
   */
  async create(req: StartConversationRequest): Promise<{ info: ConversationInfo; created: boolean }> {
    const requested = req.conversation_id == null ? undefined : normalizeConversationId(req.conversation_id);
    const id = requested ?? randomUUID();
    const existing = this.#loaded.get(id);
    if (existing) return { info: existing.info(), created: false };
    if (this.#o.conversations.exists(id)) throw new Conflict(`Conversation ${id} was deleted; its id cannot be reused`);
    // Tokens of X-Expose-Secrets: encrypted opened before anything reads the request (a profile launch adds no tokens).
    req = openStartRequest(req, this.#o.fernet?.());
    if (!req.agent && req.agent_profile_id != null && this.#o.launchProfile) req = await this.#o.launchProfile(req);
    let agentLoc = ['body', 'agent'];
    if (!req.agent && req.agent_settings) {
      // As 1.58: the settings make the agent (kind acp: an ACPAgent; otherwise create_agent's Agent, routing fields included).
      const agent = acpAgentFromSettings(req.agent_settings) ?? agentFromSettings(req.agent_settings);
      [req, agentLoc] = [{ ...req, agent, agent_settings: null }, ['body', 'agent_settings']];
    }
    if (!req.agent) throw new Invalid([{ loc: ['body'], msg: 'Value error, One of `agent`, `agent_settings`, or `agent_profile_id` must be provided', type: 'value_error' }]);
    if (req.agent.kind === 'ACPAgent') checkAcpAgent(req.agent, agentLoc);
    checkMcpConfig(req.agent.mcp_config, [...agentLoc, 'mcp_config']);
    // The routing tool's inline LLMs (agent_settings' were checked with the settings).
    const checkedTools = checkRouteLlms(req.agent.tools, [...agentLoc, 'tools']);
    if (req.worktree && req.worktree_options?.base === 'ref' && req.worktree_options.ref == null) {
      throw new Invalid([{ loc: ['body', 'worktree_options'], msg: 'Value error, A `ref` base needs a `ref`', type: 'value_error' }]);
    }
    checkAnalyzer(req.security_analyzer, ['body', 'security_analyzer']);
    // A critic the agent cannot use is refused before anything is stored, at the field (as 1.58's 422).
    try {
      criticConfig(req.agent.critic);
    } catch (err) {
      if (!(err instanceof CriticConfigError)) throw err;
      throw new Invalid([{ loc: agentLoc[1] === 'agent' ? [...agentLoc, 'critic', ...err.loc] : [...agentLoc, 'verification'], msg: err.message, type: 'value_error' }]);
    }

    const secrets = await secretValues(req.secrets ?? {}, this.#o.lookupSecret);
    const apiKey = req.agent.llm.api_key ?? undefined;
    let workspaceDir = this.#workingDir(req);
    try {
      mkdirSync(workspaceDir, { recursive: true });
    } catch {
      throw new Invalid([{ loc: ['body', 'workspace', 'working_dir'], msg: 'Cannot create the working directory', type: 'value_error' }]);
    }
    // In a git repository, `worktree` gives the conversation its own checkout; elsewhere it works in place (as OpenHands).
    const worktree = req.worktree ? await planWorktree(this.#o.workspaceDir, workspaceDir, id, req.worktree_options, ['body', 'workspace', 'working_dir']) : undefined;
    if (worktree) workspaceDir = await createWorktree(worktree);
    const agent = { ...req.agent, ...(checkedTools ? { tools: checkedTools } : {}) };
    const mcp = splitMcpSecrets(agent.mcp_config);
    const route = splitRouteLlmKeys(agent.tools);
    // What is stored: the request without secret values (the MCP servers' env and header values too),
    // without the LLM key, the analyzer's and the critic's keys and the routing tool's inline LLM keys.
    const { stored: security_analyzer, keys: onlyAnalyzerKeys } = splitAnalyzerKeys(req.security_analyzer);
    const critic = splitCriticKey(agent.critic);
    const analyzerKeys = { ...onlyAnalyzerKeys, ...critic.keys };
    const request: StartConversationRequest = {
      ...req,
      security_analyzer,
      conversation_id: id,
      secrets: Object.fromEntries(Object.keys(secrets).map((n) => [n, { kind: 'StaticSecret', value: null }])),
      agent: { ...agent, llm: { ...agent.llm, api_key: null }, ...withoutCondenserKey(agent.condenser), ...(critic.stored ? { critic: critic.stored } : {}), ...(mcp.stored ? { mcp_config: mcp.stored } : {}), ...(route.stored ? { tools: route.stored } : {}) },
      initial_message: null,
    };
    const stored = worktree ? withWorktree(request, worktree) : request;
    const now = new Date().toISOString();
    const hasSecrets = Object.keys(secrets).length > 0 || apiKey !== undefined || mcp.sealed !== undefined || Object.keys(analyzerKeys).length > 0 || Object.keys(route.keys).length > 0;
    const row = {
      id,
      createdAt: now,
      updatedAt: now,
      executionStatus: 'idle' as const,
      title: req.tags?.['title'] ?? null,
      request: stored,
      tags: req.tags ?? {},
      stats: null,
      lastUserMessageId: null,
      sealedSecrets: hasSecrets && this.#o.sealer ? this.#o.sealer.seal({ secrets, ...(apiKey ? { llmApiKey: apiKey } : {}), ...(mcp.sealed ? { mcpConfig: mcp.sealed } : {}), ...sealedAnalyzerKeys(analyzerKeys), ...sealedRouteKeys(route.keys) }, id) : null,
      deletedAt: null,
      forkedFromConversationId: null,
      forkedFromEventId: null,
      pluginSkills: null,
    };
    this.#o.conversations.insert(row);
    const rt = new ConversationRuntime(this.#o.ctx, { row, workspaceDir, llm: runtimeLlm(req, apiKey, this.#o.llmDefaults, this.#o.subscription), secrets, mcpConfig: mcp.sealed, analyzerKeys, routeLlmKeys: route.keys });
    this.#loaded.set(id, rt);
    this.#o.ctx.onChanged(id);
    if (req.plugins?.length) rt.prepareAgent();
    if (req.initial_message) await rt.sendMessage(req.initial_message, true);
    return { info: rt.info(), created: true };
  }

  /**
   * A new conversation with a deep copy of the source's events (ids kept; up to `from_event_id`
   * when given), the same agent, secrets and working directory, fresh status (idle) and tags from
   * the request only. The source is not touched.
   */
  fork(sourceId: string, req: ForkConversationRequest): ConversationInfo {
    const src = this.get(sourceId);
    const id = req.id == null ? randomUUID() : normalizeConversationId(req.id)!;
    if (this.#o.conversations.exists(id)) throw new Conflict(`Conversation ${id} already exists`);
    const events = this.#o.ctx.events;
    let uptoSeq = events.lastSeq(src.conversationId);
    if (req.from_event_id != null) {
      const at = events.get(src.conversationId, req.from_event_id);
      if (!at) throw new NotFound(`Event not found: ${req.from_event_id}`);
      uptoSeq = at.seq;
    }
    const now = new Date().toISOString();
    const opened = src.row.sealedSecrets === null ? undefined : this.#o.sealer?.open(src.row.sealedSecrets, src.conversationId);
    const row: ConversationRow = {
      ...src.row,
      id,
      createdAt: now,
      updatedAt: now,
      executionStatus: 'idle',
      title: req.title ?? null,
      tags: { ...(req.tags ?? {}), ...(req.title != null ? { title: req.title } : {}) },
      stats: req.reset_metrics === false ? src.row.stats : null,
      request: { ...src.row.request, conversation_id: id },
      sealedSecrets: opened && this.#o.sealer ? this.#o.sealer.seal(opened, id) : null,
      forkedFromConversationId: src.conversationId,
      forkedFromEventId: req.from_event_id ?? null,
      // The source's HEAD, when navigate moved it; at from_event_id, the copy's last event is HEAD.
      headEventId: req.from_event_id == null ? (src.row.headEventId ?? null) : null,
    };
    this.#o.transaction(() => {
      this.#o.conversations.insert(row);
      events.copy(src.conversationId, id, uptoSeq);
    });
    const rt = new ConversationRuntime(this.#o.ctx, { row, workspaceDir: src.workspaceDir, llm: src.llm, secrets: { ...src.secrets }, mcpConfig: src.mcpConfig, analyzerKeys: { ...src.analyzerKeys }, routeLlmKeys: src.routeLlmKeys });
    const lastUser = [...rt.events()].reverse().find((e) => e.kind === 'MessageEvent' && e.source === 'user');
    rt.update({ lastUserMessageId: lastUser?.id ?? null });
    this.#loaded.set(id, rt);
    this.#o.ctx.onAppended(id);
    this.#o.ctx.onChanged(id);
    return rt.info();
  }

  /**
   * POST /children (OpenHands start_child_conversation): a new conversation with the parent's
   * configuration (agent, model, secrets, plugins, hooks, policies, tags), a fresh history, linked by
   * parent_conversation_id, working on `task` (its first user message, run at once). With isolation
   * 'worktree' (the default) and a parent in a git repository it works in a git worktree of its own;
   * otherwise it shares the parent's directory.
   */
  async startChild(parentId: string, req: StartChildConversationRequest): Promise<StartChildConversationResponse> {
    const parent = this.find(parentId);
    if (!parent) throw new NotFound('Parent conversation not found');
    const id = randomUUID();
    const isolated = (req.isolation ?? 'worktree') === 'worktree';
    const worktree = isolated ? await planWorktree(this.#o.workspaceDir, parent.workspaceDir, id, null, ['body', 'isolation']) : undefined;
    const workspaceDir = worktree ? await createWorktree(worktree) : parent.workspaceDir;
    const request = { ...parent.row.request, conversation_id: id, parent_conversation_id: parent.conversationId, worktree: isolated };
    const now = new Date().toISOString();
    const opened = parent.row.sealedSecrets === null ? undefined : this.#o.sealer?.open(parent.row.sealedSecrets, parent.conversationId);
    const row: ConversationRow = {
      ...parent.row,
      id,
      createdAt: now,
      updatedAt: now,
      executionStatus: 'idle',
      title: req.title ?? null,
      request: worktree ? withWorktree(request, worktree) : request,
      stats: null,
      lastUserMessageId: null,
      sealedSecrets: opened && this.#o.sealer ? this.#o.sealer.seal(opened, id) : null,
      forkedFromConversationId: null,
      forkedFromEventId: null,
      pluginSkills: null,
      headEventId: null,
    };
    this.#o.conversations.insert(row);
    const rt = new ConversationRuntime(this.#o.ctx, { row, workspaceDir, llm: parent.llm, secrets: { ...parent.secrets }, mcpConfig: parent.mcpConfig, analyzerKeys: { ...parent.analyzerKeys }, routeLlmKeys: parent.routeLlmKeys });
    this.#loaded.set(id, rt);
    this.#o.ctx.onChanged(id);
    if (row.request.plugins?.length) rt.prepareAgent();
    await rt.sendMessage({ content: [{ type: 'text', text: req.task }] }, true);
    return {
      conversation_id: id,
      parent_conversation_id: parent.conversationId,
      status: rt.executionStatus(),
      title: row.title,
      url: null,
      workspace: workspaceDir,
      isolation: worktree ? 'worktree' : 'shared',
    };
  }

  /** Live conversations whose parent is `id`, oldest first. */
  childrenOf(id: string): string[] {
    return this.all()
      .filter((rt) => rt.request.parent_conversation_id === id)
      .sort((a, b) => a.row.createdAt.localeCompare(b.row.createdAt))
      .map((rt) => rt.conversationId);
  }

  /**
   * Adds or replaces secrets of a live conversation: masked from now on and exported to the later
   * commands that name them. Persisted sealed like the start request's (and forgotten at a restart without a key).
   */
  async updateSecrets(id: string, req: UpdateSecretsRequest): Promise<void> {
    const rt = this.get(id);
    const added = await secretValues(req.secrets, this.#o.lookupSecret);
    const secrets = { ...rt.secrets, ...added };
    const row = rt.row;
    const opened = row.sealedSecrets === null ? undefined : this.#o.sealer?.open(row.sealedSecrets, row.id);
    const llmApiKey = opened?.llmApiKey ?? row.request.agent?.llm.api_key ?? undefined;
    rt.setSecrets(secrets, {
      request: { ...row.request, secrets: Object.fromEntries(Object.keys(secrets).map((n) => [n, { kind: 'StaticSecret', value: null }])) },
      sealedSecrets: this.#o.sealer ? this.#o.sealer.seal({ secrets, ...(llmApiKey ? { llmApiKey } : {}), ...(rt.mcpConfig ? { mcpConfig: rt.mcpConfig } : {}), ...sealedAnalyzerKeys(rt.analyzerKeys), ...sealedRouteKeys(rt.routeLlmKeys) }, row.id) : null,
    });
  }

  /**
   * The conversation's LLM from its next model call on, resolved as at create (so LLM_API_KEY only
   * goes to the LLM_* endpoint); stored without its key, which is sealed like the start request's.
   */
  switchLlm(id: string, req: SwitchLlmRequest): void {
    const rt = this.get(id);
    // A key sent as GET /api/settings (encrypted) showed it: opened, as 1.58's switch_llm does.
    req = { ...req, llm: this.openLlmTokens(req.llm, ['body', 'llm']) };
    const row = rt.row;
    const apiKey = req.llm.api_key ?? undefined;
    const request = { ...row.request, agent: { ...row.request.agent!, llm: { ...req.llm, api_key: null } } };
    const secrets = { ...rt.secrets };
    const hasSecrets = Object.keys(secrets).length > 0 || apiKey !== undefined || rt.mcpConfig !== undefined || Object.keys(rt.analyzerKeys).length > 0 || Object.keys(rt.routeLlmKeys).length > 0;
    rt.switchLlm(effectiveLlm(request, apiKey, this.#o.llmDefaults, this.#o.subscription), {
      request,
      sealedSecrets: hasSecrets && this.#o.sealer ? this.#o.sealer.seal({ secrets, ...(apiKey ? { llmApiKey: apiKey } : {}), ...(rt.mcpConfig ? { mcpConfig: rt.mcpConfig } : {}), ...sealedAnalyzerKeys(rt.analyzerKeys), ...sealedRouteKeys(rt.routeLlmKeys) }, row.id) : null,
    });
  }

  /**
   * POST /security_analyzer: the analyzer from the next batch of actions on, stored without its keys,
   * which are sealed with the conversation's secrets (kept in memory only without a secret key).
   */
  setSecurityAnalyzer(id: string, analyzer: SecurityAnalyzer | null): void {
    const rt = this.get(id);
    checkAnalyzer(analyzer, ['body', 'security_analyzer']);
    const row = rt.row;
    const { stored, keys: onlyAnalyzerKeys } = splitAnalyzerKeys(analyzer);
    // The critic's key rides with the analyzer's (see CRITIC_KEY_PLACE): a new analyzer keeps it.
    const keys = { ...onlyAnalyzerKeys, ...criticKeys(rt.analyzerKeys) };
    const opened = row.sealedSecrets === null ? undefined : this.#o.sealer?.open(row.sealedSecrets, row.id);
    const secrets = { ...rt.secrets };
    const llmApiKey = opened?.llmApiKey;
    const hasSecrets = Object.keys(secrets).length > 0 || llmApiKey !== undefined || rt.mcpConfig !== undefined || Object.keys(keys).length > 0 || Object.keys(rt.routeLlmKeys).length > 0;
    rt.setSecurityAnalyzer(stored, keys, {
      request: { ...row.request, security_analyzer: stored },
      sealedSecrets: hasSecrets && this.#o.sealer ? this.#o.sealer.seal({ secrets, ...(llmApiKey ? { llmApiKey } : {}), ...(rt.mcpConfig ? { mcpConfig: rt.mcpConfig } : {}), ...sealedAnalyzerKeys(keys), ...sealedRouteKeys(rt.routeLlmKeys) }, row.id) : null,
    });
  }

  /**
   * Claims a run slot for a run about to start (OpenHands RunSlot): every running conversation holds
   * one, and so does each claim until released; TooManyRequests (429) when all
   * `maxConcurrentRuns` are taken, before the caller saves anything, so that it can simply retry.
   * Release once the run has started (it then holds its slot as a running conversation) or failed to.
   * `forConversation`, when running already, needs no new slot (its next message reruns it).
   */
  reserveRunSlot(forConversation?: ConversationRuntime): { release(): void } {
    if (forConversation?.isRunning) return { release: () => {} };
    const running = this.all().filter((rt) => rt.isRunning).length;
    if (running + this.#reserved >= (this.#o.maxConcurrentRuns ?? DEFAULT_MAX_CONCURRENT_RUNS)) throw new TooManyRequests(RUN_LIMIT_REACHED, 1);
    this.#reserved++;
    let held = true;
    return {
      release: () => {
        if (held) this.#reserved--;
        held = false;
      },
    };
  }

  /** Every live conversation made ready for its sandbox to be frozen (ConversationRuntime.prepareForSandboxPause), together. */
  async prepareForSandboxPause(): Promise<void> {
    const results = await Promise.allSettled([...this.#loaded.values()].map((rt) => rt.prepareForSandboxPause()));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  find(id: string): ConversationRuntime | undefined {
    const norm = normalizeConversationId(id);
    return norm === undefined ? undefined : this.#loaded.get(norm);
  }

  get(id: string): ConversationRuntime {
    const rt = this.find(id);
    if (!rt) throw new NotFound(`Conversation not found: ${id}`);
    return rt;
  }

  search(q: ConversationSearch): { items: ConversationInfo[]; nextPageId: string | null } {
    const pageId = q.pageId === undefined ? undefined : normalizeConversationId(q.pageId);
    if (q.pageId !== undefined && pageId === undefined) {
      throw new Invalid([{ loc: ['query', 'page_id'], msg: 'Unknown page_id', type: 'value_error' }]);
    }
    const { rows, nextId } = this.#o.conversations.search({ ...q, ...(pageId ? { pageId } : {}) });
    const items = rows.flatMap((r) => this.#loaded.get(r.id)?.info() ?? []);
    return { items, nextPageId: nextId === null ? null : nextId.replaceAll('-', '') };
  }

  count(status?: string): number {
    return this.#o.conversations.count(status);
  }

  /**
   * Stops the agent and hides the conversation; its events stay until the event sink has them.
   * Idempotent: deleting a deleted conversation succeeds. NotFound for an id never seen.
   */
  async delete(id: string): Promise<void> {
    const rt = this.find(id);
    if (!rt) {
      const norm = normalizeConversationId(id);
      if (norm !== undefined && this.#o.conversations.exists(norm)) return;
      throw new NotFound(`Conversation not found: ${id}`);
    }
    this.#loaded.delete(rt.conversationId);
    await rt.close({ deleted: true });
    // Its worktree goes with it, unless a fork (which shares it) still lives; the branch stays (as OpenHands).
    const worktreeDir = conversationWorktreeDir(this.#o.workspaceDir, rt.workspaceDir);
    if (worktreeDir !== undefined && !this.all().some((o) => conversationWorktreeDir(this.#o.workspaceDir, o.workspaceDir) === worktreeDir)) {
      await removeWorktrees(worktreeDir);
    }
    await Promise.all(this.#onDeleted.map((fn) => fn(rt.conversationId)));
    this.#o.ctx.bus.end(rt.conversationId);
    this.#o.conversations.update(rt.conversationId, { deletedAt: new Date().toISOString() }, new Date().toISOString());
    this.#o.ctx.onChanged(rt.conversationId);
  }

  /** `fn` runs at each deletion, once the agent is stopped (what else the conversation owned goes with it). */
  onDeleted(fn: (conversationId: string) => Promise<void>): void {
    this.#onDeleted.push(fn);
  }

  /** Whether any conversation, live or being deleted, was ever created here. */
  get untouched(): boolean {
    return this.#loaded.size === 0 && this.#o.conversations.all().length === 0 && this.#o.conversations.deletedIds().length === 0;
  }

  /**
   * A warm-pool sandbox handed over to the user who claimed it: the model key and the secret
   * sealing key it starts conversations with from now on. Only before its first conversation, so
   * nothing was sealed or run with the pool's keys.
   */
  handOver(o: { llmApiKey?: string; sealer?: SecretSealer }): void {
    if (!this.untouched) throw new Conflict('This agent server already has conversations; it cannot be handed over');
    if (o.llmApiKey !== undefined && this.#o.llmDefaults) this.#o.llmDefaults = { ...this.#o.llmDefaults, apiKey: o.llmApiKey };
    if (o.sealer) this.#o.sealer = o.sealer;
  }

  all(): ConversationRuntime[] {
    return [...this.#loaded.values()];
  }

  async close(graceMs: number): Promise<void> {
    await Promise.all(this.all().map((rt) => rt.close({ graceMs })));
  }

  /** The request's working dir: relative paths are taken inside the server's workspace. */
  #workingDir(req: StartConversationRequest): string {
    const wd = req.workspace.working_dir;
    return isAbsolute(wd) ? wd : resolve(this.#o.workspaceDir, wd);
  }
}
