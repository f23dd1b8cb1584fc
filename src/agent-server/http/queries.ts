// Query parameters of the agent server routes (OpenHands names and defaults).
import Type, { type Static } from 'typebox';
import { ConversationExecutionStatus, EventSortOrder } from '../../api/agent-server/index.ts';
import { EventSource } from '../../api/events/index.ts';
import { CONVERSATION_SORT_ORDERS } from '../store/conversation-store.ts';

const Limit = Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 100 }));

const EventFilterProps = {
  /** Short kind (`MessageEvent`), OpenHands' dotted class path, or its namespaced key. */
  kind: Type.Optional(Type.String()),
  source: Type.Optional(EventSource),
  body: Type.Optional(Type.String()),
  timestamp__gte: Type.Optional(Type.String()),
  timestamp__lt: Type.Optional(Type.String()),
};

export const EventCountQuery = Type.Object(EventFilterProps);
export type EventCountQuery = Static<typeof EventCountQuery>;

export const EventSearchQuery = Type.Object({
  ...EventFilterProps,
  /** The sequence number of the first event of the page, as returned in `next_page_id`. */
  page_id: Type.Optional(Type.String()),
  limit: Limit,
  sort_order: Type.Optional(Type.Union(EventSortOrder.anyOf, { default: 'TIMESTAMP' })),
});
export type EventSearchQuery = Static<typeof EventSearchQuery>;

export const ConversationCountQuery = Type.Object({ status: Type.Optional(ConversationExecutionStatus) });
export type ConversationCountQuery = Static<typeof ConversationCountQuery>;

export const ConversationSearchQuery = Type.Object({
  page_id: Type.Optional(Type.String()),
  limit: Limit,
  status: Type.Optional(ConversationExecutionStatus),
  sort_order: Type.Optional(Type.Union(CONVERSATION_SORT_ORDERS.map((s) => Type.Literal(s)), { default: 'CREATED_AT_DESC' })),
});
export type ConversationSearchQuery = Static<typeof ConversationSearchQuery>;

/** `GET /api/conversations?ids=...`: fewer than 100 ids. */
export const ConversationBatchQuery = Type.Object({
  ids: Type.Array(Type.String(), { maxItems: 99 }),
});
export type ConversationBatchQuery = Static<typeof ConversationBatchQuery>;

export const EventIdList = Type.Array(Type.String());

/** `?path=` of the file and git routes: required (422 with loc ['query','path'] when missing). */
export const PathQuery = Type.Object({
  path: Type.String({ minLength: 1 }),
  ref: Type.Optional(Type.String()),
});
export type PathQuery = Static<typeof PathQuery>;

export const HomeQuery = Type.Object({ include_hidden: Type.Optional(Type.Boolean({ default: false })) });
export type HomeQuery = Static<typeof HomeQuery>;

export const SubdirsQuery = Type.Object({
  path: Type.String({ minLength: 1 }),
  /** The name of the first subdirectory of the page, as returned in `next_page_id`. */
  page_id: Type.Optional(Type.String()),
  limit: Limit,
  include_hidden: Type.Optional(Type.Boolean({ default: false })),
});
export type SubdirsQuery = Static<typeof SubdirsQuery>;

/** Commit SHAs (full or abbreviated): hex only, so a value never reaches git as an option (OpenHands' pattern). */
export const Sha = Type.String({ pattern: '^[0-9a-fA-F]{4,64}$' });

/** `GET /api/git/commits`. */
export const GitCommitsQuery = Type.Object({
  path: Type.String({ minLength: 1 }),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
});
export type GitCommitsQuery = Static<typeof GitCommitsQuery>;

/** `GET /api/git/diff`: `commit` (the change one commit made) or `ref` (the working tree against it), not both. */
export const GitDiffQuery = Type.Object({ commit: Type.Optional(Sha) });
export type GitDiffQuery = Static<typeof GitDiffQuery>;
