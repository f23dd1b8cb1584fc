// Schemas of OpenHands' app-API git routes (openhands-ai 1.11, app_server/git/git_router.py and
// secrets_router.py's /git-providers): the searches a client makes to pick a repository and branch
// for a new conversation, and the provider token those searches and the clone use. Shapes, defaults
// and limits are OpenHands'; what agentyard serves of them is said per route in routes.ts.
import Type, { type Static, type TSchema } from 'typebox';

const Nullable = <T extends TSchema>(s: T) => Type.Union([s, Type.Null()]);
const STRICT = { additionalProperties: false } as const;

/** OpenHands' ProviderType: every value its routes take (agentyard searches github and forgejo; the others answer 501). */
export const PROVIDER_TYPES = ['github', 'gitlab', 'bitbucket', 'bitbucket_data_center', 'forgejo', 'azure_devops', 'enterprise_sso'] as const;
export type ProviderType = (typeof PROVIDER_TYPES)[number];
const L = Type.Literal;
export const ProviderType = Type.Union([L('github'), L('gitlab'), L('bitbucket'), L('bitbucket_data_center'), L('forgejo'), L('azure_devops'), L('enterprise_sso')], {
  description: 'Git provider (OpenHands ProviderType)',
});

const PageId = Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{1,16}={0,2}$', description: 'Optional next_page_id from the previously returned page' }));
const limit = (def: number) => Type.Optional(Type.Integer({ exclusiveMinimum: 0, maximum: 100, default: def, description: 'The max number of results in the page' }));

export const SortOrder = Type.Union([L('stars-desc'), L('stars-asc'), L('forks-desc'), L('forks-asc'), L('updated-desc'), L('updated-asc')]);

export const InstallationSearchQuery = Type.Object({ provider: ProviderType, page_id: PageId, limit: limit(100) });
export type InstallationSearchQuery = Static<typeof InstallationSearchQuery>;

export const RepositorySearchQuery = Type.Object({
  provider: ProviderType,
  query: Type.Optional(Type.String({ description: 'Search query for finding repositories. If not provided, returns user repositories.' })),
  installation_id: Type.Optional(Type.String({ description: 'github: list the repositories of this GitHub App installation (an id of /git/installations/search); not used by forgejo' })),
  page_id: PageId,
  limit: limit(100),
  sort_order: Type.Optional(SortOrder),
});
export type RepositorySearchQuery = Static<typeof RepositorySearchQuery>;

export const BranchSearchQuery = Type.Object({
  provider: ProviderType,
  repository: Type.String({ description: 'Repository name in format owner/repo' }),
  query: Type.String({ description: 'Branch name search query (empty: every branch, paged)' }),
  page_id: PageId,
  limit: limit(30),
});
export type BranchSearchQuery = Static<typeof BranchSearchQuery>;

export const SuggestedTaskSearchQuery = Type.Object({ page_id: PageId, limit: limit(30) });
export type SuggestedTaskSearchQuery = Static<typeof SuggestedTaskSearchQuery>;

/** OpenHands' Repository (service_types.py). */
export const GitRepository = Type.Object({
  id: Type.String(),
  full_name: Type.String(),
  git_provider: ProviderType,
  is_public: Type.Boolean(),
  stargazers_count: Nullable(Type.Integer()),
  link_header: Nullable(Type.String({ description: "The provider's Link header of the page this came from (OpenHands passes it through)" })),
  pushed_at: Nullable(Type.String({ description: 'ISO 8601' })),
  owner_type: Nullable(Type.Union([Type.Literal('user'), Type.Literal('organization')])),
  main_branch: Nullable(Type.String()),
});
export type GitRepository = Static<typeof GitRepository>;

export const GitBranch = Type.Object({
  name: Type.String(),
  commit_sha: Type.String(),
  protected: Type.Boolean(),
  last_push_date: Nullable(Type.String()),
});
export type GitBranch = Static<typeof GitBranch>;

export const SuggestedTask = Type.Object({
  git_provider: ProviderType,
  task_type: Type.Union([L('MERGE_CONFLICTS'), L('FAILING_CHECKS'), L('UNRESOLVED_COMMENTS'), L('OPEN_ISSUE'), L('OPEN_PR')]),
  repo: Type.String(),
  issue_number: Type.Integer(),
  title: Type.String(),
});
export type SuggestedTask = Static<typeof SuggestedTask>;

const GitPage = <T extends TSchema>(item: T) =>
  Type.Object({ items: Type.Array(item), next_page_id: Nullable(Type.String({ description: 'Opaque cursor of the next page' })) });
export const InstallationPage = GitPage(Type.String());
export const RepositoryPage = GitPage(GitRepository);
export const BranchPage = GitPage(GitBranch);
export const SuggestedTaskPage = GitPage(SuggestedTask);

/** OpenHands' ProviderToken as POST /secrets/git-providers takes it. */
export const ProviderTokenInput = Type.Object(
  {
    token: Type.Optional(Nullable(Type.String({ maxLength: 4096, description: 'Empty or absent: keep the stored token (a host-only update)' }))),
    user_id: Type.Optional(Nullable(Type.String({ maxLength: 255, description: 'Accepted and not used' }))),
    host: Type.Optional(Nullable(Type.String({ maxLength: 2048, description: "The provider's host or base URL (http:// kept, else https://); must be the installation's host for that provider" }))),
  },
  STRICT,
);
export type ProviderTokenInput = Static<typeof ProviderTokenInput>;

/** POST /api/v1/secrets/git-providers (OpenHands' POSTProviderModel, whose mcp_config this route never reads). */
export const GitProvidersRequest = Type.Object(
  {
    provider_tokens: Type.Optional(Type.Object(Object.fromEntries(PROVIDER_TYPES.map((p) => [p, Type.Optional(ProviderTokenInput)])), STRICT)),
    mcp_config: Type.Optional(Type.Null()),
  },
  STRICT,
);
export type GitProvidersRequest = Static<typeof GitProvidersRequest>;

/** OpenHands' EditResponse. */
export const EditResponse = Type.Object({ message: Type.String() });
