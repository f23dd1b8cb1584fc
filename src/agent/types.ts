// The contract between the agent (src/agent) and the process hosting it (src/agent-server).
// The agent server owns persistence, sequence numbers, broadcasting and status bookkeeping; the
// agent owns the loop, the model client and the tools. Neither holds the other's state.
import type { ExtensionsConfig } from './skills/extensions-repo.ts';
import type { Event } from '../api/events/index.ts';
import type { ExecutionStatus } from '../api/conversation.ts';
import type { ConversationStats, StartConversationRequest } from '../api/agent-server/index.ts';
import type { LlmRetryFields } from './llm/retry.ts';
import type { SubscriptionAccess } from './llm/codex.ts';
import type { ChatMessage, RateLimitWait } from './llm/client.ts';
import type { McpOAuthProviders } from './mcp/index.ts';
import type { MetaProfile } from '../api/agent-server/meta-profiles.ts';

export interface LlmConfig {
  /** As OpenHands clients send it, litellm style allowed: `openai/gpt-4o`, `litellm_proxy/x`. */
  model: string;
  baseUrl?: string;
  apiKey?: string;
  /** The request's timeout and retry fields (`timeout`, `num_retries`, `retry_*`); absent: the defaults (llm/retry.ts). */
  retry?: LlmRetryFields;
  /** The request's `litellm_extra_body`: merged into every chat-completions request body. */
  extraBody?: Record<string, unknown>;
  /** `auth_type: "subscription"`: calls go to the Codex Responses endpoint with the subscription's token (llm/codex.ts); baseUrl and apiKey are not used. */
  subscription?: SubscriptionAccess;
}

/**
 * What the model-routing tool (route_task_to_model) reads and does through the agent server: its
 * meta-profiles and LLM profiles, and the conversation's switch to one of those (switch_profile).
 * A profile that cannot be used (its key unopenable, its provider connection gone) throws.
 */
export interface ModelRouting {
  /** The stored meta-profile of that name; undefined when there is none. */
  metaProfile(name: string): MetaProfile | undefined;
  /** Names of the stored meta-profiles, sorted (the tool falls back to the first when none is named). */
  metaProfileNames(): string[];
  /** The stored LLM profile of that name as a model to call (the classifier); undefined when there is none. */
  llmProfile(name: string): LlmConfig | undefined;
  /** Names of the stored LLM profiles (what a direct-routing classifier may answer). */
  llmProfileNames(): string[];
  /** The conversation now uses that LLM profile, from its next model call on (as switch_profile); its model, or undefined when there is no such profile. */
  switchProfile(name: string): string | undefined;
}

