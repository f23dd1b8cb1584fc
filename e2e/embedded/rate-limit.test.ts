// A model provider's rate limit, end to end (#14, spec part 3: RUNNING → PAUSED "due to rate
// limits"): `agentyard up` with the scripted model behind its model gateway; the model answers 429
// with Retry-After. While the agent waits, the app-conversation record reads sandbox_status PAUSED
// (its execution_status running, the sandbox itself RUNNING); after the wait the run goes on and
// the record reads RUNNING again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScriptedLlm } from '../../src/testing/scripted-llm/server.ts';
import { conversationRecords, finished, startReady, userMessage } from './flows.ts';
import { startServiceWithModel, type RunningService } from './harness.ts';

const WAIT_S = 4;

describe('agentyard up: a rate-limited model shows as PAUSED while the agent waits', () => {
  let llm: ScriptedLlm;
  let svc: RunningService;
  let stop: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    ({ llm, svc, stop } = await startServiceWithModel());
  });
  afterAll(async () => stop?.());

  it('PAUSED during the Retry-After wait, RUNNING once the agent goes on; the sandbox keeps running', async () => {
    llm.push({ status: 429, errorMessage: 'Rate limit reached', retryAfterSeconds: WAIT_S }, { toolCalls: [{ name: 'finish', arguments: { message: 'done after the wait' } }] });
    const task = await startReady(svc, { initial_message: userMessage('answer when you may') });
    const seen: string[] = [];
    const sandboxes = new Set<string>();
    let watching = true;
    const watch = (async () => {
      while (watching) {
        const [rec] = await conversationRecords(svc, [task.app_conversation_id]);
        const pair = `${rec?.execution_status}/${rec?.sandbox_status}`;
        if (seen.at(-1) !== pair) seen.push(pair);
        const { body } = await svc.api<({ status: string } | null)[]>('GET', `/api/v1/sandboxes?id=${task.sandbox_id}`);
        if (body[0]) sandboxes.add(body[0].status);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    await finished(svc, task.app_conversation_id);
    // The finished status reaches the record a moment after the finish observation.
    const deadline = Date.now() + 30_000;
    while (!seen.at(-1)?.startsWith('finished/') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    watching = false;
    await watch;
    expect(llm.requests).toHaveLength(2);
    const paused = seen.indexOf('running/PAUSED');
    expect(paused, seen.join(' → ')).toBeGreaterThanOrEqual(0);
    // After the wait: running on a RUNNING sandbox again, or straight to the end.
    expect(seen.slice(paused + 1).every((p) => p.endsWith('/RUNNING')), seen.join(' → ')).toBe(true);
    expect(seen.at(-1)).toBe('finished/RUNNING');
    expect([...sandboxes]).toEqual(['RUNNING']);
  });
});
