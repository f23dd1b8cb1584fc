// A running agent is activity (#14 item 4): `agentyard up` with an Idle Time of one second, an
// agent busy in a tool call and then in a model call each several Idle Times long, neither of
// which emits an event meanwhile. The sandbox stays RUNNING until the run ends (the command's
// output and the model's answer both arrive), and is idle-paused after it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScriptedLlm } from '../../src/testing/scripted-llm/server.ts';
import { events, finished, sandboxReads, startReady, userMessage } from './flows.ts';
import { startServiceWithModel, type RunningService } from './harness.ts';

const IDLE_S = 1;
const BUSY_MS = 3_500;

describe('agentyard up: no idle pause while the agent is running', () => {
  let llm: ScriptedLlm;
  let svc: RunningService;
  let stop: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    ({ llm, svc, stop } = await startServiceWithModel({ env: { AGENTYARD_IDLE_TIME_SECONDS: String(IDLE_S), AGENTYARD_DELETION_TIME_SECONDS: '3600' } }));
  });
  afterAll(async () => stop?.());

  it('a tool call and a model call longer than Idle Time run to their end; the idle pause comes after the run', async () => {
    llm.push(
      { toolCalls: [{ name: 'terminal', arguments: { command: `sleep ${BUSY_MS / 1000} && echo slept-through` } }] },
      // The model thinks for several Idle Times before it answers.
      async () => {
        await new Promise((r) => setTimeout(r, BUSY_MS));
        return { toolCalls: [{ name: 'finish', arguments: { message: 'done after a long think' } }] };
      },
    );
    const task = await startReady(svc, { initial_message: userMessage('sleep, then think') });
    const sandboxStatuses = new Set<string>();
    let watching = true;
    const watch = (async () => {
      while (watching) {
        const { body } = await svc.api<({ status: string } | null)[]>('GET', `/api/v1/sandboxes?id=${task.sandbox_id}`);
        if (body[0]) sandboxStatuses.add(body[0].status);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const items = await finished(svc, task.app_conversation_id);
    watching = false;
    await watch;
    expect([...sandboxStatuses]).toEqual(['RUNNING']);
    const observation = items.find((e) => e.kind === 'ObservationEvent' && e.tool_name === 'terminal');
    expect(JSON.stringify(observation)).toContain('slept-through');
    expect(llm.requests).toHaveLength(2);
    // Idle after the run: the pause comes, and the transcript is all there.
    await sandboxReads(svc, task.sandbox_id, 'PAUSED');
    expect((await events(svc, task.app_conversation_id)).some((e) => e.kind === 'ObservationEvent' && e.tool_name === 'finish')).toBe(true);
  });
});
