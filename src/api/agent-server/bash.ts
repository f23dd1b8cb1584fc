// The agent server's one-shot command API (`/api/bash/*`, `/sockets/bash-events`), OpenHands
// `bash_router.py` shapes (the event schemas live in server.ts). Separate from the agent's terminal
// tool: no shared shell, no conversation.
import Type, { type Static } from 'typebox';
import { LiteralUnion, STRICT } from '../events/common.ts';
import type { BashCommand, BashOutput } from './server.ts';

export { BashCommand, BashError, BashOutput, ExecuteBashRequest } from './server.ts';

/** What the store keeps and the socket streams (BashError is only ever sent, never stored). */
export type StoredBashEvent = BashCommand | BashOutput;

export interface StoredBashEventPage {
  items: StoredBashEvent[];
  next_page_id: string | null;
}

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
