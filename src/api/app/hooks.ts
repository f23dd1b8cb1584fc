// `GET /api/v1/app-conversations/{id}/hooks`: the hooks configured in the conversation's workspace
// (`{project_dir}/.openhands/hooks.json`, read live from its agent server), grouped by event type
// as the OpenHands app server answers it.
import Type, { type Static } from 'typebox';
import { HOOK_EVENT_FIELDS, HOOK_TYPES } from '../agent-server/hooks.ts';
import { LiteralUnion, STRICT } from '../events/common.ts';

export const HookDefinitionInfo = Type.Object(
  {
    type: LiteralUnion(HOOK_TYPES),
    command: Type.String(),
    /** Seconds. */
    timeout: Type.Integer(),
    async: Type.Boolean(),
  },
  STRICT,
);
export type HookDefinitionInfo = Static<typeof HookDefinitionInfo>;

export const HookMatcherInfo = Type.Object({ matcher: Type.String(), hooks: Type.Array(HookDefinitionInfo) }, STRICT);
export type HookMatcherInfo = Static<typeof HookMatcherInfo>;

export const HookEventInfo = Type.Object({ event_type: LiteralUnion(HOOK_EVENT_FIELDS), matchers: Type.Array(HookMatcherInfo) }, STRICT);
export type HookEventInfo = Static<typeof HookEventInfo>;

/** Event types without any matcher are left out; no hooks file gives an empty list. */
export const ConversationHooksResponse = Type.Object({ hooks: Type.Array(HookEventInfo) }, STRICT);
export type ConversationHooksResponse = Static<typeof ConversationHooksResponse>;
