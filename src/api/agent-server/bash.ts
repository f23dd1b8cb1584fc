// The agent server's one-shot command API (`/api/bash/*`, `/sockets/bash-events`), OpenHands
// `bash_router.py` shapes. Separate from the agent's terminal tool: no shared shell, no conversation.
import Type, { type Static } from 'typebox';
import { LiteralUnion, Nullable, STRICT } from '../events/common.ts';

export const ExecuteBashRequest = Type.Object({
  command: Type.String({ minLength: 1 }),
  /** Absolute, or relative to the agent server's workspace. Default: the workspace. */
  cwd: Nullable(Type.String()),
  /** Seconds; then SIGTERM to the command's process group, SIGKILL a second later, exit_code -1. */
  timeout: Type.Optional(Type.Integer({ minimum: 1, default: 300 })),
});
export type ExecuteBashRequest = Static<typeof ExecuteBashRequest>;

/** Bash event ids are hex UUIDs without dashes, as OpenHands writes them. */
const HexId = Type.String({ pattern: '^[0-9a-f]{32}$' });

export const BashCommand = Type.Object(
  {
    id: HexId,
    timestamp: Type.String(),
    command: Type.String(),
    cwd: Type.Union([Type.String(), Type.Null()]),
    timeout: Type.Integer(),
    kind: Type.Literal('BashCommand'),
  },
  STRICT,
);
export type BashCommand = Static<typeof BashCommand>;

/** A piece of a command's output (each stream at most 1 MiB characters); the last one has the exit code. */
export const BashOutput = Type.Object(
  {
    id: HexId,
    timestamp: Type.String(),
    command_id: HexId,
    /** 0, 1, ... per command, across both streams. */
    order: Type.Integer({ minimum: 0 }),
    /** Null while the command runs; -1 after a timeout or when it could not start. */
    exit_code: Type.Union([Type.Integer(), Type.Null()]),
    stdout: Type.Union([Type.String(), Type.Null()]),
    stderr: Type.Union([Type.String(), Type.Null()]),
    kind: Type.Literal('BashOutput'),
  },
  STRICT,
);
export type BashOutput = Static<typeof BashOutput>;

/** Sent on the socket for a frame that is not an ExecuteBashRequest; never stored. */
export const BashError = Type.Object(
  { id: HexId, timestamp: Type.String(), code: Type.String(), detail: Type.String(), kind: Type.Literal('BashError') },
  STRICT,
);
export type BashError = Static<typeof BashError>;

export const BashEvent = Type.Union([BashCommand, BashOutput]);
export type BashEvent = Static<typeof BashEvent>;

export const BashEventPage = Type.Object({ items: Type.Array(BashEvent), next_page_id: Type.Union([Type.String(), Type.Null()]) }, STRICT);
export type BashEventPage = Static<typeof BashEventPage>;

export const BASH_SORT_ORDERS = ['TIMESTAMP', 'TIMESTAMP_DESC'] as const;

export const BashEventSearchQuery = Type.Object({
  kind__eq: Type.Optional(LiteralUnion(['BashCommand', 'BashOutput'] as const)),
  /** With or without dashes. */
  command_id__eq: Type.Optional(Type.String()),
  timestamp__gte: Type.Optional(Type.String()),
  timestamp__lt: Type.Optional(Type.String()),
  /** Only BashOutput events with a greater order (polling for new output). */
  order__gt: Type.Optional(Type.Integer()),
  sort_order: Type.Optional(LiteralUnion(BASH_SORT_ORDERS, { default: 'TIMESTAMP' })),
  page_id: Type.Optional(Type.String()),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 100 })),
});
export type BashEventSearchQuery = Static<typeof BashEventSearchQuery>;

export const BashEventIds = Type.Array(Type.String());

export const ClearBashEventsResponse = Type.Object({ cleared_count: Type.Integer() }, STRICT);
export type ClearBashEventsResponse = Static<typeof ClearBashEventsResponse>;
