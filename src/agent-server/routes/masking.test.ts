// Secret masking through the agent server's HTTP API after a real run (real agent, real shell, the
// scripted model): a command prints a per-conversation secret as base64 (alone and at an offset,
// standard and URL-safe), hex and URL-encoded; no stored event, read back over HTTP, holds any of
// those forms (#18 finding 12). The expected forms are computed here with Buffer, independently.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createAgent } from '../../agent/agent.ts';
import { SECRET_MASK } from '../../agent/mask.ts';
import { eventually, useRealAgentServer, userText } from '../test-support.ts';

const t = useRealAgentServer({ createAgent });

const SECRET = 'ghp_MaskMe0123456789abcdefXYZ';

/** The encodings a reader could turn back into the secret (cores: the characters that depend on it alone). */
function leakedForms(): string[] {
  const b = Buffer.from(SECRET);
  const atOffset = (prefix: string) => {
    const whole = Buffer.concat([Buffer.from(prefix), b]).toString('base64');
    const start = Math.ceil((prefix.length * 8) / 6);
    return whole.slice(start, Math.floor(((prefix.length + b.length) * 8) / 6));
  };
  const forms = [b.toString('base64').replace(/=+$/, ''), atOffset('x'), atOffset('xy'), atOffset('user:'), b.toString('hex'), encodeURIComponent(SECRET)];
  return [...forms, ...forms.map((f) => f.replaceAll('+', '-').replaceAll('/', '_'))];
}

describe('secret masking in events', () => {
  it('masks a secret printed as base64 (any offset, URL-safe), hex and URL encoding', async () => {
    const body = {
      workspace: { kind: 'LocalWorkspace', working_dir: join(t.dir.path, 'wd') },
      agent: { llm: { model: 'openai/scripted' }, tools: [{ name: 'terminal' }] },
      secrets: { DEPLOY_TOKEN: { kind: 'StaticSecret', value: SECRET } },
    };
    const id: string = (await t.s.api('/api/conversations', { method: 'POST', body })).body.id;
    const command = [
      'printf %s "$DEPLOY_TOKEN" | base64 -w0; echo',
      'printf %s "x$DEPLOY_TOKEN" | base64 -w0; echo',
      'printf %s "xy$DEPLOY_TOKEN" | base64 -w0; echo',
      'printf %s "user:$DEPLOY_TOKEN" | base64 -w0 | tr "+/" "-_"; echo',
      'printf %s "$DEPLOY_TOKEN" | od -An -tx1 | tr -d " \\n"; echo',
      'node -e "process.stdout.write(encodeURIComponent(process.env.DEPLOY_TOKEN))"; echo',
      'echo marker-$((40+2))',
    ].join('; ');
    t.llm.push({ toolCalls: [{ name: 'terminal', arguments: { command } }] }, { content: 'Done.' });
    await t.s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('print it', true) });
    await eventually(async () => (await t.s.api(`/api/conversations/${id}`)).body.execution_status === 'finished', 15_000);

    const events = JSON.stringify((await t.s.api(`/api/conversations/${id}/events/search?limit=100`)).body.items);
    expect(events).toContain('marker-42'); // the command ran and its output was recorded
    expect(events.split(SECRET_MASK).length - 1).toBeGreaterThanOrEqual(6);
    expect(events).not.toContain(SECRET);
    for (const form of leakedForms()) expect(events, form).not.toContain(form);
  });
});
