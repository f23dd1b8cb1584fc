// Interrupt, max iterations, stuck detection and the terminal tool over the agent server's HTTP
// API, with the real agent, a real shell and the scripted model. What is asserted is what a client
// reads back: statuses and events.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createAgentWith } from '../agent/agent.ts';
import { eventually, useRealAgentServer, userText } from './test-support.ts';

// Short terminal waits so a quiet command returns in a fraction of a second (OpenHands: 30 s).
const NO_OUTPUT_MS = 400;
const t = useRealAgentServer({ createAgent: createAgentWith({ model: { maxRetries: 0 }, terminal: { noChangeTimeoutMs: NO_OUTPUT_MS, inputSettleMs: 300 } }) });

type Call = { name: string; arguments: Record<string, unknown> };
const calls = (...toolCalls: Call[]) => ({ toolCalls });
const terminal = (command: string, extra: Record<string, unknown> = {}) => calls({ name: 'terminal', arguments: { command, ...extra } });
const think = (thought: string) => calls({ name: 'think', arguments: { thought } });

async function create(extra: Record<string, unknown> = {}): Promise<string> {
  const body = { workspace: { kind: 'LocalWorkspace', working_dir: join(t.dir.path, 'wd') }, agent: { llm: { model: 'openai/scripted' }, tools: [{ name: 'terminal' }] }, ...extra };
  const r = await t.s.api('/api/conversations', { method: 'POST', body });
  expect(r.status).toBe(201);
  return r.body.id;
}
const status = async (id: string) => (await t.s.api(`/api/conversations/${id}`)).body.execution_status;
const until = (id: string, want: string) => eventually(async () => (await status(id)) === want, 15_000);
const events = async (id: string) => (await t.s.api(`/api/conversations/${id}/events/search?limit=100`)).body.items as any[];
const say = (id: string, text: string) => t.s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText(text, true) });
const observations = async (id: string) => (await events(id)).filter((e) => e.kind === 'ObservationEvent' && e.tool_name === 'terminal').map((e) => e.observation);
const text = (o: any) => o.content.map((c: any) => c.text).join('');

/** A model answer held until the client hangs up (the agent aborted the call); `aborted` says whether it did. */
function heldAnswer() {
  const state = { aborted: false };
  const step = async (req: { signal: AbortSignal }) => {
    await new Promise((resolve) => req.signal.addEventListener('abort', resolve, { once: true }));
    state.aborted = true;
    return { content: 'never delivered' };
  };
  return { state, step };
}

describe('interrupt over HTTP', () => {
  it('cancels the model call in flight: paused, an InterruptEvent, nothing from the cancelled answer; the next message goes on', async () => {
    const id = await create();
    const held = heldAnswer();
    t.llm.push(held.step);
    await say(id, 'think hard');
    await eventually(async () => (await status(id)) === 'running' && t.llm.remaining() === 0);
    expect((await t.s.api(`/api/conversations/${id}/interrupt`, { method: 'POST' })).body).toEqual({ success: true });
    await until(id, 'paused');
    await eventually(() => held.state.aborted);
    const all = await events(id);
    expect(all.filter((e) => e.kind === 'InterruptEvent')).toMatchObject([{ source: 'user' }]);
    expect(JSON.stringify(all)).not.toContain('never delivered');
    t.llm.push({ content: 'back again' });
    await say(id, 'go on');
    await until(id, 'finished');
    expect((await t.s.api(`/api/conversations/${id}/agent_final_response`)).body).toEqual({ response: 'back again' });
  });

  it('stops a long terminal command: the run ends paused at once and the action gets its answer', async () => {
    const id = await create();
    t.llm.push(terminal('sleep 30; echo too-late'));
    await say(id, 'wait a long time');
    await eventually(async () => (await events(id)).some((e) => e.kind === 'ActionEvent' && e.tool_name === 'terminal'));
    const started = Date.now();
    await t.s.api(`/api/conversations/${id}/interrupt`, { method: 'POST' });
    await until(id, 'paused');
    await eventually(async () => (await observations(id)).length === 1);
    expect(Date.now() - started).toBeLessThan(10_000);
    const [obs] = await observations(id);
    expect(obs).toMatchObject({ exit_code: -1 });
    expect(text(obs)).not.toContain('too-late');
    expect(obs.metadata.suffix).toContain('The run was stopped while the command was running');
  });
});

describe('max iterations over HTTP', () => {
  it('ends the run with a ConversationErrorEvent MaxIterationsReached and status error; a new message starts a new count', async () => {
    const id = await create({ max_iterations: 2 });
    t.llm.push(think('one'), think('two'));
    await say(id, 'keep thinking');
    await until(id, 'error');
    const all = await events(id);
    expect(all.filter((e) => e.kind === 'ActionEvent')).toHaveLength(2);
    expect(all.filter((e) => e.kind === 'ConversationErrorEvent')).toMatchObject([{ code: 'MaxIterationsReached', detail: expect.stringContaining('maximum of 2 iterations') }]);
    expect((await t.s.api(`/api/conversations/${id}`)).body.max_iterations).toBe(2);
    t.llm.push({ content: 'done now' });
    await say(id, 'one more try');
    await until(id, 'finished');
  });
});

