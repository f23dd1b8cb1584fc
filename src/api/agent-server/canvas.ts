// Canvas extensions (OpenHands 1.58 agent_server/canvas_extensions): installable UI bundles that
// add pages to the Canvas frontend, with an optional backend process the agent server starts and
// proxies a browser to (/app-backends). The manifest is `canvas-extension.json` at the package
// root. Schema and type share a name.
import Type, { type Static } from 'typebox';
import { Nullable } from '../events/common.ts';

export const CANVAS_MANIFEST_FILE = 'canvas-extension.json';
/** Kebab-case, as the SDK's extension names (and the `{extension_name}` path parameter). */
export const EXTENSION_NAME_PATTERN = '^[a-z0-9]+(?:-[a-z0-9]+)*$';
export const ExtensionName = Type.String({ minLength: 1, maxLength: 255, pattern: EXTENSION_NAME_PATTERN, description: 'Canvas extension name (lowercase alphanumeric, hyphens)' });
/** A relative path inside the package: no absolute path, no `..` segment (links are checked on disk). */
const RELATIVE_PATH = '^(?!/)(?!(?:.*/)?\\.\\.(?:/|$)).+$';

export const CanvasExtensionPage = Type.Object({
  id: Type.String({ pattern: EXTENSION_NAME_PATTERN, description: 'Unique contribution id within the extension' }),
  title: Type.String({ description: 'Page title shown in Canvas navigation' }),
  path: Type.String({ pattern: '^/[a-z0-9]+(?:-[a-z0-9]+)*(?:/[a-z0-9]+(?:-[a-z0-9]+)*)*$', description: "Route the page is mounted at, e.g. '/dashboard'" }),
});
export type CanvasExtensionPage = Static<typeof CanvasExtensionPage>;

export const CanvasExtensionContributes = Type.Object({
  pages: Type.Array(CanvasExtensionPage, { default: [], description: 'Pages contributed to Canvas navigation' }),
});

export const BackendPlatform = Type.Union([Type.Literal('linux-amd64'), Type.Literal('linux-arm64')]);
export type BackendPlatform = Static<typeof BackendPlatform>;

export const CanvasExtensionBackendArtifact = Type.Object({
  path: Type.String({ default: '', description: 'Package-relative .tar.gz artifact path' }),
  url: Nullable(Type.String({ description: 'Public HTTPS .tar.gz artifact URL' })),
  sha256: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'Lowercase SHA-256 checksum' }),
  strip_components: Type.Integer({ default: 0, minimum: 0, maximum: 16, description: 'Leading archive path components to remove' }),
});
export type CanvasExtensionBackendArtifact = Static<typeof CanvasExtensionBackendArtifact>;

export const CanvasExtensionBackendHealth = Type.Object({
  path: Type.String({ default: '/health', pattern: "^/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*$" }),
  timeout_seconds: Type.Number({ default: 30, exclusiveMinimum: 0, maximum: 300 }),
  interval_seconds: Type.Number({ default: 0.1, exclusiveMinimum: 0, maximum: 10 }),
});

/** The environment a backend may inherit: nothing else of the agent server's reaches it. */
export const INHERITABLE_ENV = ['LANG', 'LC_ALL', 'LC_CTYPE', 'PATH', 'TMPDIR', 'TZ'] as const;

export const CanvasExtensionBackend = Type.Object({
  schema_version: Type.Literal(1),
  artifacts: Type.Object({ 'linux-amd64': Type.Optional(CanvasExtensionBackendArtifact), 'linux-arm64': Type.Optional(CanvasExtensionBackendArtifact) }, { minProperties: 1, additionalProperties: false }),
  /** `{port}`, `{data_dir}` and `{artifact_dir}` are replaced; argv[0] must lie in `{artifact_dir}`. */
  argv: Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }),
  health: Type.Optional(CanvasExtensionBackendHealth),
  inherit_environment: Type.Array(Type.Union(INHERITABLE_ENV.map((n) => Type.Literal(n))), { default: [], uniqueItems: true }),
});
export type CanvasExtensionBackend = Static<typeof CanvasExtensionBackend>;

