// Smaller agent-server payloads: event pages, bash, git, server info, generic responses and errors.
import Type, { type Static } from 'typebox';
import { Nullable, STRICT } from '../events/common.ts';
import { Event } from '../events/events.ts';

/** `GET /api/conversations/{id}/events/search`. `next_page_id` is the first event of the next page. */
export const EventPage = Type.Object({
  items: Type.Array(Event),
  next_page_id: Nullable(Type.String()),
});
export type EventPage = Static<typeof EventPage>;

export const EventSortOrder = Type.Union([Type.Literal('TIMESTAMP'), Type.Literal('TIMESTAMP_DESC')]);
export type EventSortOrder = Static<typeof EventSortOrder>;

/** `POST /api/bash/start_bash_command` and `execute_bash_command`. Timeout in seconds. */
export const ExecuteBashRequest = Type.Object({
  command: Type.String(),
  cwd: Nullable(Type.String()),
  timeout: Type.Optional(Type.Integer({ minimum: 1, default: 300 })),
});
export type ExecuteBashRequest = Static<typeof ExecuteBashRequest>;

/** Bash event ids are hex UUIDs without dashes. */
export const BashCommand = Type.Object(
  {
    id: Type.String(),
    timestamp: Type.String(),
    command: Type.String(),
    cwd: Nullable(Type.String()),
    timeout: Type.Integer(),
    kind: Type.Literal('BashCommand'),
  },
  STRICT,
);
export type BashCommand = Static<typeof BashCommand>;

/** One chunk of output (stdout/stderr at most 1 MiB each); `exit_code` is set on the last, -1 on timeout. */
export const BashOutput = Type.Object(
  {
    id: Type.String(),
    timestamp: Type.String(),
    command_id: Type.String(),
    order: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
    exit_code: Nullable(Type.Integer()),
    stdout: Nullable(Type.String()),
    stderr: Nullable(Type.String()),
    kind: Type.Literal('BashOutput'),
  },
  STRICT,
);
export type BashOutput = Static<typeof BashOutput>;

export const BashError = Type.Object(
  {
    id: Type.String(),
    timestamp: Type.String(),
    code: Type.String(),
    detail: Type.String(),
    kind: Type.Literal('BashError'),
  },
  STRICT,
);
export type BashError = Static<typeof BashError>;

export const BashEvent = Type.Union([BashCommand, BashOutput, BashError]);
export type BashEvent = Static<typeof BashEvent>;

export const BashEventPage = Type.Object({
  items: Type.Array(BashEvent),
  next_page_id: Nullable(Type.String()),
});
export type BashEventPage = Static<typeof BashEventPage>;

export const GitChangeStatus = Type.Union([
  Type.Literal('MOVED'),
  Type.Literal('ADDED'),
  Type.Literal('DELETED'),
  Type.Literal('UPDATED'),
]);
export type GitChangeStatus = Static<typeof GitChangeStatus>;

/** `GET /api/git/changes?path=`: one entry per changed file, path relative and POSIX. */
export const GitChange = Type.Object({ status: GitChangeStatus, path: Type.String() }, STRICT);
export type GitChange = Static<typeof GitChange>;

/** `GET /api/git/diff?path=`: whole file contents before and after (not a unified diff). */
export const GitDiff = Type.Object(
  { modified: Type.Union([Type.String(), Type.Null()]), original: Type.Union([Type.String(), Type.Null()]) },
  STRICT,
);
export type GitDiff = Static<typeof GitDiff>;

/** One commit of `GET /api/git/commits`: author name, author date (strict ISO 8601), first line of the message. */
export const GitCommit = Type.Object(
  { sha: Type.String(), short_sha: Type.String(), subject: Type.String(), author: Type.String(), timestamp: Type.String() },
  STRICT,
);
export type GitCommit = Static<typeof GitCommit>;

/** `GET /api/git/commits?path=&limit=`: the newest commits reachable from HEAD, newest first. */
export const GitCommitsPage = Type.Object({ commits: Type.Array(GitCommit), has_more: Type.Boolean() }, STRICT);
export type GitCommitsPage = Static<typeof GitCommitsPage>;

/** `GET /server_info`. `idle_time` is seconds since the last execution (drives idle pausing). */
export const ServerInfo = Type.Object({
  uptime: Type.Number({ minimum: 0 }),
  idle_time: Type.Number({ minimum: 0 }),
  title: Type.Optional(Type.String()),
  version: Type.String(),
  sdk_version: Type.Optional(Type.String()),
  tools_version: Type.Optional(Type.String()),
  workspace_version: Type.Optional(Type.String()),
  build_git_sha: Type.Optional(Type.String()),
  build_git_ref: Type.Optional(Type.String()),
  /** OpenHands reports its Python here; this server is not Python (null). */
  python_version: Type.Optional(Nullable(Type.String())),
  usable_tools: Type.Optional(Type.Array(Type.String())),
  runtime_idle_timeout_seconds: Nullable(Type.Number()),
  capabilities: Type.Optional(Type.Array(Type.String())),
  max_foreground_terminal_timeout_seconds: Nullable(Type.Number()),
  /** Where conversations run: `local` (this server's own sandbox). */
  conversation_runtime: Type.Optional(Type.String()),
  available_conversation_runtimes: Type.Optional(Type.Array(Type.String())),
  app_backend_ingress_url: Type.Optional(Nullable(Type.String())),
  docs: Type.Optional(Type.String()),
  redoc: Type.Optional(Type.String()),
});
export type ServerInfo = Static<typeof ServerInfo>;

/** `/alive`, `/health`: `{"status":"ok"}`. */
export const HealthStatus = Type.Object({ status: Type.String() });
export type HealthStatus = Static<typeof HealthStatus>;

/** Generic acknowledgement. `success:false` is used by PATCH on an unknown conversation. */
export const Success = Type.Object({ success: Type.Boolean() });
export type Success = Static<typeof Success>;

/** One entry of a 422 body (FastAPI). `input` is sanitized: secret values never echo back. */
export const ValidationError = Type.Object({
  loc: Type.Array(Type.Union([Type.String(), Type.Integer()])),
  msg: Type.String(),
  type: Type.String(),
  input: Type.Optional(Type.Unknown()),
  ctx: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});
export type ValidationError = Static<typeof ValidationError>;

export const HTTPValidationError = Type.Object({ detail: Type.Array(ValidationError) });
export type HTTPValidationError = Static<typeof HTTPValidationError>;

/** The largest request body the agent server reads (JSON). Clients check it before sending, so a body that would be refused is not uploaded; the server answers one it is sent with 413 (announced or streamed, see facade/body.test.ts). */
export const REQUEST_BODY_LIMIT_BYTES = 10 * 1024 * 1024;
