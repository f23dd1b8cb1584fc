// The skills of one conversation as the agent uses them: loaded once when the agent is created
// (plugins add theirs with addExtra), the invoke_skill tool when AgentSkills exist, the prompt
// section, and keyword triggers for a user message about to be recorded.
import type { Event, ObservationEvent } from '../../api/events/index.ts';
import { invokeSkillTool, wantsInvokeSkill } from '../tools/invoke-skill.ts';
import type { AgentTool } from '../tools/tool.ts';
import type { AgentHost, UserMessageSkills } from '../types.ts';
import { conversationSkillSources } from './index.ts';
import { firedPathRules, matchPathRule, pathRulesText, touchedPath } from './path-rules.ts';
import { matchTriggers, skillsPromptSection, triggeredSkillsText } from './prompt.ts';
import { mergeByName, type Skill } from './types.ts';

export class ConversationSkills {
  #skills: Skill[];
  /** Project skills (load_project_skills): they stay on top of plugin skills added later, as in 1.58. */
  readonly #project: readonly Skill[];
  readonly #systemSuffix: string | undefined;
  readonly #userSuffix: string | undefined;

  readonly #workspaceDir: string;
  readonly #disabled: readonly string[];

  constructor(host: Pick<AgentHost, 'workspaceDir' | 'request' | 'requestSkillsOnly'>) {
    this.#workspaceDir = host.workspaceDir;
    const { base, project } = conversationSkillSources(host);
    this.#project = project;
    this.#skills = mergeByName(base, project);
    const ctx = host.request.agent?.agent_context;
    this.#systemSuffix = ctx?.system_message_suffix?.trim() || undefined;
    this.#userSuffix = ctx?.user_message_suffix?.trim() || undefined;
    this.#disabled = ctx?.disabled_skills ?? [];
  }

  get all(): readonly Skill[] {
    return this.#skills;
  }

  /**
   * Plugin skills (override by name all but project skills). Call before the system prompt is recorded to have them listed,
   * then add `toolsMissingFrom(tools)` to the agent's tools (invoke_skill, if plugins brought the first AgentSkills).
   */
  addExtra(extra: readonly Skill[]): void {
    this.#skills = mergeByName(this.#skills, extra, this.#project);
  }

  /**
   * Skills under every source this conversation has (public skills, marketplace standalone skills):
   * they fill only names nothing else defines, minus agent_context.disabled_skills.
   */
  addBase(base: readonly Skill[]): void {
    const disabled = new Set(this.#disabled);
    this.#skills = mergeByName(base.filter((s) => !disabled.has(s.name)), this.#skills);
  }

  toolsMissingFrom(tools: readonly AgentTool[]): AgentTool[] {
    return this.tools().filter((t) => !tools.some((x) => x.name === t.name));
  }

  /** invoke_skill when AgentSkills-format skills exist (OpenHands attaches it only then). */
  tools(): AgentTool[] {
    return wantsInvokeSkill(this.#skills) ? [invokeSkillTool(() => this.#skills) as AgentTool] : [];
  }

  /** Skills, then agent_context.system_message_suffix as given (OpenHands' custom suffix). */
  promptSection(model?: string): string {
    return [skillsPromptSection(this.#skills, model), this.#systemSuffix].filter(Boolean).join('\n\n');
  }

  /** Skills the message's keywords trigger, skipping those already activated in this conversation. */
  forUserMessage(text: string, events: readonly Event[]): UserMessageSkills {
    const activated = new Set<string>();
    for (const e of events) if (e.kind === 'MessageEvent') for (const n of e.activated_skills ?? []) activated.add(n);
    const matches = matchTriggers(this.#skills, text, activated);
    // agent_context.user_message_suffix goes with every user message (OpenHands). One text item: the
    // model reads extended content joined without separators.
    const extra = [matches.length ? triggeredSkillsText(matches) : '', this.#userSuffix ?? ''].filter(Boolean).join('\n\n');
    return { extended_content: extra ? [{ type: 'text', text: extra }] : [], activated_skills: matches.map((m) => m.skill.name) };
  }

  /**
   * An observation of an action that touched a file (its `path`) gets the path rules matching that
   * file and not yet fired in this conversation, in extended_content (OpenHands path rules); `fired`
   * names the rules it adds.
   */
  withPathRules(event: ObservationEvent, action: unknown, events: readonly Event[]): { event: ObservationEvent; fired: string[] } {
    const rules = this.#skills.filter((s) => s.paths?.length);
    if (!rules.length) return { event, fired: [] };
    const rel = touchedPath(action, this.#workspaceDir);
    if (!rel) return { event, fired: [] };
    const fired = firedPathRules(rules, events);
    const matches = rules.flatMap((skill) => {
      const pattern = fired.has(skill.name) ? undefined : matchPathRule(skill, rel);
      return pattern ? [{ skill, pattern }] : [];
    });
    if (!matches.length) return { event, fired: [] };
    return { event: { ...event, extended_content: [...(event.extended_content ?? []), { type: 'text', text: pathRulesText(matches) }] }, fired: matches.map((m) => m.skill.name) };
  }

  /** Names of the path rules fired in these events so far (OpenHands' state.activated_path_rules), in rule order. */
  activatedPathRules(events: readonly Event[]): string[] {
    const rules = this.#skills.filter((s) => s.paths?.length);
    if (!rules.length) return [];
    const fired = firedPathRules(rules, events);
    return rules.filter((r) => fired.has(r.name)).map((r) => r.name);
  }
}
