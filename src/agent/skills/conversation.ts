// The skills of one conversation as the agent uses them: loaded once when the agent is created
// (plugins add theirs with addExtra), the invoke_skill tool when AgentSkills exist, the prompt
// section, and keyword triggers for a user message about to be recorded.
import type { Event } from '../../api/events/index.ts';
import { invokeSkillTool, wantsInvokeSkill } from '../tools/invoke-skill.ts';
import type { AgentTool } from '../tools/tool.ts';
import type { AgentHost, UserMessageSkills } from '../types.ts';
import { resolveSkillsSync } from './index.ts';
import { matchTriggers, skillsPromptSection, triggeredSkillsText } from './prompt.ts';
import { mergeByName, type Skill } from './types.ts';

export class ConversationSkills {
  #skills: Skill[];

  constructor(host: Pick<AgentHost, 'workspaceDir' | 'request'>) {
    this.#skills = resolveSkillsSync(host);
  }

  get all(): readonly Skill[] {
    return this.#skills;
  }

  /** Plugin skills (override by name). Call before the system prompt is recorded to have them listed. */
  addExtra(extra: readonly Skill[]): void {
    this.#skills = mergeByName(this.#skills, extra);
  }

  /** invoke_skill when AgentSkills-format skills exist (OpenHands attaches it only then). */
  tools(): AgentTool[] {
    return wantsInvokeSkill(this.#skills) ? [invokeSkillTool(() => this.#skills) as AgentTool] : [];
  }

  promptSection(model?: string): string {
    return skillsPromptSection(this.#skills, model);
  }

  /** Skills the message's keywords trigger, skipping those already activated in this conversation. */
  forUserMessage(text: string, events: readonly Event[]): UserMessageSkills {
    const activated = new Set<string>();
    for (const e of events) if (e.kind === 'MessageEvent') for (const n of e.activated_skills ?? []) activated.add(n);
    const matches = matchTriggers(this.#skills, text, activated);
    if (!matches.length) return { extended_content: [], activated_skills: [] };
    return { extended_content: [{ type: 'text', text: triggeredSkillsText(matches) }], activated_skills: matches.map((m) => m.skill.name) };
  }
}
