// Hooks through the agent server with the real agent and the scripted model: a project hooks file
// with a blocking PreToolUse script, a Stop hook denial, POST /api/hooks, and a bad hook_config.
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createAgent } from '../agent/agent.ts';
import { eventually, useRealAgentServer, userText } from './test-support.ts';

const ctx = useRealAgentServer({ createAgent });

function project(name: string, hooks: unknown, scripts: Record<string, string>): string {
  const wd = join(ctx.dir.path, name);
  mkdirSync(join(wd, '.openhands', 'hooks'), { recursive: true });
  for (const [file, body] of Object.entries(scripts)) {
    writeFileSync(join(wd, '.openhands', 'hooks', file), `#!/bin/sh\n${body}\n`);
    chmodSync(join(wd, '.openhands', 'hooks', file), 0o755);
  }
  writeFileSync(join(wd, '.openhands', 'hooks.json'), JSON.stringify(hooks));
  return wd;
}

async function converse(wd: string, text: string, extra: Record<string, unknown> = {}): Promise<{ id: string; events: any[] }> {
  const created = await ctx.s.api('/api/conversations', { method: 'POST', body: { workspace: { kind: 'LocalWorkspace', working_dir: wd }, agent: { llm: { model: 'openai/scripted' } }, ...extra } });
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  await ctx.s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText(text, true) });
  await eventually(async () => (await ctx.s.api(`/api/conversations/${id}`)).body.execution_status === 'finished', 15_000);
  return { id, events: (await ctx.s.api(`/api/conversations/${id}/events/search`)).body.items };
}

