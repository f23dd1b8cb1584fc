import { describe, expect, it } from 'vitest';
import { ConversationKind } from '../../api/conversation.ts';
import { ANNOTATION_LAST_ACTIVITY, LABEL_SANDBOX } from '../../api/meta.ts';
import { SandboxKind } from '../../api/sandbox.ts';
import { SecretKind } from '../../api/secret.ts';
import { SESSION_CAP_MS } from '../lifecycle.ts';
import { controllerEnv, NS } from '../testing/env.ts';

async function runningSandbox(env: ReturnType<typeof controllerEnv>, name = 'sb1') {
  await env.createSandbox(name);
  await env.settleSandbox(name);
  env.runtime.boot(name);
  await env.settleSandbox(name);
  return (await env.sandbox(name))!;
}

describe('SandboxReconciler', () => {
  it('starts the runtime with a session key kept in an owned Secret, and reports STARTING then RUNNING', async () => {
    const env = controllerEnv();
    await env.createSandbox('sb1');
    const result = await env.settleSandbox('sb1');
    let sb = (await env.sandbox('sb1'))!;
    expect(sb.status?.phase).toBe('STARTING');
    expect(result).toEqual({ requeueAfterMs: 500 });
    expect(sb.metadata.finalizers).toContain('agentyard.dev/runtime');
    const secret = await env.store.get(SecretKind, NS, 'sb1-session');
    expect(secret?.metadata.ownerReferences?.[0]?.name).toBe('sb1');
    expect(JSON.stringify(sb)).not.toContain(Buffer.from(secret!.data!.key!, 'base64').toString());

    env.runtime.boot('sb1');
    await env.settleSandbox('sb1');
    sb = (await env.sandbox('sb1'))!;
    expect(sb.status).toMatchObject({ phase: 'RUNNING', url: 'http://127.0.0.1:1/sb1', sessionStartTime: '2026-01-01T00:00:00.000Z', observedGeneration: sb.metadata.generation });
    expect(sb.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True', reason: 'Running' });
    expect(env.runtime.calls).toEqual(['start sb1']);
  });

  it('pauses after exactly Idle Time without activity, and activity resets the timer', async () => {
    const env = controllerEnv({ idleTimeMs: 60_000 });
    let sb = await runningSandbox(env);
    env.clock.advance(59_999);
    expect(await env.settleSandbox('sb1')).toEqual({ requeueAfterMs: 1 });
    expect((await env.sandbox('sb1'))!.status?.phase).toBe('RUNNING');

    // Activity 30 s before the deadline moves it.
    sb = (await env.sandbox('sb1'))!;
    await env.store.update(SandboxKind, { ...sb, metadata: { ...sb.metadata, annotations: { [ANNOTATION_LAST_ACTIVITY]: env.clock.now().toISO()! } } });
    env.clock.advance(1);
    expect(await env.settleSandbox('sb1')).toEqual({ requeueAfterMs: 59_999 });
    env.clock.advance(59_999);
    await env.settleSandbox('sb1');
    sb = (await env.sandbox('sb1'))!;
    expect(sb.spec.paused).toBe(true);
    expect(sb.status).toMatchObject({ phase: 'PAUSED', pauseReason: 'IdleTimeout' });
    expect(env.runtime.calls).toEqual(['start sb1', 'pause sb1']);
  });

  it('a run in progress is activity: no idle pause while a conversation on it is running, the idle clock starts when the run ends (#14 item 4)', async () => {
    const env = controllerEnv({ idleTimeMs: 60_000 });
    await runningSandbox(env);
    await env.store.create(ConversationKind, { apiVersion: 'agentyard.dev/v1alpha1', kind: 'Conversation', metadata: { name: 'c1', namespace: NS, labels: { [LABEL_SANDBOX]: 'sb1' } }, spec: {} });
    const setExecution = async (executionStatus: 'running' | 'finished') => {
      const latest = (await env.store.get(ConversationKind, NS, 'c1'))!;
      await env.store.updateStatus(ConversationKind, { ...latest, status: { ...latest.status, executionStatus } });
    };
    await setExecution('running');
    // A tool call (or a model call) that lasts five Idle Times and emits nothing meanwhile.
    for (let i = 0; i < 5; i++) {
      env.clock.advance(60_000);
      expect(await env.settleSandbox('sb1')).toEqual({ requeueAfterMs: 60_000 });
      const sb = (await env.sandbox('sb1'))!;
      expect(sb.spec.paused).toBe(false);
      expect(sb.status?.phase).toBe('RUNNING');
      expect(sb.status?.lastActivityTime).toBe(env.clock.now().toUTC().toISO());
    }
    // The run ends without any further event reaching the facade: Idle Time counts from the last time it was seen running.
    env.clock.advance(10_000);
    await setExecution('finished');
    expect(await env.settleSandbox('sb1')).toEqual({ requeueAfterMs: 50_000 });
    env.clock.advance(50_000);
    await env.settleSandbox('sb1');
    expect((await env.sandbox('sb1'))!.status).toMatchObject({ phase: 'PAUSED', pauseReason: 'IdleTimeout' });
  });

  it('the 12-hour cap pauses a sandbox even while its agent is running', async () => {
    const env = controllerEnv({ idleTimeMs: 3_600_000 });
    await runningSandbox(env);
    const conv = await env.store.create(ConversationKind, { apiVersion: 'agentyard.dev/v1alpha1', kind: 'Conversation', metadata: { name: 'c1', namespace: NS, labels: { [LABEL_SANDBOX]: 'sb1' } }, spec: {} });
    await env.store.updateStatus(ConversationKind, { ...conv, status: { executionStatus: 'running' } });
    env.clock.set('2026-01-01T12:00:00Z');
    await env.settleSandbox('sb1');
    expect((await env.sandbox('sb1'))!.status).toMatchObject({ phase: 'PAUSED', pauseReason: 'SessionCap' });
  });

  it('force-pauses at the 12-hour cap even while active, and a resume starts a new window', async () => {
    const env = controllerEnv({ idleTimeMs: 3_600_000 });
    await runningSandbox(env);
    for (let elapsed = 0; elapsed < SESSION_CAP_MS - 1_800_000; elapsed += 1_800_000) {
      env.clock.advance(1_800_000);
      const sb = (await env.sandbox('sb1'))!;
      await env.store.update(SandboxKind, { ...sb, metadata: { ...sb.metadata, annotations: { [ANNOTATION_LAST_ACTIVITY]: env.clock.now().toISO()! } } });
      await env.settleSandbox('sb1');
      expect((await env.sandbox('sb1'))!.status?.phase).toBe('RUNNING');
    }
    env.clock.set('2026-01-01T12:00:00Z');
    await env.settleSandbox('sb1');
    let sb = (await env.sandbox('sb1'))!;
    expect(sb.status).toMatchObject({ phase: 'PAUSED', pauseReason: 'SessionCap' });

    // Resume (what the facade does): a new 12-hour window from now.
    env.clock.advance(60_000);
    await env.store.update(SandboxKind, { ...sb, spec: { ...sb.spec, paused: false } });
    await env.settleSandbox('sb1');
    env.runtime.boot('sb1');
    await env.settleSandbox('sb1');
    sb = (await env.sandbox('sb1'))!;
    expect(sb.status).toMatchObject({ phase: 'RUNNING', sessionStartTime: '2026-01-01T12:01:00.000Z' });
    expect(sb.metadata.annotations?.['agentyard.dev/pause-reason']).toBeUndefined();
  });

  it('deletes a sandbox paused for Deletion Time together with its conversations', async () => {
    const env = controllerEnv({ deletionTimeMs: 3_600_000 });
    let sb = await runningSandbox(env);
    await env.store.create(ConversationKind, { apiVersion: 'agentyard.dev/v1alpha1', kind: 'Conversation', metadata: { name: 'c1', namespace: NS, labels: { [LABEL_SANDBOX]: 'sb1' } }, spec: {} });
    await env.store.update(SandboxKind, { ...sb, spec: { ...sb.spec, paused: true } });
    await env.settleSandbox('sb1');
    sb = (await env.sandbox('sb1'))!;
    expect(sb.status).toMatchObject({ phase: 'PAUSED', pauseReason: 'UserRequest', conversationCount: 1 });

    env.clock.advance(3_599_999);
    expect(await env.settleSandbox('sb1')).toEqual({ requeueAfterMs: 1 });
    env.clock.advance(1);
    await env.settleSandbox('sb1');
    expect(await env.store.get(ConversationKind, NS, 'c1')).toBeUndefined();
    // The finalizer held the Sandbox until the runtime was cleaned up (the next pass).
    expect(await env.sandbox('sb1')).toBeUndefined();
    expect(env.runtime.calls.at(-1)).toBe('delete sb1');
  });

  it('turns a runtime failure into a terminal ERROR with the reason in the Ready condition', async () => {
    const env = controllerEnv();
    await env.createSandbox('sb1');
    env.runtime.startResult = () => ({ phase: 'failed', reason: 'ImagePullBackOff', message: 'image not found' });
    await env.settleSandbox('sb1');
    const sb = (await env.sandbox('sb1'))!;
    expect(sb.status?.phase).toBe('ERROR');
    expect(sb.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'ImagePullBackOff', message: 'image not found' });
    env.runtime.boot('sb1');
    await env.settleSandbox('sb1');
    expect((await env.sandbox('sb1'))!.status?.phase).toBe('ERROR');
  });

  it('marks a running sandbox whose runtime vanished as ERROR', async () => {
    const env = controllerEnv();
    await runningSandbox(env);
    env.runtime.states.delete('sb1');
    await env.settleSandbox('sb1');
    expect((await env.sandbox('sb1'))!.status).toMatchObject({ phase: 'ERROR' });
  });
});
