// Agent definitions of the project (.agents/agents/*.md) run through the task tool with their
// `model:` and `skills:` (real agent server, scripted model over HTTP): the sub-agent's request names
// that model and carries the named skill's text and no other skill; an agent naming an unknown skill
// is skipped (as 1.58); a model that would leave the conversation's endpoint fails the task, not the run.
import { describe, expect, it } from 'vitest';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createAgent } from './agent.ts';
import { parseAgentDefinition } from './subagent-definitions.ts';
import { checkSubAgentModel } from './subagent.ts';
import { eventually, userText, useRealAgentServer } from '../agent-server/test-support.ts';

const ctx = useRealAgentServer({ createAgent });

function write(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

function project(agentFrontmatter: string): string {
  const wd = join(ctx.dir.path, 'project');
  write(join(wd, '.agents', 'agents', 'stylist.md'), `---\nname: stylist\ndescription: Checks style\ntools: terminal\n${agentFrontmatter}---\nYou check style.\n`);
  write(join(wd, '.openhands', 'microagents', 'house-style.md'), 'House style: indent with TABS-NOT-SPACES.\n');
  write(join(wd, '.openhands', 'microagents', 'other-rule.md'), 'Unrelated rule: ZEBRA-CROSSING.\n');
  return wd;
}

async function delegate(wd: string): Promise<any[]> {
  const body = {
    workspace: { kind: 'LocalWorkspace', working_dir: wd },
    agent: { llm: { model: 'openai/scripted' }, tools: [{ name: 'terminal' }, { name: 'task_tool_set' }] },
    initial_message: userText('Check the style.'),
  };
  const id = (await ctx.s.api('/api/conversations', { method: 'POST', body })).body.id as string;
  await eventually(async () => ['finished', 'error'].includes((await ctx.s.api(`/api/conversations/${id}`)).body.execution_status), 30_000);
  return (await ctx.s.api(`/api/conversations/${id}/events/search?limit=100`)).body.items as any[];
}

const taskObservation = (items: any[]) => items.find((e) => e.kind === 'ObservationEvent' && e.observation.kind === 'TaskObservation').observation;

describe('agent definitions with model: and skills:', () => {
  it('the sub-agent calls its model and has exactly the skills it names', async () => {
    const wd = project('model: openai/stylist-model\nskills: house-style\n');
    ctx.llm.push(
      (req) => {
        expect(req.model).toBe('scripted');
        // The parent loads no project skill (load_project_skills defaults to false, as in 1.58)...
        expect(JSON.stringify(req.messages[0])).not.toContain('ZEBRA-CROSSING');
        expect(req.tools!.find((t) => t.function.name === 'task')!.function.description).toContain('- stylist: Checks style');
        return { toolCalls: [{ name: 'task', arguments: { subagent_type: 'stylist', prompt: 'Check the style of main.c.' } }] };
      },
      (req) => {
        expect(req.model).toBe('stylist-model');
        const system = JSON.stringify(req.messages[0]);
        expect(system).toContain('You check style.');
        // ...yet the sub-agent finds the one it names among the project's (1.58's
        // agent_definition_to_factory looks in user and project skills whatever the parent loads).
        expect(system).toContain('TABS-NOT-SPACES');
        expect(system).not.toContain('ZEBRA-CROSSING');
        return { toolCalls: [{ name: 'finish', arguments: { message: 'style is fine' } }] };
      },
      (req) => {
        expect(req.model).toBe('scripted');
        return { toolCalls: [{ name: 'finish', arguments: { message: 'done' } }] };
      },
    );
    const items = await delegate(wd);
    expect(taskObservation(items)).toMatchObject({ subagent: 'stylist', status: 'completed', content: [{ type: 'text', text: 'style is fine' }] });
  }, 60_000);

  it("the task tool's default sub-agent, general-purpose, is built in (terminal, file editor, task tracker)", async () => {
    const wd = join(ctx.dir.path, 'plain');
    mkdirSync(wd, { recursive: true });
    ctx.llm.push(
      { toolCalls: [{ name: 'task', arguments: { prompt: 'Do the chores.' } }] },
      (req) => {
        expect((req.tools ?? []).map((t) => t.function.name).sort()).toEqual(['file_editor', 'finish', 'task_tracker', 'terminal', 'think']);
        expect(req.model).toBe('scripted');
        return { toolCalls: [{ name: 'finish', arguments: { message: 'chores done' } }] };
      },
      { toolCalls: [{ name: 'finish', arguments: { message: 'done' } }] },
    );
    const items = await delegate(wd);
    expect(taskObservation(items)).toMatchObject({ subagent: 'general-purpose', status: 'completed', content: [{ type: 'text', text: 'chores done' }] });
  }, 60_000);

  it('an agent naming an unknown skill is skipped as 1.58 skips it: not offered, a task naming it is an unknown agent; the run goes on', async () => {
    const wd = project('skills: [house-style, no-such-skill]\n');
    ctx.llm.push((req) => {
      const task = JSON.stringify(req.tools?.find((t: any) => t.function?.name === 'task'));
      expect(task).toContain('general-purpose');
      expect(task).not.toContain('stylist');
      return { toolCalls: [{ name: 'task', arguments: { subagent_type: 'stylist', prompt: 'Check.' } }] };
    }, (req) => {
      const tool = JSON.stringify(req.messages.find((m) => m.role === 'tool'));
      expect(tool).toContain("Unknown agent 'stylist'");
      expect(tool).not.toMatch(/Available agents:[^"]*stylist/);
      return { toolCalls: [{ name: 'finish', arguments: { message: 'could not' } }] };
    });
    const items = await delegate(wd);
    expect(taskObservation(items)).toMatchObject({ status: 'error', is_error: true });
  }, 60_000);

  it("a model whose provider prefix would leave the conversation's endpoint (and take its key along) is refused", () => {
    const def = (model: string) => ({ name: 'stylist', description: null, source: 'x', prompt: '', tools: [], maxIterations: null, model, skills: [] });
    // No base URL: the prefix picks the endpoint, so another provider's prefix would move the key there.
    expect(() => checkSubAgentModel(def('anthropic/claude-x'), { model: 'openai/gpt-x', apiKey: 'sk' })).toThrow(/another endpoint/);
    expect(() => checkSubAgentModel(def('openai/gpt-y'), { model: 'openai/gpt-x', apiKey: 'sk' })).not.toThrow();
    // A base URL (a gateway) serves every model it is asked for.
    expect(() => checkSubAgentModel(def('anthropic/claude-x'), { model: 'openai/gpt-x', baseUrl: 'http://gw/v1', apiKey: 'sk' })).not.toThrow();
    expect(() => checkSubAgentModel(def('inherit'), { model: 'openai/gpt-x' })).not.toThrow();
  });

  it('parses the fields OpenHands lists, skills and tools as a list or a comma-separated string', () => {
    const f = join(ctx.dir.path, 'a.md');
    write(f, '---\ndescription: "Use it <example>when X</example>"\nskills: a, b\ntools: [terminal]\nmax_iteration_per_run: 3\npermission_mode: Never_Confirm\nextra: 1\n---\nBody\n');
    expect(parseAgentDefinition(f, 'project')).toMatchObject({ name: 'a', model: 'inherit', skills: ['a', 'b'], tools: ['terminal'], maxIterations: 3, permissionMode: 'never_confirm', whenToUseExamples: ['when X'], metadata: { extra: 1 }, systemPrompt: 'Body', level: 'project' });
    write(f, '---\npermission_mode: sometimes\n---\n');
    expect(() => parseAgentDefinition(f)).toThrow(/Invalid permission_mode/);
  });

  it('POST /api/sub-agents lists the project definitions (.agents before .openhands, first wins by name, README skipped), then the built-ins; 422 for a bad body', async () => {
    const wd = join(ctx.dir.path, 'listed');
    write(join(wd, '.agents', 'agents', 'alpha.md'), '---\nname: alpha\ndescription: First\nmodel: openai/alpha-model\nskills: [s1]\ncolor: blue\n---\nAlpha prompt\n');
    write(join(wd, '.agents', 'agents', 'README.md'), 'not an agent');
    write(join(wd, '.openhands', 'agents', 'alpha.md'), '---\nname: alpha\ndescription: Shadowed\n---\n');
    write(join(wd, '.openhands', 'agents', 'beta.md'), 'Beta prompt, no frontmatter\n');
    const res = await ctx.s.api('/api/sub-agents', { method: 'POST', body: { project_dir: wd, load_user: false, load_builtin: false } });
    expect(res.status).toBe(200);
    expect(res.body.agents.map((a: any) => a.name)).toEqual(['alpha', 'beta']);
    expect(res.body.agents[0]).toEqual({
      name: 'alpha', description: 'First', model: 'openai/alpha-model', color: 'blue', tools: [], skills: ['s1'], system_prompt: 'Alpha prompt',
      when_to_use_examples: [], permission_mode: null, max_iteration_per_run: null, max_budget_per_run: null, mcp_config: null, mcp_servers: null,
      profile_store_dir: null, hooks: null, condenser: null, metadata: {}, level: 'project', source: join(wd, '.agents', 'agents', 'alpha.md'), is_builtin: false,
    });
    expect(res.body.agents[1]).toMatchObject({ name: 'beta', model: 'inherit', description: '', system_prompt: 'Beta prompt, no frontmatter', level: 'project' });
    expect((await ctx.s.api('/api/sub-agents', { method: 'POST', body: { project_dir: wd, load_user: false, load_project: false, load_builtin: false } })).body).toEqual({ agents: [] });
    // The built-ins (OpenHands' names; no browser here, so no web-researcher), after the project's.
    const all = (await ctx.s.api('/api/sub-agents', { method: 'POST', body: { project_dir: wd, load_user: false } })).body.agents;
    expect(all.map((a: any) => [a.name, a.level, a.is_builtin])).toEqual([['alpha', 'project', false], ['beta', 'project', false], ['bash-runner', 'builtin', true], ['code-explorer', 'builtin', true], ['general-purpose', 'builtin', true]]);
    const bad = await ctx.s.api('/api/sub-agents', { method: 'POST', body: { project_dir: 5 } });
    expect(bad.status).toBe(422);
    expect(JSON.stringify(bad.body)).toContain('project_dir');
  });
});
