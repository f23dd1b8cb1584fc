// `invoke_skill`: the model loads the full text of a skill listed in <available_skills>
// (OpenHands tool/builtins/invoke_skill.py). Attached only when AgentSkills-format skills exist.
// The invocation is recorded by its observation (skill_name, not an error).
import { relative } from 'node:path';
import type { InvokeSkillAction, InvokeSkillObservation } from '../../api/events/index.ts';
import { renderCommands } from '../skills/execute.ts';
import { renderSkill, type Skill } from '../skills/index.ts';
import { requireString, textContent, type AgentTool } from './tool.ts';

const DESCRIPTION = `Invoke a skill by name.

This is the only supported way to use a skill listed in \`<available_skills>\`: call it with the \`<name>\` shown there, and the skill's full content comes back as the result.`;

export function wantsInvokeSkill(skills: readonly Skill[]): boolean {
  return skills.some((s) => s.is_agentskills_format);
}

export function invokeSkillTool(skills: () => readonly Skill[]): AgentTool<InvokeSkillAction> {
  return {
    name: 'invoke_skill',
    definitionKind: 'InvokeSkillTool',
    actionKind: 'InvokeSkillAction',
    observationKind: 'InvokeSkillObservation',
    description: DESCRIPTION,
    parameters: { type: 'object', properties: { name: { type: 'string', description: 'Name of the loaded skill to invoke.' } }, required: ['name'] },
    toAction: (args) => ({ kind: 'InvokeSkillAction', name: requireString(args, 'name') }),
    readOnly: true,
    async execute(action, ctx): Promise<InvokeSkillObservation> {
      const name = action.name.trim();
      const all = skills();
      const skill = all.find((s) => s.name === name);
      const fail = (text: string): InvokeSkillObservation => ({ kind: 'InvokeSkillObservation', content: textContent(text), is_error: true, skill_name: name });
      if (!skill) {
        const available = all.filter((s) => !s.disable_model_invocation).map((s) => s.name).sort().join(', ') || '<none>';
        return fail(`Unknown skill '${name}'. Available skills: ${available}.`);
      }
      if (skill.disable_model_invocation) return fail(`Skill '${name}' cannot be invoked directly. It can only be activated by trigger matching.`);
      let text = ctx.mask(await renderCommands(renderSkill(skill), ctx.workspaceDir, ctx.signal));
      // Skills may ship scripts/ and references/ next to SKILL.md: say where, relative to the workspace when inside it.
      if (skill.root && skill.source) {
        const rel = relative(ctx.workspaceDir, skill.root);
        const shown = rel && !rel.startsWith('..') ? rel : skill.root;
        text += `\n\n---\nThis skill's files are in ${shown}; resolve relative paths in it from there.`;
      }
      return { kind: 'InvokeSkillObservation', content: textContent(text), is_error: false, skill_name: name };
    },
  };
}

/** Skills the model invoked in this conversation, in order (ConversationInfo.invoked_skills). */
export function invokedSkills(events: readonly { kind: string }[]): string[] {
  const out: string[] = [];
  for (const e of events as readonly { kind: string; observation?: { kind: string; skill_name?: string; is_error?: boolean } }[]) {
    const o = e.kind === 'ObservationEvent' ? e.observation : undefined;
    if (o?.kind === 'InvokeSkillObservation' && !o.is_error && o.skill_name && !out.includes(o.skill_name)) out.push(o.skill_name);
  }
  return out;
}
