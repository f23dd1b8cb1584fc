// SandboxReconciler, table-driven: a sandbox in some state, the runtime in some state, one settle;
// then the status, the conditions (lastTransitionTime ignored) and the runtime calls.
import { describe, expect, it } from 'vitest';
import { ConversationKind } from '../../api/conversation.ts';
import { Unavailable } from '../../api/errors.ts';
import { API_VERSION, LABEL_SANDBOX, type KubeObject, type ResourceKind } from '../../api/meta.ts';
import { SandboxKind, type Sandbox, type SandboxStatus } from '../../api/sandbox.ts';
import { controllerEnv, interceptStore, NS } from '../testing/env.ts';
import { SandboxReconciler } from './reconciler.ts';

type Env = ReturnType<typeof controllerEnv>;

async function running(env: Env, name = 'sb1'): Promise<Sandbox> {
  await env.createSandbox(name);
  await env.settleSandbox(name);
  env.runtime.boot(name);
  await env.settleSandbox(name);
  env.runtime.calls.length = 0;
  return (await env.sandbox(name))!;
}

const setSpec = async (env: Env, spec: Partial<Sandbox['spec']>) => {
  const sb = (await env.sandbox('sb1'))!;
  await env.store.update(SandboxKind, { ...sb, spec: { ...sb.spec, ...spec } });
};

interface Row {
  name: string;
  setup: (env: Env) => Promise<unknown>;
  wantStatus: Partial<SandboxStatus>;
  wantConditions: Record<string, [status: string, reason: string]>;
  wantCalls: string[];
}

const rows: Row[] = [
  {
    name: 'paused by the user while starting',
    setup: async (env) => {
      await env.createSandbox('sb1');
      await env.settleSandbox('sb1');
      env.runtime.calls.length = 0;
      await setSpec(env, { paused: true });
    },
    wantStatus: { phase: 'PAUSED', pauseReason: 'UserRequest', pausedAt: '2026-01-01T00:00:00.000Z' },
    wantConditions: { Ready: ['False', 'UserRequest'], Paused: ['True', 'UserRequest'] },
    wantCalls: ['pause sb1'],
  },
  {
    name: 'resumed: started again, STARTING until the agent server answers',
    setup: async (env) => {
      await running(env);
      await setSpec(env, { paused: true });
      await env.settleSandbox('sb1');
      await setSpec(env, { paused: false });
      env.runtime.calls.length = 0;
    },
    wantStatus: { phase: 'STARTING' },
    wantConditions: { Ready: ['False', 'Starting'], Paused: ['False', 'Running'] },
    wantCalls: ['start sb1'],
  },
  {
    name: 'running: url, a session window, conversations counted (deleting ones not)',
    setup: async (env) => {
      await running(env);
      for (const name of ['c1', 'c2']) {
        await env.store.create(ConversationKind, { apiVersion: API_VERSION, kind: 'Conversation', metadata: { name, namespace: NS, labels: { [LABEL_SANDBOX]: 'sb1' }, finalizers: ['test/hold'] }, spec: {} });
      }
      await env.store.delete(ConversationKind, NS, 'c2');
    },
    wantStatus: { phase: 'RUNNING', url: 'http://127.0.0.1:1/sb1', sessionStartTime: '2026-01-01T00:00:00.000Z', conversationCount: 1 },
    wantConditions: { Ready: ['True', 'Running'], Paused: ['False', 'Running'] },
    wantCalls: [],
  },
  {
    name: 'the runtime vanished under a running sandbox: ERROR RuntimeMissing, no restart',
    setup: async (env) => {
      await running(env);
      env.runtime.states.delete('sb1');
    },
    wantStatus: { phase: 'ERROR', message: 'The sandbox runtime disappeared while it was running' },
    wantConditions: { Ready: ['False', 'RuntimeMissing'], Paused: ['False', 'Running'] },
    wantCalls: [],
  },
  {
    name: 'the runtime is gone while paused: resuming starts it anew',
    setup: async (env) => {
      await running(env);
      await setSpec(env, { paused: true });
      await env.settleSandbox('sb1');
      env.runtime.states.delete('sb1');
      await setSpec(env, { paused: false });
      env.runtime.calls.length = 0;
    },
    wantStatus: { phase: 'STARTING' },
    wantConditions: { Ready: ['False', 'Starting'], Paused: ['False', 'Running'] },
    wantCalls: ['start sb1'],
  },
];

