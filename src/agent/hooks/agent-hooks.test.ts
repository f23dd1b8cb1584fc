// Hooks in the agent loop, with real hook scripts in a real workspace and the scripted model over HTTP.
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../../testing/scripted-llm/server.ts';
import { setupHost, type HostSetup } from '../test-host.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
const setup = (opts: HostSetup = {}) => setupHost(opts, (fn) => cleanups.push(fn));
const text = (req: RecordedRequest) => JSON.stringify(req.messages);

function script(dir: string, name: string, body: string): string {
  mkdirSync(join(dir, '.openhands', 'hooks'), { recursive: true });
  const path = join(dir, '.openhands', 'hooks', name);
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return `.openhands/hooks/${name}`;
}

function hooksFile(dir: string, config: unknown): void {
  mkdirSync(join(dir, '.openhands'), { recursive: true });
  writeFileSync(join(dir, '.openhands', 'hooks.json'), JSON.stringify(config));
}

describe('hooks in the agent loop', () => {
  it('a blocking PreToolUse hook rejects the call (rejection_source hook); the model reads why and the run goes on', async () => {
    const t = await setup();
    const cmd = script(t.dir, 'guard.sh', 'input=$(cat); case "$input" in *rm\\ -rf*) echo "destructive command refused" >&2; exit 2;; esac; exit 0');
    hooksFile(t.dir, { PreToolUse: [{ matcher: 'terminal', hooks: [{ command: cmd }] }] });
    t.say('clean up');
    t.llm.push({ toolCalls: [{ name: 'terminal', arguments: { command: 'rm -rf /tmp/nothing-here' } }] }, (req) => {
      expect(text(req)).toContain('destructive command refused');
      return { toolCalls: [{ name: 'terminal', arguments: { command: 'echo safe' } }] };
    }, { content: 'done' });
    await t.run();
    expect(t.status()).toBe('finished');
    const [reject] = t.of('UserRejectObservation');
    expect(reject).toMatchObject({ rejection_source: 'hook', rejection_reason: 'destructive command refused', tool_name: 'terminal' });
    const hooks = t.of('HookExecutionEvent');
    expect(hooks).toHaveLength(2);
    expect(hooks[0]).toMatchObject({ source: 'hook', hook_event_type: 'PreToolUse', hook_command: cmd, blocked: true, exit_code: 2, tool_name: 'terminal', action_id: reject!.action_id });
    expect(hooks[0]!.hook_input).toMatchObject({ tool_name: 'terminal', tool_input: { command: 'rm -rf /tmp/nothing-here' } });
    expect(hooks[1]).toMatchObject({ blocked: false, success: true, exit_code: 0 });
    expect(t.of('ObservationEvent')).toHaveLength(1);
  });

  it('a batch whose blocked call is not the first: each call answered in the batch order (1.58), the observation before the later rejection', async () => {
    const deny = 'grep -q blocked-here && echo \'{"decision":"deny","reason":"no"}\' || true';
    const t = await setup({ request: { hook_config: { pre_tool_use: [{ matcher: 'terminal', hooks: [{ command: deny }] }] } } });
    t.say('x');
    t.llm.push({ toolCalls: [{ name: 'terminal', arguments: { command: 'echo first' } }, { name: 'terminal', arguments: { command: 'echo blocked-here' } }, { name: 'terminal', arguments: { command: 'echo third' } }] }, { content: 'ok' });
    await t.run();
    const actions = new Map(t.of('ActionEvent').map((a) => [a.id, JSON.parse(a.tool_call.arguments).command as string]));
    const answers = t.events.filter((e) => e.kind === 'ObservationEvent' || e.kind === 'UserRejectObservation').map((e) => `${e.kind}:${actions.get((e as { action_id: string }).action_id)}`);
    expect(answers).toEqual(['ObservationEvent:echo first', 'UserRejectObservation:echo blocked-here', 'ObservationEvent:echo third']);
  });

  it('a PreToolUse-blocked call still waits under confirmation (1.58); confirmed, it is answered by the hook, never run', async () => {
    const t = await setup({ request: { confirmation_policy: { kind: 'AlwaysConfirm' }, hook_config: { pre_tool_use: [{ matcher: '*', hooks: [{ command: 'echo \'{"decision":"deny","reason":"policy"}\'' }] }] } } });
    t.say('x');
    t.llm.push({ toolCalls: [{ name: 'terminal', arguments: { command: 'ls' } }] }, { content: 'ok' });
    await t.run();
    expect(t.statuses).toContain('waiting_for_confirmation');
    expect(t.of('UserRejectObservation')).toEqual([]);
    await t.run();
    expect(t.of('UserRejectObservation')[0]).toMatchObject({ rejection_source: 'hook', rejection_reason: 'policy' });
    expect(t.of('ObservationEvent')).toEqual([]);
  });

  it('after a restart, a held hook-blocked call is still answered by the hook (the block read back from its HookExecutionEvent)', async () => {
    const t = await setup({ request: { confirmation_policy: { kind: 'AlwaysConfirm' }, hook_config: { pre_tool_use: [{ matcher: '*', hooks: [{ command: 'echo \'{"decision":"deny","reason":"policy"}\'' }] }] } } });
    t.say('x');
    t.llm.push({ toolCalls: [{ name: 'terminal', arguments: { command: 'touch ran-anyway' } }] }, { content: 'ok' });
    await t.run();
    expect(t.status()).toBe('waiting_for_confirmation');
    await t.newAgent().run(new AbortController().signal);
    expect(t.of('UserRejectObservation')[0]).toMatchObject({ rejection_source: 'hook', rejection_reason: 'policy' });
    expect(existsSync(join(t.dir, 'ran-anyway'))).toBe(false);
  });

  it('PostToolUse hooks see the observation; secrets in hook output are masked', async () => {
    const t = await setup({ secrets: { API_TOKEN: 'tok-very-secret' }, request: { hook_config: { PostToolUse: [{ matcher: 'terminal', hooks: [{ command: 'cat >/dev/null; echo "seen with $API_TOKEN"' }] }] } } });
    t.say('x');
    t.llm.push({ toolCalls: [{ name: 'terminal', arguments: { command: 'echo hi' } }] }, { content: 'ok' });
    await t.run();
    const [post] = t.of('HookExecutionEvent');
    expect(post).toMatchObject({ hook_event_type: 'PostToolUse', stdout: 'seen with <secret-hidden>\n', action_id: t.of('ActionEvent')[0]!.id });
    expect(post!.hook_input).toMatchObject({ tool_response: { kind: 'TerminalObservation' } });
  });

  it('a Stop hook denial keeps the run going with its feedback as an environment message; the next stop is allowed', async () => {
    const t = await setup();
    const cmd = script(t.dir, 'on_stop.sh', `if [ -f stopped-once ]; then exit 0; fi; touch stopped-once; echo '{"decision":"deny","additionalContext":"run the tests first"}'`);
    hooksFile(t.dir, { stop: [{ matcher: '*', hooks: [{ command: cmd, timeout: 600 }] }] });
    t.say('x');
    t.llm.push({ content: 'all done' }, (req) => {
      expect(text(req)).toContain('[Stop hook feedback] run the tests first');
      return { toolCalls: [{ name: 'finish', arguments: { message: 'really done' } }] };
    });
    await t.run();
    expect(t.status()).toBe('finished');
    expect(t.statuses.filter((s) => s === 'finished')).toHaveLength(1);
    const feedback = t.of('MessageEvent').find((m) => m.source === 'environment');
    expect(feedback!.llm_message.content![0]).toMatchObject({ text: '[Stop hook feedback] run the tests first' });
    expect(t.of('HookExecutionEvent').map((h) => [h.hook_event_type, h.blocked])).toEqual([['Stop', true], ['Stop', false]]);
  });

  it('UserPromptSubmit: a block ends the run without a model call and hides the message; context is added otherwise', async () => {
    const t = await setup({ request: { hook_config: { user_prompt_submit: [{ hooks: [{ command: 'if grep -q forbidden; then echo "no forbidden words" >&2; exit 2; fi; echo \'{"additionalContext":"team rule: be brief"}\'' }] }] } } });
    t.say('say the forbidden word');
    await t.run();
    expect(t.status()).toBe('finished');
    expect(t.llm.requests).toHaveLength(0);
    expect(t.of('HookExecutionEvent')[0]).toMatchObject({ hook_event_type: 'UserPromptSubmit', blocked: true, message_id: t.of('MessageEvent')[0]!.id, hook_input: { message: 'say the forbidden word' } });
    t.say('hello');
    t.llm.push((req) => {
      expect(text(req)).not.toContain('forbidden');
      expect(text(req)).toContain('team rule: be brief');
      return { content: 'hi' };
    });
    await t.run();
    expect(t.status()).toBe('finished');
    expect(t.of('HookExecutionEvent')).toHaveLength(2);
  });

  it('SessionStart runs once per agent, SessionEnd at close; a bad hooks file ends the run with an error naming it', async () => {
    const t = await setup({ request: { hook_config: { SessionStart: [{ hooks: [{ command: 'echo start' }] }], SessionEnd: [{ hooks: [{ command: 'echo end' }] }] } } });
    t.say('x');
    t.llm.push({ content: 'a' }, { content: 'b' });
    await t.run();
    t.say('y');
    await t.run();
    await t.agent.close();
    expect(t.of('HookExecutionEvent').map((h) => h.hook_event_type)).toEqual(['SessionStart', 'SessionEnd']);

    const bad = await setup();
    hooksFile(bad.dir, { PreToolUse: [{ matcher: 'terminal', hooks: [{ type: 'command' }] }] });
    bad.say('x');
    await bad.run();
    expect(bad.status()).toBe('error');
    expect(bad.of('ConversationErrorEvent')[0]).toMatchObject({ code: 'HookConfigError', detail: expect.stringContaining(join(bad.dir, '.openhands', 'hooks.json')) });
  });
});
