// Child conversations, /goal loops, plugins loaded after start (OpenHands 1.58): request and response
// bodies of POST /api/conversations/{id}/children, /goal and /load_plugin (navigate's body is in conversation.ts).
import Type, { type Static } from 'typebox';
import { Nullable } from '../events/common.ts';

/** `POST /api/conversations/{id}/children`: a child conversation that works on `task`. */
export const StartChildConversationRequest = Type.Object({
  /** The child's first user message. */
  task: Type.String({ minLength: 1 }),
  title: Nullable(Type.String()),
  /** 'worktree': a git worktree of the parent's repository; 'shared' (or no repository): the parent's directory. */
  isolation: Type.Optional(Type.Union([Type.Literal('worktree'), Type.Literal('shared')], { default: 'worktree' })),
});
export type StartChildConversationRequest = Static<typeof StartChildConversationRequest>;

export const StartChildConversationResponse = Type.Object({
  conversation_id: Type.String({ format: 'uuid' }),
  parent_conversation_id: Type.String({ format: 'uuid' }),
  status: Type.String(),
  title: Nullable(Type.String()),
  url: Nullable(Type.String()),
  workspace: Nullable(Type.String()),
  isolation: Nullable(Type.Union([Type.Literal('worktree'), Type.Literal('shared')])),
});
export type StartChildConversationResponse = Static<typeof StartChildConversationResponse>;

/** `POST /api/conversations/{id}/load_plugin`: a plugin of the conversation's registered marketplaces. */
export const LoadPluginRequest = Type.Object({
  /** `plugin-name` or `plugin-name@marketplace-name`. */
  plugin_ref: Type.String(),
});
export type LoadPluginRequest = Static<typeof LoadPluginRequest>;

/** `POST /api/conversations/{id}/goal`: a /goal loop in this conversation. */
export const StartGoalRequest = Type.Object({
  /** The goal to pursue and audit. */
  objective: Type.String(),
  /** Audit rounds at most before giving up (status `capped`). */
  max_iterations: Type.Optional(Type.Integer({ minimum: 1, default: 10 })),
});
export type StartGoalRequest = Static<typeof StartGoalRequest>;
