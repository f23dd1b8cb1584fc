// A plugin's agents/*.md run as sub-agents through the task tool (OpenHands' TaskToolSet, named
// task_tool_set in agent.tools), with the real agent, a plugin in a real local git repository and the
// scripted model: the sub-agent gets the definition's prompt and tools and the task's prompt, works
// in the same workspace, and its final answer comes back as the TaskObservation; the parent's events
// hold the task's action and observation only (as OpenHands records them).
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createAgent } from '../agent.ts';
import { eventually, userText, useRealAgentServer } from '../../agent-server/test-support.ts';

// One scripted model for the file, a fresh agent server per test; after each, the script used up.
const ctx = useRealAgentServer({ createAgent });

const hasGit = (() => {
  try {
    execFileSync('git', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

function write(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

function pluginRepo(): string {
  const repo = join(ctx.dir.path, 'plugin-repo');
  write(join(repo, '.plugin', 'plugin.json'), JSON.stringify({ name: 'acme-tools', version: '1.0.0' }));
  write(join(repo, 'agents', 'reviewer.md'), '---\nname: reviewer\ndescription: Reviews files\ntools: terminal\n---\nYou review code. Start every answer with VERDICT.\n');
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args], { cwd: repo, stdio: 'ignore' });
  git('init', '-q', '-b', 'main');
  git('add', '.');
  git('commit', '-q', '-m', 'plugin');
  return repo;
}

const names = (req: { tools?: { function: { name: string } }[] }) => (req.tools ?? []).map((t) => t.function.name).sort();

describe.skipIf(!hasGit)('plugin sub-agents through the task tool', () => {
  it('runs agents/reviewer.md with its prompt and tools in the same workspace; its answer is the TaskObservation', async () => {
    const wd = join(ctx.dir.path, 'project');
    write(join(wd, 'notes.txt'), 'the notes to review');
    const before = ctx.llm.requests.length;
    ctx.llm.push(
      (req) => {
        expect(names(req)).toEqual(['finish', 'task', 'terminal', 'think']);
        const task = req.tools!.find((t) => t.function.name === 'task')!;
        expect(task.function.description).toContain('- reviewer: Reviews files (Tools: terminal)');
        return { toolCalls: [{ name: 'task', arguments: { subagent_type: 'reviewer', description: 'review notes', prompt: 'Review notes.txt and say what you think.' } }] };
      },
      // The sub-agent: the definition's prompt in its system message, the task's prompt as its message, its own tools.
      (req) => {
        expect(JSON.stringify(req.messages[0])).toContain('Start every answer with VERDICT.');
        expect(req.messages.at(-1)).toMatchObject({ role: 'user' });
        expect(JSON.stringify(req.messages.at(-1))).toContain('Review notes.txt and say what you think.');
        expect(names(req)).toEqual(['finish', 'terminal', 'think']);
        return { toolCalls: [{ name: 'terminal', arguments: { command: 'cat notes.txt' } }], usage: { prompt_tokens: 7, completion_tokens: 3 } };
      },
      (req) => {
        // It worked in the parent's workspace.
        expect(JSON.stringify(req.messages.find((m) => m.role === 'tool'))).toContain('the notes to review');
        return { toolCalls: [{ name: 'finish', arguments: { message: 'VERDICT: the notes are fine.' } }], usage: { prompt_tokens: 11, completion_tokens: 2 } };
      },
      (req) => {
        const answer = JSON.stringify(req.messages.find((m) => m.role === 'tool'));
        expect(answer).toContain('Subagent: reviewer');
        expect(answer).toContain('Status: completed');
        expect(answer).toContain('VERDICT: the notes are fine.');
        return { toolCalls: [{ name: 'finish', arguments: { message: 'reviewed' } }] };
      },
    );
    const body = {
      workspace: { kind: 'LocalWorkspace', working_dir: wd },
      agent: { llm: { model: 'openai/scripted' }, tools: [{ name: 'terminal' }, { name: 'task_tool_set' }] },
      plugins: [{ source: pluginRepo() }],
      initial_message: userText('Have the notes reviewed.'),
    };
    const id = (await ctx.s.api('/api/conversations', { method: 'POST', body })).body.id as string;
    await eventually(async () => ['finished', 'error'].includes((await ctx.s.api(`/api/conversations/${id}`)).body.execution_status), 30_000);
    expect(ctx.llm.failures).toEqual([]);
    expect(ctx.llm.requests.length - before).toBe(4);
    const items = (await ctx.s.api(`/api/conversations/${id}/events/search?limit=100`)).body.items as any[];
    expect(items.find((e) => e.kind === 'ConversationErrorEvent')).toBeUndefined();
    // The parent's events: the task and its answer; the sub-agent's own steps are not among them.
    const kinds = items.filter((e) => e.kind !== 'ConversationStateUpdateEvent').map((e) => (e.kind === 'ObservationEvent' || e.kind === 'ActionEvent' ? `${e.kind}:${(e.observation ?? e.action).kind}` : e.kind));
    expect(kinds).toEqual(['SystemPromptEvent', 'MessageEvent', 'ActionEvent:TaskAction', 'ObservationEvent:TaskObservation', 'ActionEvent:FinishAction', 'ObservationEvent:FinishObservation']);
    const obs = items.find((e) => e.kind === 'ObservationEvent' && e.observation.kind === 'TaskObservation').observation;
    expect(obs).toMatchObject({ subagent: 'reviewer', status: 'completed', is_error: false, content: [{ type: 'text', text: 'VERDICT: the notes are fine.' }] });
    expect(obs.task_id).toMatch(/^task_[0-9a-f]{8}$/);
    // Its usage joins the conversation's stats under task:<id>, as OpenHands keys it.
    const stats = (await ctx.s.api(`/api/conversations/${id}`)).body.stats.usage_to_metrics;
    expect(stats[`task:${obs.task_id}`]).toMatchObject({ accumulated_token_usage: { prompt_tokens: 18, completion_tokens: 5 } });
    expect(stats.default).toBeDefined();
    // With the task tool, the plugin's agents are no "will not run" notice.
    expect(JSON.stringify(items)).not.toContain('Plugin subagents will not run');
  }, 60_000);

  it('an unknown sub-agent type is a failed TaskObservation naming the ones there are; the run goes on', async () => {
    ctx.llm.push(
      { toolCalls: [{ name: 'task', arguments: { subagent_type: 'nobody', prompt: 'do it' } }] },
      (req) => {
        const answer = JSON.stringify(req.messages.find((m) => m.role === 'tool'));
        expect(answer).toContain('Unknown agent');
        expect(answer).toContain('reviewer');
        return { toolCalls: [{ name: 'finish', arguments: { message: 'no such agent' } }] };
      },
    );
    const body = {
      workspace: { kind: 'LocalWorkspace', working_dir: join(ctx.dir.path, 'p2') },
      agent: { llm: { model: 'openai/scripted' }, tools: [{ name: 'task_tool_set' }] },
      plugins: [{ source: pluginRepo() }],
      initial_message: userText('Delegate.'),
    };
    const id = (await ctx.s.api('/api/conversations', { method: 'POST', body })).body.id as string;
    await eventually(async () => (await ctx.s.api(`/api/conversations/${id}`)).body.execution_status === 'finished', 30_000);
    expect(ctx.llm.failures).toEqual([]);
    const items = (await ctx.s.api(`/api/conversations/${id}/events/search?limit=100`)).body.items as any[];
    expect(items.find((e) => e.kind === 'ObservationEvent' && e.observation.kind === 'TaskObservation').observation).toMatchObject({ subagent: 'nobody', status: 'error', is_error: true });
  }, 60_000);
});
