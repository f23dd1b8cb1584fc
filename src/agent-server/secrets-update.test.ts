// Secrets of a conversation over HTTP with the real agent: a terminal command gets exactly the
// secrets it names (from the first action on), the others are not in its environment at all;
// POST /api/conversations/{id}/secrets adds one after the shell started that the next command naming
// it gets; values are masked in what the model and the events see.
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { createAgent } from '../agent/agent.ts';
import { eventually, useRealAgentServer, userText } from './test-support.ts';

const ctx = useRealAgentServer({ createAgent });

const finished = async (id: string) =>
  eventually(async () => (await ctx.s.api(`/api/conversations/${id}`)).body.execution_status === 'finished', 15_000);

describe('secrets in terminal commands', () => {
  it('the first command naming a secret gets it (masked in the observation); a command not naming it finds none', async () => {
    const body = {
      workspace: { kind: 'LocalWorkspace', working_dir: join(ctx.dir.path, 'named') },
      agent: { llm: { model: 'openai/scripted' }, tools: [{ name: 'terminal' }] },
      secrets: { GITHUB_TOKEN: { kind: 'StaticSecret', value: 'ghp_named0123456789' }, NPM_TOKEN: { kind: 'StaticSecret', value: 'npm_other4567' } },
    };
    const id = (await ctx.s.api('/api/conversations', { method: 'POST', body })).body.id;
    ctx.llm.push(
      { toolCalls: [{ name: 'terminal', arguments: { command: 'printf %s "$GITHUB_TOKEN" | wc -c; echo "token=$GITHUB_TOKEN"; env | grep -c "^NPM_TOK"' } }] },
      { toolCalls: [{ name: 'terminal', arguments: { command: 'env | grep -c -e "^GITHUB_TOK" -e "^NPM_TOK" -e ghp_named -e npm_other; env | wc -l' } }] },
      (req) => {
        const tools = req.messages.filter((m) => m.role === 'tool').map((m) => JSON.stringify(m.content));
        expect(tools[0]).toContain('19\\ntoken=<secret-hidden>\\n0');
        expect(tools[1]).toMatch(/^"0\\n\d+/);
        return { toolCalls: [{ name: 'finish', arguments: { message: 'done' } }] };
      },
    );
    await ctx.s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('use the token', true) });
    await finished(id);
    const obs = (await ctx.s.api(`/api/conversations/${id}/events/search?kind=ObservationEvent&limit=100`)).body.items.map((e: any) => e.observation).filter((o: any) => o.kind === 'TerminalObservation');
    const texts = obs.map((o: any) => o.content[0].text);
    expect(texts[0].split('\n')).toEqual(['19', 'token=<secret-hidden>', '0']);
    expect(texts[1].split('\n')[0]).toBe('0');
    expect(JSON.stringify(obs)).not.toMatch(/ghp_named0123456789|npm_other4567/);
  });
});

describe('POST /api/conversations/{id}/secrets', () => {
  it('exports a secret added after start to the next command and masks it everywhere', async () => {
    const body = {
      workspace: { kind: 'LocalWorkspace', working_dir: join(ctx.dir.path, 'project') },
      agent: { llm: { model: 'openai/scripted' }, tools: [{ name: 'terminal' }] },
      secrets: { FIRST: { kind: 'StaticSecret', value: 'first-value-1' } },
    };
    const id = (await ctx.s.api('/api/conversations', { method: 'POST', body })).body.id;

    // The shell starts before the new secret exists.
    ctx.llm.push(
      { toolCalls: [{ name: 'terminal', arguments: { command: 'echo "before=[$LATE_TOKEN]"' } }] },
      { toolCalls: [{ name: 'finish', arguments: { message: 'one' } }] },
    );
    await ctx.s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('first', true) });
    await finished(id);

    const res = await ctx.s.api(`/api/conversations/${id}/secrets`, { method: 'POST', body: { secrets: { LATE_TOKEN: 'late-token-77', THIRD: { kind: 'StaticSecret', value: 'third-value-3' } } } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true });

    ctx.llm.push(
      { toolCalls: [{ name: 'terminal', arguments: { command: 'echo "after=[$LATE_TOKEN] $THIRD $FIRST" | tee seen.txt' } }] },
      (req) => {
        const tool = req.messages.findLast((m) => m.role === 'tool');
        expect(JSON.stringify(tool?.content)).toContain('after=[<secret-hidden>] <secret-hidden> <secret-hidden>');
        return { toolCalls: [{ name: 'finish', arguments: { message: 'two' } }] };
      },
    );
    await ctx.s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('second', true) });
    await finished(id);

    const events = (await ctx.s.api(`/api/conversations/${id}/events/search?limit=100`)).body.items;
    const outputs = JSON.stringify(events.filter((e: any) => e.kind === 'ObservationEvent'));
    expect(outputs).toContain('before=[]');
    expect(outputs).not.toContain('late-token-77');
    expect(outputs).not.toContain('third-value-3');
    const info = (await ctx.s.api(`/api/conversations/${id}`)).body;
    expect(Object.keys(info.secret_registry.secret_sources).sort()).toEqual(['FIRST', 'LATE_TOKEN', 'THIRD']);
    expect(info.secret_registry.secret_sources.LATE_TOKEN.value).toBe('**********');
    expect(JSON.stringify(info)).not.toContain('late-token-77');
  });

  it('answers 422 with the field path for a bad body and 404 for an unknown conversation', async () => {
    const body = { workspace: { kind: 'LocalWorkspace', working_dir: join(ctx.dir.path, 'p2') }, agent: { llm: { model: 'openai/scripted' } } };
    const id = (await ctx.s.api('/api/conversations', { method: 'POST', body })).body.id;
    const bad = await ctx.s.api(`/api/conversations/${id}/secrets`, { method: 'POST', body: { secrets: { X: 42 } } });
    expect(bad.status).toBe(422);
    expect(JSON.stringify(bad.body)).toContain('secrets');
    const missing = await ctx.s.api('/api/conversations/00000000-0000-4000-8000-000000000000/secrets', { method: 'POST', body: { secrets: {} } });
    expect(missing.status).toBe(404);
  });
});
