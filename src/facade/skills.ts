// The skills of a conversation's workspace, read live from its agent server (POST /api/skills with
// the conversation's working directory), under the same paused / read-only rules as workspace files.
import type { SkillsResponse } from '../api/agent-server/skills.ts';
import type { ConversationSkillsResponse } from '../api/app/skills.ts';
import { BadGateway, NotFound } from '../api/errors.ts';
import type { AppUser } from './db/app-db.ts';
import type { FacadeDeps } from './deps.ts';
import { agentFor } from './workspace.ts';

export async function conversationSkills(d: FacadeDeps, user: AppUser, id: string): Promise<ConversationSkillsResponse> {
  const { conv, client } = await agentFor(d, user, id);
  const info = await client.getConversation(conv.metadata.name);
  if (!info) throw new NotFound(`Conversation ${id} is not known to its agent server`);
  // A relative working dir is taken inside the agent server's workspace, there as here.
  const res = await client.request('POST', '/api/skills', { body: { project_dir: info.workspace.working_dir } });
  if (!res.ok) throw new BadGateway(`The agent server answered ${res.status} to POST /api/skills`);
  const { skills } = (await res.json()) as SkillsResponse;
  return { skills: skills.map((s) => ({ name: s.name, type: s.type, content: s.content, triggers: s.triggers })) };
}
