// The Conversation resource: the user-visible session (messages, events, agent state, repository, usage).
import Type, { type Static } from 'typebox';
import { API_VERSION, Condition, ObjectMeta, Time, type ResourceKind } from './meta.ts';

export const TextContentInput = Type.Object(
  {
    type: Type.Literal('text'),
    text: Type.String(),
    cache_prompt: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

/** `initial_message` of the start request (spec part 2). */
export const InitialMessage = Type.Object(
  {
    role: Type.Literal('user'),
    content: Type.Array(TextContentInput, { minItems: 1 }),
    run: Type.Optional(Type.Boolean({ default: true })),
  },
  { additionalProperties: false },
);
export type InitialMessage = Static<typeof InitialMessage>;

export const PluginSpec = Type.Object(
  {
    source: Type.String({ minLength: 1 }),
    ref: Type.Optional(Type.String()),
    repo_path: Type.Optional(Type.String()),
    /** Values for the plugin's parameters (from a launch link or the Plugin Directory), by name. */
    parameters: Type.Optional(Type.Record(Type.String({ minLength: 1, maxLength: 100 }), Type.Union([Type.String({ maxLength: 4096 }), Type.Number(), Type.Boolean()]))),
  },
  { additionalProperties: false },
);
export type PluginSpec = Static<typeof PluginSpec>;

/** Spec part 1, "Sandbox Grouping Strategy". */
export const SandboxGrouping = Type.Union([
  Type.Literal('NO_GROUPING'),
  Type.Literal('GROUP_BY_NEWEST'),
  Type.Literal('LEAST_RECENTLY_USED'),
  Type.Literal('FEWEST_CONVERSATIONS'),
  Type.Literal('ADD_TO_ANY'),
]);
export type SandboxGrouping = Static<typeof SandboxGrouping>;

/** Git hosts a selected repository can be cloned from (OpenHands `git_provider`, the ones agentyard clones over HTTPS). */
export const GitProvider = Type.Union([Type.Literal('github'), Type.Literal('gitlab'), Type.Literal('bitbucket'), Type.Literal('forgejo')]);
export type GitProvider = Static<typeof GitProvider>;

/** A registered marketplace with Auto-Load on, as snapshotted into a conversation at start (spec part 4). */
export const AutoLoadMarketplace = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    url: Type.String({ pattern: '^https?://[^/@\\s]+/\\S+$' }),
    ref: Type.Optional(Type.String()),
    path: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
export type AutoLoadMarketplace = Static<typeof AutoLoadMarketplace>;

/** Commit author configured in a cloned repository (separate from the push credential, spec part 2 rule 5). */
export const GitAuthorName = Type.String({ minLength: 1, maxLength: 255 });
export const GitAuthorEmail = Type.String({ minLength: 3, maxLength: 255, pattern: '^[^\\s<>]+@[^\\s<>]+$' });

/**
 * The observability child span's name. Any readable text, as the spec says "string" (and OpenHands
 * takes any): "fix tests nightly" is fine. Control characters and over-long names are refused
 * because span names end up in trace backends' indexes; low cardinality is the caller's part.
 */
export const SPAN_NAME = { minLength: 1, maxLength: 128, pattern: '^[^\\x00-\\x1f\\x7f]+$' } as const;
export const SpanName = Type.String(SPAN_NAME);

export const ScalarValue = Type.Union([Type.String(), Type.Number(), Type.Boolean()]);
/** Scalars or homogeneous scalar arrays (spec part 8). */
export const ObservabilityMetadata = Type.Record(
  Type.String(),
  Type.Union([
    Type.String(),
    Type.Number(),
    Type.Boolean(),
    Type.Array(Type.String()),
    Type.Array(Type.Number()),
    Type.Array(Type.Boolean()),
  ]),
);

export const ConversationSpec = Type.Object(
  {
    owner: Type.Optional(Type.String()),
    title: Type.Optional(Type.String({ maxLength: 200 })),
    /** Explicit placement: the Sandbox to attach to; it must be RUNNING. */
    sandboxName: Type.Optional(Type.String()),
    /** Automatic placement when no sandboxName is given; copied from the owner's settings at start. */
    sandboxGrouping: Type.Optional(SandboxGrouping),
    initialMessage: Type.Optional(InitialMessage),
    selectedRepository: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$' })),
    selectedBranch: Type.Optional(Type.String()),
    /** Host of selectedRepository; github when absent. */
    gitProvider: Type.Optional(GitProvider),
    gitUserName: Type.Optional(GitAuthorName),
    gitUserEmail: Type.Optional(GitAuthorEmail),
    /** Name of a Secret (same namespace) holding per-conversation secrets. Never the values. */
    secretsRef: Type.Optional(Type.String()),
    plugins: Type.Optional(Type.Array(PluginSpec)),
    /** The owner's Auto-Load marketplaces at start; their plugins are added to `plugins` when the conversation starts. */
    autoLoadMarketplaces: Type.Optional(Type.Array(AutoLoadMarketplace)),
    /** The owner's login on a Git host at start: its configuration repository (`<login>/.agents` or `/service-config`) gives user skills. */
    ownerGitLogin: Type.Optional(
      Type.Object({ login: Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$' }), provider: GitProvider }, { additionalProperties: false }),
    ),
    /** Model of this conversation's agent instead of the deployment default (same endpoint and key). */
    llmModel: Type.Optional(Type.String({ minLength: 1 })),
    /** Appended to the agent's system prompt. */
    systemMessageSuffix: Type.Optional(Type.String()),
    /** Agent steps a run may take (the owner's conversation_settings.max_iterations); absent: the agent server's default. */
    maxIterations: Type.Optional(Type.Integer({ minimum: 1 })),
    /**
     * The agent waits for approval (the owner's conversation_settings): `always` before each action,
     * `risky` before those the model rates HIGH or UNKNOWN (LLM security analyzer), as OpenHands maps
     * confirmation_mode with security_analyzer none / llm.
     */
    confirmationMode: Type.Optional(Type.Union([Type.Literal('always'), Type.Literal('risky')])),
    /**
     * `plan`: the agent is told to investigate and write its plan to PLAN.md without changing
     * anything else (an instruction in the system prompt; its tools are the default ones).
     */
    agentType: Type.Optional(Type.Union([Type.Literal('default'), Type.Literal('plan')])),
    /** The conversation (same owner) this one is a sub-conversation of. */
    parentConversation: Type.Optional(Type.String()),
    /**
     * The conversation (same owner, same sandbox: `sandboxName`) this one forks: it is started on
     * the agent server by forking that one (its events and state copied, the source unchanged)
     * instead of from a start request; no repository is cloned (the workspace is the source's).
     */
    forkOf: Type.Optional(Type.String({ pattern: '^[0-9a-f]{32}$' })),
    /**
     * Start-request fields of OpenHands clients that agentyard stores and shows as given: what
     * started it, pull requests, sharing, suggested task, callback processors, agent profile.
     */
    clientFields: Type.Optional(
      Type.Object(
        {
          trigger: Type.Optional(Type.String()),
          prNumbers: Type.Optional(Type.Array(Type.Integer())),
          public: Type.Optional(Type.Boolean()),
          suggestedTask: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
          processors: Type.Optional(Type.Array(Type.Unknown())),
          agentProfileId: Type.Optional(Type.String()),
        },
        { additionalProperties: false },
      ),
    ),
    observability: Type.Optional(
      Type.Object(
        {
          spanName: Type.Optional(Type.String()),
          tags: Type.Optional(Type.Array(Type.String())),
          metadata: Type.Optional(ObservabilityMetadata),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type ConversationSpec = Static<typeof ConversationSpec>;

/** Start task statuses, in order (ARCHITECTURE.md "Controller"). */
export const START_TASK_STEPS = [
  'WORKING',
  'WAITING_FOR_SANDBOX',
  'PREPARING_REPOSITORY',
  'RUNNING_SETUP_SCRIPT',
  'SETTING_UP_GIT_HOOKS',
  'SETTING_UP_SKILLS',
  'STARTING_CONVERSATION',
  'READY',
] as const;
// Spelled out: a mapped spread makes Static<> collapse to never.
export const StartTaskStatus = Type.Union([
  Type.Literal('WORKING'),
  Type.Literal('WAITING_FOR_SANDBOX'),
  Type.Literal('PREPARING_REPOSITORY'),
  Type.Literal('RUNNING_SETUP_SCRIPT'),
  Type.Literal('SETTING_UP_GIT_HOOKS'),
  Type.Literal('SETTING_UP_SKILLS'),
  Type.Literal('STARTING_CONVERSATION'),
  Type.Literal('READY'),
  Type.Literal('ERROR'),
]);
export type StartTaskStatus = Static<typeof StartTaskStatus>;

/** Lower case on the wire, as the OpenHands agent server sends it. */
export const ExecutionStatus = Type.Union([
  Type.Literal('idle'),
  Type.Literal('running'),
  Type.Literal('paused'),
  Type.Literal('waiting_for_confirmation'),
  Type.Literal('finished'),
  Type.Literal('error'),
  Type.Literal('stuck'),
]);
export type ExecutionStatus = Static<typeof ExecutionStatus>;

export const TokenUsage = Type.Object({
  prompt_tokens: Type.Integer(),
  completion_tokens: Type.Integer(),
  cache_read_tokens: Type.Optional(Type.Integer()),
  cache_write_tokens: Type.Optional(Type.Integer()),
  reasoning_tokens: Type.Optional(Type.Integer()),
});

export const UsageMetrics = Type.Object({
  model_name: Type.Optional(Type.String()),
  accumulated_cost: Type.Number(),
  accumulated_token_usage: TokenUsage,
});
export type UsageMetrics = Static<typeof UsageMetrics>;

export const ConversationStatus = Type.Object({
  observedGeneration: Type.Optional(Type.Integer()),
  conditions: Type.Optional(Type.Array(Condition)),
  startTask: Type.Optional(
    Type.Object({
      status: StartTaskStatus,
      detail: Type.Optional(Type.String()),
      updatedAt: Type.Optional(Time),
    }),
  ),
  /** The Sandbox this conversation was placed on. */
  sandboxName: Type.Optional(Type.String()),
  executionStatus: Type.Optional(ExecutionStatus),
  /** While the agent's run waits for the model provider's rate limit (429): until when. Set and cleared by the agent server's reports. */
  rateLimitedUntil: Type.Optional(Time),
  metrics: Type.Optional(UsageMetrics),
  /** Whether the initial message has been handed to the agent server (makes the last step idempotent). */
  initialMessageDelivered: Type.Optional(Type.Boolean()),
  /**
   * What SETTING_UP_SKILLS loaded, kept so STARTING_CONVERSATION hands the agent exactly that:
   * the skill names the conversation will have (reported in that step), the configuration
   * repositories' skills and the Auto-Load plugins that go into the start request.
   */
  startSkills: Type.Optional(
    Type.Object({
      names: Type.Array(Type.String()),
      skills: Type.Array(Type.Record(Type.String(), Type.Unknown())),
      plugins: Type.Array(PluginSpec),
    }),
  ),
});
export type ConversationStatus = Static<typeof ConversationStatus>;

export const Conversation = Type.Object({
  apiVersion: Type.Literal(API_VERSION),
  kind: Type.Literal('Conversation'),
  metadata: ObjectMeta,
  spec: ConversationSpec,
  status: Type.Optional(ConversationStatus),
});
export type Conversation = Static<typeof Conversation>;

export const ConversationKind: ResourceKind<Conversation> = {
  apiVersion: API_VERSION,
  kind: 'Conversation',
  plural: 'conversations',
  shortNames: ['conv'],
  hasStatus: true,
  schema: Conversation,
};
