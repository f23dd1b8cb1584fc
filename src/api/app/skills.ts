// `GET /api/v1/app-conversations/{id}/skills`: the skills the conversation's workspace loads, read
// live from its agent server (POST /api/skills with the conversation's working directory), in the
// OpenHands app server's shape.
import Type, { type Static } from 'typebox';
import { STRICT } from '../events/common.ts';
import { SkillInfo } from '../agent-server/skills.ts';

export const ConversationSkill = Type.Object(
  {
    name: Type.String(),
    type: SkillInfo.properties.type,
    content: Type.String(),
    triggers: Type.Array(Type.String()),
  },
  STRICT,
);
export type ConversationSkill = Static<typeof ConversationSkill>;

export const ConversationSkillsResponse = Type.Object({ skills: Type.Array(ConversationSkill) }, STRICT);
export type ConversationSkillsResponse = Static<typeof ConversationSkillsResponse>;