export interface AgentHost {
  readonly conversationId: string;
  /** Absolute path of the working directory the tools act in. */
  readonly workspaceDir: string;
  /**
   * Undefined when no model is configured: the run must end with a ConversationErrorEvent saying which
   * variables to set. May be replaced while the agent lives (switch_llm): read it at each model call.
   */
  readonly llm: LlmConfig | undefined;
  /**
   * This conversation's own directory in the host's data, outside the working directory (OpenHands'
   * conversation persistence dir): where files the user may want later go (browser recordings).
   * Optional: without it such files go to the system temp dir.
   */
  readonly persistenceDir?: string;
  /** The extensions repository (agent_context.load_public_skills). Optional: default from the environment (extensionsConfigFromEnv). */
  readonly extensions?: ExtensionsConfig;
  /** The user's home: user skills and plugins, the installed ones included (~/.openhands/skills/installed, ~/.openhands/plugins/installed). Default: the process's home. */
  readonly userHome?: string;
  /** Per-conversation secrets: exported to commands that name them, masked in every output. */
  readonly secrets: Readonly<Record<string, string>>;
  /** OAuth for MCP servers with `auth.strategy: "oauth2"`: tokens the agent server stored (/api/mcp/oauth). Optional. */
  readonly mcpOAuth?: McpOAuthProviders;
  /** The model-routing tool's stores and switch. Optional: without it the tool answers that it cannot route. */
  readonly routing?: ModelRouting;
  readonly maxIterations: number;
  /**
   * The stored start request (secret values and the model key removed): agent context (skills),
   * MCP configuration, hook_config, plugins, confirmation policy, condenser and the like.
   */
  /** The security analyzer with its keys, when the stored request holds it without them (the agent server). */
  securityAnalyzer?(): StartConversationRequest['security_analyzer'];
  /** The critic's key (`agent.critic.api_key`), when the stored request holds the critic without it (the agent server). */
  criticApiKey?(): string | undefined;
  readonly request: StartConversationRequest;
  /**
   * Only the skills of request.agent.agent_context.skills, none of the user's or project's: a
   * sub-agent gets the skills its definition names and no others (OpenHands).
   */
  readonly requestSkillsOnly?: boolean;
  /**
   * The conversation's recorded usage (`stats`, as the last stats update set it); null for a new
   * conversation or a fork that reset its metrics. The agent's totals continue from it.
   */
  stats(): ConversationStats | null;
  /** Every persisted event of this conversation, oldest first. */
  events(): readonly Event[];
  /** Persists (with the next sequence number) and broadcasts. Throws only when persistence fails. */
  emit(event: Event): void;
  executionStatus(): ExecutionStatus;
  /** Records the status and emits the matching ConversationStateUpdateEvent. */
  setExecutionStatus(status: ExecutionStatus): void;
  /**
   * Pieces of a streamed model answer (llm.stream: true), for live subscribers only: sent as
   * StreamingDeltaEvent on the events socket, never persisted. Optional: a host may ignore them.
   */
  streamDelta?(delta: { content: string | null; reasoning: string | null }): void;
  /**
   * A model call of the run waits for the provider's rate limit (a 429) until `wait.until`; null once
   * it goes on. The run is still running meanwhile (spec part 3 shows it as PAUSED). Optional.
   */
  rateLimited?(wait: RateLimitWait | null): void;
  /**
   * Usage recorded without an event (ask_agent's calls, which leave no trace in the conversation, as
   * in OpenHands): kept as the conversation's `stats`. Optional: a host may drop it (the next stats
   * event carries it anyway).
   */
  recordStats?(stats: ConversationStats): void;
  /**
   * The skills the conversation loaded besides its request's (SkillInfo objects: user, project,
   * public skills, and its plugins' each time the agent has loaded them): kept with the
   * conversation so that ConversationInfo lists them from then on, across restarts. Optional.
   */
  recordPluginSkills?(skills: Record<string, unknown>[]): void;
}

/** One per conversation; lives as long as the conversation is loaded in the agent server. */
export interface ConversationAgent {
  /**
   * Runs until the agent finishes, errs, gets stuck, waits for confirmation, or `signal` aborts
   * (pause, interrupt, delete). Never rejects for model or tool failures: those become events.
   */
  run(signal: AbortSignal): Promise<void>;
  /**
   * Condenses the history once now (POST /condense while no run is active): a Condensation event,
   * or nothing when there is too little to forget. Optional: a host answers 501 without it.
   */
  condense?(signal: AbortSignal): Promise<void>;
  /** `host.secrets` changed (secrets added after start): mask the new values (later commands that name them get them). */
  secretsChanged?(): void;
  /** `host.llm` was replaced (switch_llm): its key is masked from now on; the next model call uses it. */
  llmChanged?(): void;
  /**
   * A user message is about to be recorded: the skills its keywords trigger (their text for the
   * MessageEvent's extended_content, their names for activated_skills). Optional.
   */
  userMessageSkills?(text: string): UserMessageSkills;
  /**
   * Settles once what the agent loads in the background from its creation on (the plugins) is
   * there; never rejects. A user message waits for it: plugin commands are among its keyword triggers. Optional.
   */
  ready?(): Promise<void>;
  /**
   * Records the SystemPromptEvent now if none is recorded yet: OpenHands initialises its agent (tools,
   * MCP servers, prompt) before it records the first user message, so the prompt comes first. Never
   * rejects: what cannot be set up now is left to the run, which reports it. Optional.
   */
  recordSystemPrompt?(): Promise<void>;
  /**
   * ask_agent: the model's answer to a side question with the conversation as context, recording no
   * event. Throws Conflict when no model can be used, BadGateway when the model fails. Optional: a host answers 501 without it.
   */
  ask?(question: string, signal: AbortSignal): Promise<string>;
  /** A call of the conversation's model on these messages, without tools, recording no event (the /goal judge). Optional. */
  complete?(messages: ChatMessage[], signal: AbortSignal): Promise<string>;
  /** Releases tools (the persistent shell, MCP connections). */
  close(): Promise<void>;
}

export interface UserMessageSkills {
  extended_content: { type: 'text'; text: string }[];
  activated_skills: string[];
}

export type CreateAgent = (host: AgentHost) => ConversationAgent;