describe('SandboxReconciler cases', () => {
  it.each(rows.map((r) => [r.name, r] as const))('%s', async (_name, row) => {
    const env = controllerEnv();
    await row.setup(env);
    await env.settleSandbox('sb1');
    const sb = (await env.sandbox('sb1'))!;
    expect(sb.status).toMatchObject(row.wantStatus);
    const conditions = Object.fromEntries((sb.status?.conditions ?? []).map((c) => [c.type, [c.status, c.reason]]));
    expect(conditions).toEqual(row.wantConditions);
    expect(sb.status?.conditions?.every((c) => c.observedGeneration === sb.metadata.generation)).toBe(true);
    expect(env.runtime.calls).toEqual(row.wantCalls);
  });

  it('a cluster sandbox: status keeps the public url and the in-cluster address apart; pausing clears both', async () => {
    const env = controllerEnv();
    await env.createSandbox('sb1');
    await env.settleSandbox('sb1');
    env.runtime.states.set('sb1', { phase: 'running', runtimeId: 'sb1', url: 'https://sb1-runtime.example.com', internalUrl: `http://sandbox-sb1.${NS}.svc:80` });
    await env.settleSandbox('sb1');
    expect((await env.sandbox('sb1'))!.status).toMatchObject({ phase: 'RUNNING', url: 'https://sb1-runtime.example.com', internalUrl: `http://sandbox-sb1.${NS}.svc:80` });
    await setSpec(env, { paused: true });
    await env.settleSandbox('sb1');
    const paused = (await env.sandbox('sb1'))!.status!;
    expect(paused.phase).toBe('PAUSED');
    expect(paused).not.toHaveProperty('url');
    expect(paused).not.toHaveProperty('internalUrl');
  });
});

describe('SandboxReconciler writes', () => {
  it('writes status at most once per pass, and nothing when nothing changed', async () => {
    const env = controllerEnv();
    let statusWrites = 0;
    const counting = interceptStore(env.store, {
      updateStatus: async <T extends KubeObject>(kind: ResourceKind<T>, obj: T) => {
        statusWrites++;
        return env.store.updateStatus(kind, obj);
      },
    });
    const reconciler = new SandboxReconciler({ store: counting, runtime: env.runtime, clock: env.clock, settings: env.settings });
    await env.createSandbox('sb1');
    await reconciler.reconcile(`${NS}/sb1`);
    expect(statusWrites).toBe(1);
    env.runtime.boot('sb1');
    await reconciler.reconcile(`${NS}/sb1`);
    expect(statusWrites).toBe(2);
    const before = (await env.sandbox('sb1'))!.metadata.resourceVersion;
    await reconciler.reconcile(`${NS}/sb1`);
    expect(statusWrites).toBe(2);
    expect((await env.sandbox('sb1'))!.metadata.resourceVersion).toBe(before);
  });

  it('deleting a sandbox deletes its runtime first; a failed runtime delete keeps the finalizer and is retried', async () => {
    const env = controllerEnv();
    await running(env);
    await env.store.delete(SandboxKind, NS, 'sb1');
    const failing = Object.assign(Object.create(env.runtime) as typeof env.runtime, {
      delete: async () => {
        throw new Unavailable('runtime busy');
      },
    });
    const reconciler = new SandboxReconciler({ store: env.store, runtime: failing, clock: env.clock, settings: env.settings });
    await expect(reconciler.reconcile(`${NS}/sb1`)).rejects.toBeInstanceOf(Unavailable);
    expect((await env.sandbox('sb1'))?.metadata.finalizers).toContain('agentyard.dev/runtime');
    await env.sandboxes.reconcile(`${NS}/sb1`);
    expect(env.runtime.calls).toEqual(['delete sb1']);
    expect(await env.sandbox('sb1')).toBeUndefined();
  });
});