export const CanvasExtensionManifest = Type.Object({
  schema_version: Type.Literal(1, { description: 'Manifest schema version' }),
  name: Type.String({ pattern: EXTENSION_NAME_PATTERN, description: 'Extension name (kebab-case)' }),
  display_name: Type.String({ description: 'Human-readable extension name' }),
  version: Type.String({ description: 'Extension version' }),
  description: Type.String({ default: '', description: 'Extension description' }),
  entrypoint: Type.String({ minLength: 1, pattern: RELATIVE_PATH, description: 'Path, relative to the extension package root, to the bundle entry file' }),
  contributes: Type.Object({ pages: Type.Array(CanvasExtensionPage, { default: [] }) }, { default: { pages: [] }, description: 'Contributions this extension makes to the Canvas UI' }),
  backend: Type.Optional(CanvasExtensionBackend),
  /** An SVG, relative to the package root (anything else is dropped, as OpenHands does). */
  icon: Type.Optional(Type.String({ description: 'Path, relative to the extension package root, to an SVG icon' })),
});
export type CanvasExtensionManifest = Static<typeof CanvasExtensionManifest>;

export const InstallCanvasExtensionRequest = Type.Object({
  source: Type.String({ minLength: 1, description: "Canvas extension source - git URL, GitHub shorthand, or local path. Examples: 'github:owner/repo', '/path/to/extension'" }),
  ref: Nullable(Type.String({ description: 'Optional branch, tag, or commit to install' })),
  repo_path: Nullable(Type.String({ description: 'Subdirectory path within the repository (for monorepos)' })),
  force: Type.Boolean({ default: false, description: 'If true, overwrite existing installation' }),
});
export type InstallCanvasExtensionRequest = Static<typeof InstallCanvasExtensionRequest>;

export const InstalledCanvasExtension = Type.Object({
  name: Type.String(),
  version: Type.String(),
  description: Type.String(),
  /** A fresh install is always disabled. */
  enabled: Type.Boolean(),
  source: Type.String(),
  requested_ref: Type.Union([Type.String(), Type.Null()]),
  resolved_ref: Type.Union([Type.String(), Type.Null()]),
  repo_path: Type.Union([Type.String(), Type.Null()]),
  installed_at: Type.String(),
  install_path: Type.String(),
  /** Null when the installed manifest no longer validates (it is re-read on every request). */
  manifest: Type.Union([CanvasExtensionManifest, Type.Null()]),
});
export type InstalledCanvasExtension = Static<typeof InstalledCanvasExtension>;

export const InstalledCanvasExtensionList = Type.Object({ canvas_extensions: Type.Array(InstalledCanvasExtension) });
export type InstalledCanvasExtensionList = Static<typeof InstalledCanvasExtensionList>;

export const UpdateCanvasExtensionStateRequest = Type.Object({ enabled: Type.Boolean() });
export const UpdateCanvasExtensionStateResponse = Type.Object({ name: Type.String(), enabled: Type.Boolean() });
export const UninstallCanvasExtensionResponse = Type.Object({ message: Type.String() });

/** Approval of one exact installed revision (GET .../backend reports it). */
export const BackendRevisionRequest = Type.Object({ revision: Type.String({ minLength: 1 }) });
export type BackendRevisionRequest = Static<typeof BackendRevisionRequest>;

export const BackendState = Type.Union(['missing', 'stopped', 'starting', 'ready', 'unhealthy', 'unsupported'].map((s) => Type.Literal(s)));
export type BackendState = 'missing' | 'stopped' | 'starting' | 'ready' | 'unhealthy' | 'unsupported';

export const BackendStatus = Type.Object({
  name: Type.String(),
  state: BackendState,
  revision: Type.Union([Type.String(), Type.Null()]),
  prepared_revision: Type.Union([Type.String(), Type.Null()]),
  pid: Type.Union([Type.Integer(), Type.Null()]),
  port: Type.Union([Type.Integer(), Type.Null()]),
  detail: Type.Union([Type.String(), Type.Null()]),
});
export interface BackendStatus {
  name: string;
  state: BackendState;
  revision: string | null;
  prepared_revision: string | null;
  pid: number | null;
  port: number | null;
  detail: string | null;
}

export const BackendLogsQuery = Type.Object({ limit_bytes: Type.Integer({ minimum: 1, maximum: 256 * 1024, default: 64 * 1024 }) });
export const BackendLogs = Type.Object({ name: Type.String(), logs: Type.String(), truncated: Type.Boolean() });
export type BackendLogs = Static<typeof BackendLogs>;

/** The browser session of one ready backend: its credential travels only as an HttpOnly cookie. */
export const AppBackendSessionResponse = Type.Object({
  ingress_url: Type.String(),
  expires_at: Type.String({ format: 'date-time' }),
  iframe_sandbox: Type.String(),
});
export type AppBackendSessionResponse = Static<typeof AppBackendSessionResponse>;

export const APP_BACKEND_SESSION_COOKIE = 'oh_app_backend_session';
