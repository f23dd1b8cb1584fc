// `agentyard up` with its data dir on a real small filesystem (a tmpfs, filled and freed): a full
// disk ends the running conversation with a StorageFullError, the API answers writes with 507, no
// process dies, and when space returns everything recovers by itself: the held events reach the
// transcript and the conversation takes new messages.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mountSmallFs, type SmallFs } from '../../src/testing/full-disk.ts';
import { eventually, startServiceWithModel, type ServiceWithModel } from './harness.ts';
import { events, startReady, userMessage } from './flows.ts';

const fs = mountSmallFs(128);
const skip = 'skip' in fs ? fs.skip : undefined;
if (skip) console.warn(`full-disk.test.ts skipped: ${skip}`);

describe.skipIf(skip !== undefined)('agentyard up on a full disk', () => {
  const disk = fs as SmallFs;
  let running: ServiceWithModel | undefined;

  afterAll(async () => {
    disk.free();
    await running?.stop();
    disk.unmount();
  });

  it('stops the run with a clear error, refuses writes with 507, and recovers when space returns', async () => {
    running = await startServiceWithModel({ dataDir: join(disk.path, 'data'), env: { AGENTYARD_MIN_FREE_DISK_MB: '1' } });
    const { llm, svc } = running;
    let answer!: () => void;
    const held = new Promise<void>((r) => (answer = r));
    llm.push(async () => {
      await held;
      return { content: 'written to a full disk' };
    });
    const task = await startReady(svc, { initial_message: userMessage('hello') });
    const id = task.app_conversation_id;
    await eventually(async () => (llm.requests.length > 0 ? true : undefined), 'the model call');

    expect(disk.fill()).toBeGreaterThan(0);
    answer();

    // The API's own stores: a write that needs space is a 507 that says why; the service stays up.
    let refused: { status: number; body: { detail?: string }; headers: Headers } | undefined;
    for (let i = 0; i < 400 && !refused; i++) {
      const r = await svc.api<{ detail?: string }>('POST', '/api/v1/secrets', { name: `filler-${i}`, value: 'v'.repeat(60_000) });
      if (r.status !== 201) refused = r;
    }
    expect(refused?.status, JSON.stringify(refused?.body)).toBe(507);
    expect(refused!.body.detail).toMatch(/^Insufficient storage: the disk is full \(SQLITE_FULL\)/);
    expect(refused!.headers.get('retry-after')).toBe('30');
    const health = await svc.api<{ status: string; disk: { low: boolean } }>('GET', '/health');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ status: 'degraded', disk: { low: true } });
    expect(svc.process.exitCode).toBeNull();

    // Space returns: the transcript gets the run's end, said plainly, and the conversation goes on.
    disk.free();
    const error = await eventually(async () => (await events(svc, id)).find((e) => e.kind === 'ConversationErrorEvent'), 'the storage error in the transcript', 90_000);
    expect(error).toMatchObject({ code: 'StorageFullError' });
    expect(String(error.detail)).toContain('the disk is full (SQLITE_FULL)');
    const answered = (await events(svc, id)).filter((e) => e.kind === 'MessageEvent' && e.source === 'agent');
    expect(answered.map((e) => JSON.stringify(e.llm_message))).toEqual([expect.stringContaining('written to a full disk')]);
    await eventually(async () => {
      const { body } = await svc.api<{ execution_status: string }[]>('GET', `/api/v1/app-conversations?ids=${id}`);
      return body[0]?.execution_status === 'error' ? true : undefined;
    }, 'execution_status error');

    llm.push({ content: 'and again' });
    const sent = await svc.api('POST', `/api/v1/app-conversations/${id}/send-message`, userMessage('again'));
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    await eventually(async () => {
      const { body } = await svc.api<{ execution_status: string }[]>('GET', `/api/v1/app-conversations?ids=${id}`);
      return body[0]?.execution_status === 'finished' ? true : undefined;
    }, 'the next run to finish', 60_000);
    expect((await svc.api('POST', '/api/v1/secrets', { name: 'after-recovery', value: 'x' })).status).toBe(201);
    expect(svc.process.exitCode).toBeNull();
  }, 240_000);
});