describe('stuck detection over HTTP', () => {
  it('by repeated error: the same failing call gets one nudge, then the conversation is stuck', async () => {
    const id = await create();
    const bad = calls({ name: 'no_such_tool', arguments: { x: 1 } });
    t.llm.push(bad, bad, bad, bad);
    await say(id, 'use the tool');
    await until(id, 'stuck');
    const all = await events(id);
    expect(all.filter((e) => e.kind === 'AgentErrorEvent')).toHaveLength(4);
    const nudges = all.filter((e) => e.kind === 'MessageEvent' && e.source === 'environment');
    expect(nudges).toHaveLength(1);
    expect(nudges[0].llm_message.content[0].text).toContain('same arguments 3 times');
    expect(t.llm.requests).toHaveLength(4);
  });

  // The monologue pattern itself is covered in src/agent/policies.test.ts: over HTTP it cannot be
  // reached any more, since a run of a finished conversation asks the model nothing (OpenHands).
  it('no monologue over runs: POST /run on a finished conversation asks the model nothing', async () => {
    const id = await create();
    t.llm.push({ content: 'first thought' });
    await say(id, 'hello');
    await until(id, 'finished');
    const before = (await events(id)).length;
    for (let i = 0; i < 3; i++) expect((await t.s.api(`/api/conversations/${id}/run`, { method: 'POST' })).status).toBe(200);
    expect(t.llm.requests).toHaveLength(1);
    expect((await t.s.api(`/api/conversations/${id}`)).body.execution_status).toBe('finished');
    expect(await events(id)).toHaveLength(before);
    t.llm.push({ content: 'listening' });
    await say(id, 'go on');
    await until(id, 'finished');
    expect(t.llm.requests).toHaveLength(2);
  });

  it('by alternating pattern: A/B/A/B/A/B actions with alternating observations', async () => {
    const id = await create();
    t.llm.push(terminal('echo ping'), terminal('echo pong'), terminal('echo ping'), terminal('echo pong'), terminal('echo ping'), terminal('echo pong'));
    await say(id, 'play');
    await until(id, 'stuck');
    expect((await observations(id)).map(text)).toEqual(['ping', 'pong', 'ping', 'pong', 'ping', 'pong']);
    expect(t.llm.requests).toHaveLength(6);
  });
});

describe('terminal over HTTP', () => {
  it('answers an interactive program with is_input, after the no-output soft timeout returned control', async () => {
    const id = await create();
    t.llm.push(terminal('read -p "name? " x; echo "got $x"'), terminal('hello', { is_input: true }), { content: 'answered' });
    await say(id, 'answer the prompt');
    await until(id, 'finished');
    const [asked, answered] = await observations(id);
    expect(asked).toMatchObject({ timeout: true, exit_code: -1, is_error: false });
    expect(asked.metadata.suffix).toContain(`no new output after ${NO_OUTPUT_MS / 1000} seconds`);
    expect(text(answered)).toContain('got hello');
    expect(answered).toMatchObject({ timeout: false, exit_code: 0 });
  });

  it('returns a quiet command at the soft timeout; an empty command collects its later output', async () => {
    const id = await create();
    t.llm.push(terminal('sleep 1.5; echo late-output'), terminal('', { timeout: 10 }), { content: 'seen' });
    await say(id, 'wait for it');
    await until(id, 'finished');
    const [quiet, more] = await observations(id);
    expect(quiet).toMatchObject({ timeout: true, exit_code: -1 });
    expect(text(quiet)).toBe('');
    expect(text(more)).toContain('late-output');
    expect(more).toMatchObject({ exit_code: 0 });
    expect(more.metadata.prefix).toContain('previous command');
  });

  it('reset starts a fresh shell: variables are gone', async () => {
    const id = await create();
    t.llm.push(terminal('export KEEP=kept; echo "[$KEEP]"'), terminal('echo "[${KEEP:-unset}]"', { reset: true }), terminal('', { reset: true }), { content: 'reset' });
    await say(id, 'reset the shell');
    await until(id, 'finished');
    const [set, after, bare] = await observations(id);
    expect(text(set)).toBe('[kept]');
    expect(text(after)).toBe('[unset]');
    expect(text(bare)).toContain('Terminal session has been reset');
  });

  it('caps a long output for the model and keeps the full text in the file it names', async () => {
    const id = await create();
    t.llm.push(terminal('seq 1 30000'), (req) => {
      const tool = req.messages.filter((m) => m.role === 'tool').at(-1)!;
      expect(JSON.stringify(tool.content).length).toBeLessThan(40_000);
      return { content: 'read it' };
    });
    await say(id, 'print a lot');
    await until(id, 'finished');
    const [obs] = await observations(id);
    const full = Array.from({ length: 30000 }, (_, i) => String(i + 1)).join('\n');
    expect(text(obs).length).toBeLessThan(31_000);
    expect(text(obs)).toContain('<response clipped');
    expect(text(obs).startsWith('1\n2\n3\n')).toBe(true);
    expect(text(obs).endsWith('29999\n30000')).toBe(true);
    const file = /the full output \((\d+) characters\) is in (\S+)\]/.exec(obs.metadata.suffix);
    expect(file).not.toBeNull();
    expect(Number(file![1])).toBe(full.length);
    expect(file![2]!.startsWith(obs.full_output_save_dir)).toBe(true);
    // Kept outside the workspace, whole.
    expect(file![2]!.startsWith(join(t.dir.path, 'wd'))).toBe(false);
    expect(readFileSync(file![2]!, 'utf8')).toBe(full);
  });
});
