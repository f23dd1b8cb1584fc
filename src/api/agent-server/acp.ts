// ACP agents (Agent Client Protocol): an agent that delegates each turn to an ACP server run as a
// subprocess in the sandbox (OpenHands 1.58 ACPAgent / ACPAgentSettings). The agent-server routes:
// POST /api/acp/models (what a server offers, before a conversation) and
// POST /api/conversations/{id}/switch_acp_model.
import Type, { type Static } from 'typebox';
import { JsonObject, LiteralUnion, Nullable } from '../events/common.ts';
import { SecretInput } from './policy.ts';

/** The ACP servers 1.58 knows by name (`custom`: `acp_command` says what to run). */
export const ACP_SERVER_KINDS = ['claude-code', 'codex', 'gemini-cli', 'kimi-code', 'pi', 'opencode', 'custom'] as const;
export const AcpServerKind = LiteralUnion(ACP_SERVER_KINDS);
export type AcpServerKind = Static<typeof AcpServerKind>;

/** 1.58 ACPFileSecretSpec: a reserved secret whose value is written to a file the ACP server authenticates from. */
export const AcpFileSecretSpec = Type.Object({
  secret_name: Type.String({ minLength: 1, description: "The conversation secret whose value is the file's content." }),
  filename: Type.String({ minLength: 1, pattern: '^(?!\\.{1,2}$)[^/\\\\]+$', description: 'Bare name of the file (no path).' }),
  env_var: Type.String({ minLength: 1, description: 'The environment variable that tells the server where the credential is.' }),
  subdir: Type.String({ minLength: 1, pattern: '^(?!/)(?!\\.$)(?!.*(^|/)\\.\\.(/|$))[^\\\\]+$', description: "Folder under the conversation's `acp` directory (relative, no `..`)." }),
  env_points_to: Type.Optional(Type.Union([Type.Literal('dir'), Type.Literal('file')], { default: 'file', description: 'Whether `env_var` names the folder or the file.' })),
  warn_if_unset: Type.Optional(Type.Array(Type.String(), { description: 'Companion variables the server also needs (advisory).' })),
});
export type AcpFileSecretSpec = Static<typeof AcpFileSecretSpec>;

/**
 * The launch fields an ACP agent shares between its `agent` form (kind `ACPAgent`) and its settings
 * form (`agent_kind: "acp"`). Timeouts in seconds, as OpenHands has them.
 */
const ACP_LAUNCH = {
  acp_command: Type.Optional(Type.Array(Type.String(), { description: 'The command that starts the ACP server (stdio). Empty: the default of `acp_server`.' })),
  acp_args: Type.Optional(Type.Array(Type.String(), { description: 'Arguments appended to the command.' })),
  acp_model: Nullable(Type.String({ description: 'The model the ACP server should use; null: its own default.' })),
  acp_session_mode: Nullable(Type.String({ description: "Session mode set after the session is created (session/set_mode); null: the provider's default." })),
  acp_prompt_timeout: Type.Optional(Type.Number({ exclusiveMinimum: 0, description: 'Seconds without any update from the server before a turn is given up.' })),
  acp_startup_timeout: Type.Optional(Type.Number({ exclusiveMinimum: 0, description: 'Seconds for start, handshake and session creation.' })),
  acp_isolate_data_dir: Type.Optional(Type.Boolean({ description: "HOME of the ACP server in the conversation's own directory instead of the sandbox user's." })),
  acp_file_secrets: Type.Optional(Type.Array(AcpFileSecretSpec, { description: "Credential files written for the ACP server from the conversation's secrets. Absent: 1.58's built-in ones (Codex, Kimi, Gemini Vertex, Pi)." })),
};

/** `ACPAgentSettings` (`agent_kind: "acp"`), as /api/acp/models and start requests take it. */
export const AcpAgentSettings = Type.Object({
  agent_kind: Type.Optional(Type.Literal('acp')),
  acp_server: Type.Optional(AcpServerKind),
  ...ACP_LAUNCH,
  mcp_config: Type.Optional(JsonObject),
  agent_context: Nullable(JsonObject),
});
export type AcpAgentSettings = Static<typeof AcpAgentSettings>;

/** The ACP fields of an `agent` of kind `ACPAgent` (the rest of `Agent` is lenient already). */
export const AcpAgentFields = {
  acp_server: Nullable(Type.String({ description: 'Which ACP server this is (informational; `acp_command` is what runs).' })),
  ...ACP_LAUNCH,
  acp_resume_session_id: Nullable(Type.String({ description: 'An ACP session to load instead of creating one.' })),
};

export const AcpModelDiscoveryRequest = Type.Object({
  agent_settings: AcpAgentSettings,
  secrets: Type.Optional(Type.Record(Type.String(), SecretInput, { description: "Credentials for the server, as a start request's `secrets`." })),
  refresh: Type.Optional(Type.Boolean({ default: false, description: 'Ask the server again instead of reusing a result.' })),
});
export type AcpModelDiscoveryRequest = Static<typeof AcpModelDiscoveryRequest>;

export const AcpModelInfo = Type.Object({
  model_id: Type.String(),
  name: Nullable(Type.String()),
  description: Nullable(Type.String()),
});
export type AcpModelInfo = Static<typeof AcpModelInfo>;

export const AcpModelDiscoveryError = Type.Object({
  /** ACPAuthRequired, ACPStartupTimeout, ACPSpawnError or ACPInitError (as a failed conversation start reports them). */
  code: Type.String(),
  detail: Type.String(),
});

export const AcpModelDiscovery = Type.Object({
  agent_name: Nullable(Type.String()),
  agent_version: Nullable(Type.String()),
  current_model_id: Nullable(Type.String()),
  available_models: Type.Array(AcpModelInfo),
  supports_runtime_model_switch: Type.Boolean(),
  error: Nullable(AcpModelDiscoveryError),
});
export type AcpModelDiscovery = Static<typeof AcpModelDiscovery>;

export const SwitchAcpModelRequest = Type.Object({ model: Type.String() });
export type SwitchAcpModelRequest = Static<typeof SwitchAcpModelRequest>;

/** 1.58 CredentialBindingActivation: where the canonical copy of a credential file lives, and how to authorize there. */
export const CredentialBindingActivation = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 4096 }),
    headers: Type.Optional(Type.Record(Type.String({ minLength: 1, maxLength: 256 }), Type.String({ minLength: 1, maxLength: 8192 }), { maxProperties: 16, default: {} })),
  },
  { additionalProperties: false },
);
export type CredentialBindingActivation = Static<typeof CredentialBindingActivation>;
