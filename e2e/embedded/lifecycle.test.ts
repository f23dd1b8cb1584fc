// The controller enforces the lifecycle by itself (spec part 3), and `agentyard up` survives
// restarts without forgetting sandboxes. Real processes, short deployment-wide timers.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually, removeDataDir, startService, type RunningService } from './harness.ts';

interface Task {
  id: string;
  status: string;
  app_conversation_id?: string | null;
  sandbox_id?: string | null;
}

const running: RunningService[] = [];
afterEach(async () => {
  for (const svc of running.splice(0)) {
    await svc.stop();
    removeDataDir(svc.dataDir);
  }
});

async function start(env: Record<string, string> = {}, dataDir?: string): Promise<RunningService> {
  const svc = await startService({ env, ...(dataDir ? { dataDir } : {}) });
  running.push(svc);
  return svc;
}

async function startConversation(svc: RunningService): Promise<{ conversationId: string; sandboxId: string }> {
  const { body } = await svc.api<Task>('POST', '/api/v1/app-conversations', { initial_message: { role: 'user', content: [{ type: 'text', text: 'hello' }] } });
  const task = await eventually(async () => {
    const { body: tasks } = await svc.api<(Task | null)[]>('GET', `/api/v1/app-conversations/start-tasks?ids=${body.id}`);
    return tasks[0]?.status === 'READY' ? tasks[0] : undefined;
  }, 'READY');
  return { conversationId: task.app_conversation_id!, sandboxId: task.sandbox_id! };
}

async function sandboxStatus(svc: RunningService, id: string): Promise<string | undefined> {
  const { body } = await svc.api<({ status: string } | null)[]>('GET', `/api/v1/sandboxes?id=${id}`);
  return body[0]?.status;
}

function pidOf(svc: RunningService, sandboxId: string): number {
  return (JSON.parse(readFileSync(join(svc.dataDir, 'sandboxes', sandboxId, 'runtime.json'), 'utf8')) as { pid: number }).pid;
}

describe('lifecycle enforced by the controller', () => {
  it('without a model, the run ends at once with an error that names the variables to set', async () => {
    const svc = await start({ LLM_MODEL: '', LLM_BASE_URL: '', LLM_API_KEY: '' });
    const { conversationId } = await startConversation(svc);
    const error = await eventually(async () => {
      const { body } = await svc.api<{ items: { kind: string; detail?: string }[] }>('GET', `/api/v1/conversation/${conversationId}/events/search?kind__eq=ConversationErrorEvent`);
      return body.items[0];
    }, 'a ConversationErrorEvent');
    expect(error.detail).toContain('LLM_MODEL');
    expect(error.detail).toContain('LLM_BASE_URL');
    await eventually(async () => {
      const { body } = await svc.api<({ execution_status: string } | null)[]>('GET', `/api/v1/app-conversations?ids=${conversationId}`);
      return body[0]?.execution_status === 'error' ? true : undefined;
    }, 'execution_status error');
  });

  it('pauses an idle sandbox after Idle Time, then deletes it with its conversations after Deletion Time', async () => {
    const svc = await start({ AGENTYARD_IDLE_TIME_SECONDS: '2', AGENTYARD_DELETION_TIME_SECONDS: '3' });
    const { conversationId, sandboxId } = await startConversation(svc);
    const pid = pidOf(svc, sandboxId);
    await eventually(async () => ((await sandboxStatus(svc, sandboxId)) === 'PAUSED' ? true : undefined), 'the idle pause', 30_000);
    await eventually(async () => (isAlive(pid) ? undefined : true), 'the agent server process to stop');
    // Deletion Time later, the conversation and its storage are gone for good.
    await eventually(async () => ((await sandboxStatus(svc, sandboxId)) === undefined ? true : undefined), 'the permanent deletion', 30_000);
    await eventually(async () => {
      const { body } = await svc.api<unknown[]>('GET', `/api/v1/app-conversations?ids=${conversationId}`);
      return body[0] === null ? true : undefined;
    }, 'the conversation to be gone');
    await eventually(async () => (existsSync(join(svc.dataDir, 'sandboxes', sandboxId)) ? undefined : true), 'the sandbox storage to be removed');
    const resume = await svc.api('POST', `/api/v1/sandboxes/${sandboxId}/resume`);
    expect(resume.status).toBe(404);
  });
});

describe('agentyard up restarts', () => {
  it('finds running sandboxes again after a crash, and restarts them after a clean stop', async () => {
    const first = await start();
    const { sandboxId } = await startConversation(first);
    const pid = pidOf(first, sandboxId);

    // A crash: the sandbox process keeps running and the next `up` adopts it.
    await first.stop('SIGKILL');
    running.splice(running.indexOf(first), 1);
    expect(isAlive(pid)).toBe(true);
    const second = await start({}, first.dataDir);
    await eventually(async () => ((await sandboxStatus(second, sandboxId)) === 'RUNNING' ? true : undefined), 'RUNNING after the crash');
    expect(pidOf(second, sandboxId)).toBe(pid);

    // A clean stop: sandboxes are stopped with it and started again with the service.
    await second.stop('SIGTERM');
    running.splice(running.indexOf(second), 1);
    await eventually(async () => (isAlive(pid) ? undefined : true), 'the sandbox to stop with the service');
    const third = await start({}, first.dataDir);
    await eventually(async () => ((await sandboxStatus(third, sandboxId)) === 'RUNNING' ? true : undefined), 'RUNNING after a clean restart');
    expect(pidOf(third, sandboxId)).not.toBe(pid);
  });
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}
