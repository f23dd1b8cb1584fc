// POST /api/agentyard/git/clone: an agentyard addition to the agent server. The app's controller
// asks the sandbox to clone the selected repository (PREPARING_REPOSITORY) so the clone happens
// where the workspace is, in embedded and cluster mode alike. The credential travels in the body
// as an HTTP Authorization header value and is given to git through its environment only.
import Type, { type Static } from 'typebox';

export const GitCloneRequest = Type.Object({
  /** HTTPS (or, in tests, loopback HTTP) URL of the repository, without credentials. */
  url: Type.String({ pattern: '^https?://[^/@\\s]+/\\S+$', maxLength: 2048 }),
  /** Target directory relative to the server's workspace (a single path segment). */
  directory: Type.String({ pattern: '^(?!\\.\\.?$)[A-Za-z0-9_.-]{1,255}$' }),
  branch: Type.Optional(Type.String({ minLength: 1, maxLength: 255, pattern: '^(?!-)[^\\s~^:?*\\[\\\\]+$' })),
  /** `Basic …` or `Bearer …`; never written to .git/config, the workspace or the log. */
  authorization: Type.Optional(Type.String({ minLength: 1, maxLength: 70_000 })),
  author_name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  author_email: Type.Optional(Type.String({ minLength: 3, maxLength: 255, pattern: '^[^\\s<>]+@[^\\s<>]+$' })),
});
export type GitCloneRequest = Static<typeof GitCloneRequest>;

export const GitCloneStatus = Type.Union([
  Type.Literal('CLONED'),
  /** The directory already held a clone of this URL (a resumed start, or a shared sandbox). */
  Type.Literal('EXISTS'),
  Type.Literal('AUTH_FAILED'),
  Type.Literal('REPOSITORY_NOT_FOUND'),
  Type.Literal('BRANCH_NOT_FOUND'),
  /** The directory exists and is not a clone of this URL. */
  Type.Literal('DIRECTORY_TAKEN'),
  Type.Literal('FAILED'),
]);
export type GitCloneStatus = Static<typeof GitCloneStatus>;

export const GitCloneResponse = Type.Object({
  status: GitCloneStatus,
  /** Absolute path of the clone in the sandbox. */
  path: Type.String(),
  branch: Type.Union([Type.String(), Type.Null()]),
  /** What went wrong, credential-free. */
  detail: Type.Union([Type.String(), Type.Null()]),
});
export type GitCloneResponse = Static<typeof GitCloneResponse>;

/** POST /api/agentyard/marketplaces/plugins: the plugins a marketplace repository lists (read in the sandbox). */
export const MarketplacePluginsRequest = Type.Object({
  url: GitCloneRequest.properties.url,
  ref: Type.Optional(Type.String({ minLength: 1, maxLength: 255, pattern: '^(?!-)[^\\s~^:?*\\[\\\\]+$' })),
  /** Directory of the marketplace inside the repository ('' or absent: the root). */
  path: Type.Optional(Type.String({ maxLength: 1024, pattern: '^(?!/)(?!.*(?:^|/)\\.\\.(?:/|$))[^\\0]*$' })),
  authorization: GitCloneRequest.properties.authorization,
});
export type MarketplacePluginsRequest = Static<typeof MarketplacePluginsRequest>;

export const MarketplacePlugin = Type.Object({
  name: Type.String(),
  /** A PluginSpec as the start request takes it. */
  source: Type.String(),
  ref: Type.Optional(Type.String()),
  repo_path: Type.Optional(Type.String()),
});
export type MarketplacePlugin = Static<typeof MarketplacePlugin>;

export const MarketplacePluginsResponse = Type.Object({
  status: Type.Union([Type.Literal('OK'), Type.Literal('AUTH_FAILED'), Type.Literal('REPOSITORY_NOT_FOUND'), Type.Literal('BRANCH_NOT_FOUND'), Type.Literal('NO_MANIFEST'), Type.Literal('FAILED')]),
  plugins: Type.Array(MarketplacePlugin),
  detail: Type.Union([Type.String(), Type.Null()]),
});
export type MarketplacePluginsResponse = Static<typeof MarketplacePluginsResponse>;