describe('hooks through the agent server', () => {
  it('a blocking PreToolUse script from .openhands/hooks.json: UserRejectObservation (hook) and HookExecutionEvent; the run continues', async () => {
    const wd = project('p1', { PreToolUse: [{ matcher: 'terminal', hooks: [{ command: '.openhands/hooks/guard.sh' }] }] }, {
      'guard.sh': 'if grep -q "git push"; then echo "{\\"decision\\":\\"deny\\",\\"reason\\":\\"pushing is not allowed here\\"}"; fi',
    });
    ctx.llm.push({ toolCalls: [{ name: 'terminal', arguments: { command: 'git push origin main' } }] }, (req) => {
      expect(JSON.stringify(req.messages)).toContain('pushing is not allowed here');
      return { toolCalls: [{ name: 'finish', arguments: { message: 'skipped the push' } }] };
    });
    const { events } = await converse(wd, 'push it');
    const reject = events.find((e) => e.kind === 'UserRejectObservation');
    expect(reject).toMatchObject({ rejection_source: 'hook', rejection_reason: 'pushing is not allowed here', tool_name: 'terminal', source: 'environment' });
    const hook = events.find((e) => e.kind === 'HookExecutionEvent');
    expect(hook).toMatchObject({ source: 'hook', hook_event_type: 'PreToolUse', hook_command: '.openhands/hooks/guard.sh', blocked: true, success: true, exit_code: 0, action_id: reject.action_id });
    expect(events.filter((e) => e.kind === 'ObservationEvent').map((e) => e.observation.kind)).toEqual(['FinishObservation']);
  });

  it('with a security analyzer, 1.58 order: each PreToolUse HookExecutionEvent before its ActionEvent, then one SecurityAnalysisEvent over the batch (the blocked action too)', async () => {
    const wd = project('p-order', { PreToolUse: [{ matcher: 'terminal', hooks: [{ command: '.openhands/hooks/guard.sh' }] }] }, {
      'guard.sh': 'if grep -q "git push"; then echo "{\\"decision\\":\\"deny\\",\\"reason\\":\\"no push\\"}"; fi',
    });
    ctx.llm.push(
      { toolCalls: [{ name: 'terminal', arguments: { command: 'git push origin main', security_risk: 'LOW' } }, { name: 'terminal', arguments: { command: 'echo order-ok', security_risk: 'LOW' } }] },
      { toolCalls: [{ name: 'finish', arguments: { message: 'done' } }] },
    );
    const { events } = await converse(wd, 'push and echo', { confirmation_policy: { kind: 'ConfirmRisky', threshold: 'HIGH' }, security_analyzer: { kind: 'PatternSecurityAnalyzer' } });
    const batch = events.filter((e) => ['HookExecutionEvent', 'ActionEvent', 'SecurityAnalysisEvent', 'UserRejectObservation', 'ObservationEvent'].includes(e.kind) && e.tool_name !== 'finish' && e.observation?.kind !== 'FinishObservation');
    const [push, echo] = events.filter((e) => e.kind === 'ActionEvent');
    expect(batch.map((e) => [e.kind, e.action_id ?? e.id])).toEqual([
      ['HookExecutionEvent', push.id],
      ['ActionEvent', push.id],
      ['HookExecutionEvent', echo.id],
      ['ActionEvent', echo.id],
      ['SecurityAnalysisEvent', batch[4].id],
      ['UserRejectObservation', push.id],
      ['ObservationEvent', echo.id],
    ]);
    expect(batch[0]).toMatchObject({ blocked: true, reason: 'no push' });
    expect(batch[2]).toMatchObject({ blocked: false });
    expect(Object.keys(batch[4].risks).sort()).toEqual([push.id, echo.id].sort());
  });

  it('a batch held for confirmation waits whole, the hook-blocked action too (1.58): its hook rejection comes when the batch is confirmed', async () => {
    const wd = project('p-held', { PreToolUse: [{ matcher: 'terminal', hooks: [{ command: '.openhands/hooks/guard.sh' }] }] }, {
      'guard.sh': 'if grep -q "| sh"; then echo "{\\"decision\\":\\"deny\\",\\"reason\\":\\"no pipe to sh\\"}"; fi',
    });
    ctx.llm.push(
      { toolCalls: [{ name: 'terminal', arguments: { command: 'curl -s http://127.0.0.1:9/x | sh', security_risk: 'HIGH' } }, { name: 'terminal', arguments: { command: 'echo held-ok', security_risk: 'LOW' } }] },
      { toolCalls: [{ name: 'finish', arguments: { message: 'done' } }] },
    );
    const created = await ctx.s.api('/api/conversations', { method: 'POST', body: { workspace: { kind: 'LocalWorkspace', working_dir: wd }, agent: { llm: { model: 'openai/scripted' } }, confirmation_policy: { kind: 'ConfirmRisky', threshold: 'HIGH' }, security_analyzer: { kind: 'PatternSecurityAnalyzer' } } });
    const id = created.body.id as string;
    await ctx.s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('pipe and echo', true) });
    await eventually(async () => (await ctx.s.api(`/api/conversations/${id}`)).body.execution_status === 'waiting_for_confirmation', 15_000);
    const before = (await ctx.s.api(`/api/conversations/${id}/events/search`)).body.items as any[];
    expect(before.filter((e) => e.kind === 'UserRejectObservation' || e.kind === 'ObservationEvent')).toEqual([]);
    const [pipe, echo] = before.filter((e) => e.kind === 'ActionEvent');
    expect(Object.values(before.find((e) => e.kind === 'SecurityAnalysisEvent').risks)).toEqual(['HIGH', 'LOW']);

    await ctx.s.api(`/api/conversations/${id}/events/respond_to_confirmation`, { method: 'POST', body: { accept: true } });
    await eventually(async () => (await ctx.s.api(`/api/conversations/${id}`)).body.execution_status === 'finished', 15_000);
    const after = (await ctx.s.api(`/api/conversations/${id}/events/search`)).body.items as any[];
    expect(after.filter((e) => e.kind === 'UserRejectObservation')).toMatchObject([{ action_id: pipe.id, rejection_source: 'hook', rejection_reason: 'no pipe to sh' }]);
    expect(after.filter((e) => e.kind === 'ObservationEvent' && e.action_id === echo.id)).toHaveLength(1);
    expect(after.filter((e) => e.kind === 'ObservationEvent' && e.action_id === pipe.id)).toEqual([]);
  });

  it('a Stop hook denial keeps the agent working; its feedback reaches the model as an environment message', async () => {
    const wd = project('p2', { stop: [{ matcher: '*', hooks: [{ command: '.openhands/hooks/on_stop.sh', timeout: 600 }] }] }, {
      'on_stop.sh': 'test -f .checked && exit 0; touch .checked; echo "run the checks before stopping" >&2; exit 2',
    });
    ctx.llm.push({ content: 'finished already' }, (req) => {
      expect(JSON.stringify(req.messages)).toContain('[Stop hook feedback] run the checks before stopping');
      return { toolCalls: [{ name: 'finish', arguments: { message: 'checked and done' } }] };
    });
    const { id, events } = await converse(wd, 'do it');
    expect(events.filter((e) => e.kind === 'HookExecutionEvent').map((e) => [e.hook_event_type, e.blocked, e.exit_code])).toEqual([['Stop', true, 2], ['Stop', false, 0]]);
    expect(events.find((e) => e.kind === 'MessageEvent' && e.source === 'environment').llm_message.content[0].text).toBe('[Stop hook feedback] run the checks before stopping');
    expect((await ctx.s.api(`/api/conversations/${id}/agent_final_response`)).body).toEqual({ response: 'checked and done' });
  });

  it('POST /api/hooks reads {project_dir}/.openhands/hooks.json (normalized), null without one, 422 naming the file when invalid', async () => {
    const wd = project('p3', { hooks: { PreToolUse: [{ matcher: 'terminal', hooks: [{ command: 'x.sh' }] }] } }, {});
    const res = await ctx.s.api('/api/hooks', { method: 'POST', body: { project_dir: wd } });
    expect(res.status).toBe(200);
    expect(res.body.hook_config.pre_tool_use).toEqual([{ matcher: 'terminal', hooks: [{ type: 'command', command: 'x.sh', tools: [], timeout: 60, max_iterations: 3, async: false }] }]);
    expect(res.body.hook_config.stop).toEqual([]);
    // A relative project dir is taken inside the server's workspace.
    expect((await ctx.s.api('/api/hooks', { method: 'POST', body: { project_dir: '.' } })).body).toEqual({ hook_config: null });
    expect((await ctx.s.api('/api/hooks', { method: 'POST', body: {} })).body).toEqual({ hook_config: null });
    writeFileSync(join(wd, '.openhands', 'hooks.json'), '{"Stop": [{"hooks": [{"timeout": 5}]}]}');
    const bad = await ctx.s.api('/api/hooks', { method: 'POST', body: { project_dir: wd } });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].msg).toBe(`${join(wd, '.openhands', 'hooks.json')}: stop.0.hooks.0.command: 'command' is required when type is 'command'`);
  });

  it('an invalid hook_config in the start request is a 422 naming the field', async () => {
    const res = await ctx.s.api('/api/conversations', { method: 'POST', body: { workspace: { kind: 'LocalWorkspace', working_dir: 'x' }, agent: { llm: { model: 'm' } }, hook_config: { BeforeTool: [] } } });
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ loc: ['body', 'hook_config', 'BeforeTool'], msg: expect.stringContaining('unknown hook event type') });
  });
});
