// Bodies and queries of the agent server's runtime parts (OpenHands 1.58 shapes): a conversation's
// runtime state, the tool catalog, VS Code's status, repository search and workspace archives.
import Type, { type Static } from 'typebox';
import { LiteralUnion, Nullable } from '../events/common.ts';

/** GET /api/conversations/{id}/runtime: conversations run inside this server, so the runtime is always there. */
export const ConversationRuntimeInfo = Type.Object({
  runtime_status: LiteralUnion(['available', 'starting', 'missing', 'ownership_lost', 'error'] as const),
  can_resume: Type.Boolean(),
  runtime_error: Type.Union([Type.Object({ code: Type.String(), message: Type.String() }), Type.Null()]),
});
export type ConversationRuntimeInfo = Static<typeof ConversationRuntimeInfo>;

export const ToolCatalogEntry = Type.Object({
  name: Type.String(),
  /** Whether a client should offer it for `agent.tools` (built-ins and internal tools are not). */
  user_selectable: Type.Boolean(),
  /** Whether conversations here can run it (the browser tools need a Chromium). */
  usable: Type.Boolean(),
  description: Type.String(),
  /** Whether an agent that names no tools gets it. */
  in_default_set: Type.Boolean(),
});
export type ToolCatalogEntry = Static<typeof ToolCatalogEntry>;

export const ToolCatalogResponse = Type.Object({ tools: Type.Array(ToolCatalogEntry) });
export type ToolCatalogResponse = Static<typeof ToolCatalogResponse>;

export const VSCodeUrlResponse = Type.Object({ url: Type.Union([Type.String(), Type.Null()]) });
export const VSCodeStatus = Type.Object({ running: Type.Boolean(), enabled: Type.Boolean(), message: Type.Optional(Type.String()) });
export type VSCodeStatus = Static<typeof VSCodeStatus>;

export const VSCodeUrlQuery = Type.Object({ base_url: Type.Optional(Type.String()), workspace_dir: Type.Optional(Type.String()) });

export const GIT_PROVIDERS = ['github', 'gitlab', 'bitbucket', 'azure_devops'] as const;

export const GitRepositorySearchQuery = Type.Object({
  provider: LiteralUnion(GIT_PROVIDERS),
  query: Type.Optional(Type.String()),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 100 })),
  page_id: Type.Optional(Type.String()),
});
export type GitRepositorySearchQuery = Static<typeof GitRepositorySearchQuery>;

export const GitProviderRepository = Type.Object({
  id: Type.String(),
  full_name: Type.String(),
  git_provider: Type.String(),
  is_public: Type.Boolean(),
  stargazers_count: Nullable(Type.Integer()),
  pushed_at: Nullable(Type.String()),
  main_branch: Nullable(Type.String()),
});

export const GitProviderRepositoryPage = Type.Object({
  items: Type.Array(GitProviderRepository),
  next_page_id: Type.Union([Type.String(), Type.Null()]),
  /** True when this server holds no token for the provider (so nothing could be listed). */
  missing_token: Type.Boolean(),
});
export type GitProviderRepositoryPage = Static<typeof GitProviderRepositoryPage>;

export const ARCHIVE_FORMATS = ['git-delta', 'tar.gz'] as const;

/** GET /api/file/archive. */
export const ArchiveQuery = Type.Object({
  path: Type.String({ minLength: 1, description: 'Absolute path of the directory to archive (or the one git repository it holds, up to three levels down)' }),
  format: Type.Optional(LiteralUnion(ARCHIVE_FORMATS, { default: 'git-delta' })),
  base_ref: Type.Optional(Type.String({ description: "git-delta only: the base to diff against (default: the upstream branch, the default branch's merge base, or the empty tree)" })),
  use_default_excludes: Type.Optional(Type.Boolean({ default: true })),
  exclude: Type.Optional(Type.Array(Type.String())),
});
export type ArchiveQuery = Static<typeof ArchiveQuery>;
