// Durability (spec part 4 rule 5): `agentyard up` is SIGKILLed while a start task is in a middle
// step, restarted on the same data dir, and the start continues to READY: the initial message
// reaches the agent exactly once and the events read over HTTP are all there, each once.
// The start is held deterministically through AGENTYARD_AGENT_SERVER_COMMAND: in WAITING_FOR_SANDBOX
// by a wrapper that starts the agent server only once a file exists; in STARTING_CONVERSATION by a
// proxy (held-agent-server.ts) that lets the agent server create the conversation, and run it, but
// holds the answer, so the killed process never learnt that its create succeeded.
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startScriptedLlm, type ScriptedLlm } from '../../src/testing/scripted-llm/server.ts';
import { eventually, removeDataDir, startService, type RunningService } from './harness.ts';
import { startOtlpReceiver } from './otlp-receiver.ts';
import { freePort } from '../../src/testing/ports.ts';

const repoRoot = join(import.meta.dirname, '..', '..');

interface Task {
  id: string;
  status: string;
  detail?: string | null;
  app_conversation_id?: string | null;
  sandbox_id?: string | null;
}
interface EventItem {
  id: string;
  kind: string;
  source: string;
  [k: string]: unknown;
}


function textOf(ev: EventItem): string {
  const msg = ev['llm_message'] as { content?: { text?: string }[] } | undefined;
  return (msg?.content ?? []).map((c) => c.text ?? '').join('');
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

type Hold = 'WAITING_FOR_SANDBOX' | 'STARTING_CONVERSATION';

async function killAndRestartDuring(hold: Hold): Promise<void> {
  // Twice: in STARTING_CONVERSATION the run starts at create, so `up` (and with it the model gateway)
  // can be killed while the model call is in flight; the answer is then lost and the agent retries.
  const llm: ScriptedLlm = await startScriptedLlm([{ content: 'Done after the restart.' }, { content: 'Done after the restart.' }]);
  cleanups.push(() => llm.close());
  const otlp = await startOtlpReceiver();
  cleanups.push(() => otlp.close());
  const work = mkdtempSync(join(tmpdir(), 'agentyard-restart-'));
  const dataDir = join(work, 'data');
  const release = join(work, 'release');
  const wrapper = join(work, 'held-agent-server.sh');
  writeFileSync(
    wrapper,
    `#!/bin/sh\nwhile [ ! -e '${release}' ]; do sleep 0.05; done\nexec '${process.execPath}' '${join(repoRoot, 'src/cli/main.ts')}' agent-server "$@"\n`,
    { mode: 0o755 },
  );
  const services: RunningService[] = [];
  cleanups.push(async () => {
    writeFileSync(release, ''); // never leave a wrapper waiting
    for (const s of services) await s.stop();
    removeDataDir(work);
  });
  const port = await freePort(); // agent servers push events to the API: it keeps its address
  const env = {
    LLM_MODEL: 'openai/scripted',
    LLM_BASE_URL: llm.url,
    LLM_API_KEY: 'sk-test-not-a-secret',
    AGENTYARD_AGENT_SERVER_COMMAND: JSON.stringify(
      hold === 'WAITING_FOR_SANDBOX' ? ['/bin/sh', wrapper] : [process.execPath, join(import.meta.dirname, 'held-agent-server.ts'), work, 'agent-server'],
    ),
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
    OTEL_BSP_SCHEDULE_DELAY: '50',
    // The holds talk to the test through files in its scratch directory, which an isolated sandbox
    // cannot see; adoption of isolated sandboxes after a kill is covered by isolation.test.ts.
    AGENTYARD_SANDBOX_ISOLATION: 'off',
  };

  const first = await startService({ dataDir, port, env });
  services.push(first);
  const text = 'please say done, once';
  const started = await first.api<Task>('POST', '/api/v1/app-conversations', {
    initial_message: { role: 'user', content: [{ type: 'text', text }], run: true },
  });
  expect(started.status, JSON.stringify(started.body)).toBeLessThan(300);
  const taskUrl = `/api/v1/app-conversations/start-tasks?ids=${started.body.id}`;
  // WAITING_FOR_SANDBOX: placed, the sandbox created and its agent server spawned (held by the
  // wrapper). STARTING_CONVERSATION: the agent server created the conversation; its answer is held.
  const sandboxDir = await eventually(async () => {
    const { body } = await first.api<(Task | null)[]>('GET', taskUrl);
    if (body[0]?.status !== hold) return undefined;
    if (hold === 'STARTING_CONVERSATION' && !existsSync(join(work, 'created'))) return undefined;
    const root = join(dataDir, 'sandboxes');
    const dirs = existsSync(root) ? readdirSync(root).filter((d) => existsSync(join(root, d, 'runtime.json'))) : [];
    return dirs.length === 1 ? join(root, dirs[0]!) : undefined;
  }, `the start task to be held in ${hold}`);
  const held = JSON.parse(readFileSync(join(sandboxDir, 'runtime.json'), 'utf8')) as { pid: number };
  cleanups.push(() => {
    try {
      process.kill(-held.pid, 'SIGKILL');
    } catch {
      // already stopped
    }
  });

  await first.stop('SIGKILL');
  const second = await startService({ dataDir, port, env });
  services.push(second);
  expect(second.apiKey).toBe(first.apiKey);
  // Still in the middle: nothing can have advanced while the agent server is held.
  const { body: during } = await second.api<(Task | null)[]>('GET', taskUrl);
  expect(during[0]?.status).toBe(hold);

  writeFileSync(release, '');
  const task = await eventually(async () => {
    const { body } = await second.api<(Task | null)[]>('GET', taskUrl);
    if (body[0]?.status === 'ERROR') throw new Error(`start failed: ${body[0].detail}`);
    return body[0]?.status === 'READY' ? body[0] : undefined;
  }, 'the resumed start task to be READY');
  const conversationId = task.app_conversation_id!;
  expect(`${dataDir}/sandboxes/${task.sandbox_id}`).toBe(sandboxDir);

  await eventually(async () => {
    const { body } = await second.api<({ execution_status: string } | null)[]>('GET', `/api/v1/app-conversations?ids=${conversationId}`);
    return body[0]?.execution_status === 'finished' ? true : undefined;
    // The run starts at create, so in STARTING_CONVERSATION its model call goes out while `up` (and
    // with it the model gateway) is down: the agent retries, waiting up to 30 s between attempts.
  }, 'the agent to finish', 180_000);

  // The agent server's own record of the conversation, read with the sandbox's session key.
  const { body: sandboxes } = await second.api<({ session_api_key: string; exposed_urls: { name: string; url: string }[] } | null)[]>('GET', `/api/v1/sandboxes?id=${task.sandbox_id}`);
  const agentUrl = sandboxes[0]!.exposed_urls.find((u) => u.name === 'AGENT_SERVER')!.url;
  const headers = { 'X-Session-API-Key': sandboxes[0]!.session_api_key };
  const agentConvs = (await (await fetch(`${agentUrl}/api/conversations/search`, { headers })).json()) as { items: { id: string }[] };
  expect(agentConvs.items).toHaveLength(1); // created once on the agent server
  const agentEventIds = async () => {
    const res = await fetch(`${agentUrl}/api/conversations/${agentConvs.items[0]!.id}/events/search?limit=100`, { headers });
    return ((await res.json()) as { items: EventItem[] }).items.map((e) => e.id).sort();
  };

  // Every persisted agent-server event reaches the API exactly once (pushes are retried until taken).
  const events = await eventually(async () => {
    const { body } = await second.api<{ items: EventItem[] }>('GET', `/api/v1/conversation/${conversationId}/events/search?limit=100`);
    const expected = await agentEventIds();
    // The app's log opens with the full_state snapshot (seq 0), which the agent server never persists.
    const items = body.items.filter((e) => !(e.kind === 'ConversationStateUpdateEvent' && (e as { key?: unknown }).key === 'full_state'));
    const got = [...new Set(items.map((e) => e.id))].sort();
    return JSON.stringify(got) === JSON.stringify(expected) ? items : undefined;
  }, 'the API to hold exactly the agent server events');
  const ids = events.map((e) => e.id);
  expect(new Set(ids).size).toBe(ids.length);

  const userMessages = events.filter((e) => e.kind === 'MessageEvent' && e.source === 'user');
  expect(userMessages.map(textOf)).toEqual([text]);
  const agentMessages = events.filter((e) => e.kind === 'MessageEvent' && e.source === 'agent');
  expect(agentMessages.map(textOf)).toEqual(['Done after the restart.']);
  // The model saw the message once per call: one call, or a retry of it when the gateway died mid-call.
  expect(llm.requests.length).toBeGreaterThanOrEqual(1);
  expect(llm.requests.length).toBeLessThanOrEqual(hold === 'STARTING_CONVERSATION' ? 2 : 1);
  for (const r of llm.requests) expect(JSON.stringify(r.messages).split(text).length - 1).toBe(1);
  expect(llm.failures).toEqual([]);

  // The restarted process completed the start's trace: one root, the steps it saw under it.
  const root = await eventually(async () => otlp.spans.find((s) => s.name === 'conversation' && s.traceId === conversationId), 'the root span');
  expect(otlp.spans.filter((s) => s.name === 'conversation')).toHaveLength(1);
  const last = otlp.spans.find((s) => s.name === 'start_task.STARTING_CONVERSATION');
  expect(last?.traceId).toBe(conversationId);
  expect(last?.parentSpanId).toBe(root.spanId);
}

describe('kill -9 of agentyard up in the middle of a start', () => {
  it.each<Hold>(['WAITING_FOR_SANDBOX', 'STARTING_CONVERSATION'])(
    'killed in %s, restarted: READY, the message delivered once, no event lost or repeated',
    (hold) => killAndRestartDuring(hold),
    300_000,
  );
});
