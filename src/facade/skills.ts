// The skills of a conversation, read live from its agent server under the same paused / read-only
// rules as workspace files, merged as the agent merges them (OpenHands 1.58): the user's and the
// public skills (if the start asked, load_user_skills / load_public_skills), under the skills its start request carried
// (agent.agent_context.skills), under the working directory's (if the start asked,
// load_project_skills), both read with POST /api/skills. The agent server adds the skills of the
// conversation's plugins to agent_context.skills once its agent has loaded them (from its first
// message on).
import type { SkillsResponse } from '../api/agent-server/skills.ts';
import type { ConversationSkill, ConversationSkillsResponse } from '../api/app/skills.ts';
import { BadGateway, NotFound } from '../api/errors.ts';
import type { AppUser } from './db/app-db.ts';
import type { FacadeDeps } from './deps.ts';
import { agentFor } from './workspace.ts';

/** A skill object of a start request (OpenHands Skill: `trigger: {keywords|triggers}`, or SkillInfo: `triggers`). */
function requestSkill(raw: Record<string, unknown>): ConversationSkill | undefined {
  if (typeof raw['name'] !== 'string' || !raw['name'] || typeof raw['content'] !== 'string') return undefined;
  const trigger = raw['trigger'] as Record<string, unknown> | null | undefined;
  const list = trigger && typeof trigger === 'object' ? (trigger['keywords'] ?? trigger['triggers']) : raw['triggers'];
  const triggers = Array.isArray(list) ? list.map(String) : [];
  const agentskills = raw['is_agentskills_format'] === true || raw['type'] === 'agentskills';
  return { name: raw['name'], type: agentskills ? 'agentskills' : triggers.length ? 'knowledge' : 'repo', content: raw['content'], triggers };
}

export async function conversationSkills(d: FacadeDeps, user: AppUser, id: string): Promise<ConversationSkillsResponse> {
  const { conv, client } = await agentFor(d, user, id);
  const info = await client.getConversation(conv.metadata.name, { includeSkills: true });
  if (!info) throw new NotFound(`Conversation ${id} is not known to its agent server`);
  const ctx = info.agent.agent_context;
  const byName = new Map<string, ConversationSkill>();
  const read = async (body: Record<string, unknown>) => {
    // A relative working dir is taken inside the agent server's workspace, there as here.
    const res = await client.request('POST', '/api/skills', { body: { project_dir: info.workspace.working_dir, ...body } });
    if (!res.ok) throw new BadGateway(`The agent server answered ${res.status} to POST /api/skills`);
    for (const s of ((await res.json()) as SkillsResponse).skills) byName.set(s.name, { name: s.name, type: s.type, content: s.content, triggers: s.triggers });
  };
  // Public skills (load_public_skills) yield to the request's as user skills do.
  const own = ctx?.load_user_skills === true;
  const pub = ctx?.load_public_skills === true;
  if (own || pub) await read({ load_user: own, load_public: pub, load_project: false });
  for (const raw of ctx?.skills ?? []) {
    const s = requestSkill(raw);
    if (s) byName.set(s.name, s);
  }
  if (ctx?.load_project_skills === true) await read({ load_user: false, load_public: false, load_project: true });
  return { skills: [...byName.values()] };
}
