// Which skills a conversation gets from agent_context's flags, side by side: a user skill in the
// server's HOME, project skills in the conversation's workspace (AGENTS.md and .agents/skills), and
// a skill of the same name in the user's home, the workspace and the request. OpenHands 1.58 loads
// user skills only with load_user_skills: true and project skills only with load_project_skills:
// true (both default to false); the user's yield to the request's, the project's override them.
// What the model's system prompt shows is compared (each skill carries a marker text there), and the
// skill names a client reads back from the conversation (include_skills=true).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { until } from '../../src/testing/until.ts';
import type { Side } from './servers.ts';
import { startBody, type View } from './flows.ts';

function write(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

const skillMd = (name: string, marker: string) => `---\nname: ${name}\ndescription: ${marker}\n---\nUse ${name}.\n`;

const NAMES = ['user-notes', 'shared-name', 'project-notes', 'agents'];
const MARKERS = ['user-notes-marker', 'shared-from-user', 'project-notes-marker', 'shared-from-project', 'shared-from-request', 'agents-md-marker'];

export const SKILL_FLOWS: Record<string, (s: Side) => Promise<View>> = {
  async skill_flags(s) {
    write(join(s.home, '.agents', 'skills', 'user-notes', 'SKILL.md'), skillMd('user-notes', 'user-notes-marker'));
    write(join(s.home, '.agents', 'skills', 'shared-name', 'SKILL.md'), skillMd('shared-name', 'shared-from-user'));
    const project = mkdtempSync(join(s.workDir, 'skill-flags-'));
    write(join(project, 'AGENTS.md'), 'agents-md-marker: indent with tabs.\n');
    write(join(project, '.agents', 'skills', 'project-notes', 'SKILL.md'), skillMd('project-notes', 'project-notes-marker'));
    write(join(project, '.agents', 'skills', 'shared-name', 'SKILL.md'), skillMd('shared-name', 'shared-from-project'));
    const explicit = [{ name: 'shared-name', content: 'shared-from-request: the request says so.', trigger: null }];

    const converse = async (agentContext: Record<string, unknown> | undefined) => {
      const before = s.llm.requests.length;
      s.llm.push({ toolCalls: [{ name: 'finish', arguments: { message: 'ok' } }] });
      const body = startBody(s, { workspace: { kind: 'LocalWorkspace', working_dir: project }, initial_message: { role: 'user', content: [{ type: 'text', text: 'hello' }] } });
      if (agentContext) (body['agent'] as Record<string, unknown>)['agent_context'] = agentContext;
      const r = await s.api('/api/conversations', { method: 'POST', body });
      const id = r.body.id as string;
      const end = await until('the run to end', async () => {
        const st = (await s.api(`/api/conversations/${id}`)).body.execution_status;
        return ['finished', 'error', 'stuck'].includes(st) ? st : undefined;
      });
      const system = JSON.stringify(s.llm.requests[before]?.messages[0] ?? '');
      const info = (await s.api(`/api/conversations/${id}?include_skills=true`)).body;
      return {
        status: r.status,
        end,
        prompt: MARKERS.filter((m) => system.includes(m)),
        // The names this flow plants (other flows leave installed skills in the home).
        record: ((info?.agent?.agent_context?.skills ?? []) as { name: string }[]).map((k) => k.name).filter((n) => NAMES.includes(n)).sort(),
      };
    };

    try {
      return {
        no_context: await converse(undefined),
        no_flags: await converse({}),
        user: await converse({ load_user_skills: true }),
        project: await converse({ load_project_skills: true }),
        both: await converse({ load_user_skills: true, load_project_skills: true }),
        user_and_request: await converse({ skills: explicit, load_user_skills: true }),
        all_and_request: await converse({ skills: explicit, load_user_skills: true, load_project_skills: true }),
        request_only: await converse({ skills: explicit }),
      };
    } finally {
      // The user skills would join later flows that ask for them.
      for (const name of ['user-notes', 'shared-name']) rmSync(join(s.home, '.agents', 'skills', name), { recursive: true, force: true });
    }
  },
};
