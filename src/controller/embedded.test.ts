// The wired controller (manager + both reconcilers) on a real SQLite store: a conversation created
// in the store reaches READY with no test calling a reconciler, and the sandbox counts it.
import { afterEach, describe, expect, it } from 'vitest';
import { ConversationKind, type Conversation } from '../api/conversation.ts';
import { ANNOTATION_LAST_ACTIVITY, API_VERSION, LABEL_OWNER } from '../api/meta.ts';
import { SandboxKind } from '../api/sandbox.ts';
import type { KubeObject, ResourceKind } from '../api/meta.ts';
import { SqliteStore } from '../store/sqlite/sqlite-store.ts';
import { ManualClock } from './clock.ts';
import { createEmbeddedController } from './embedded.ts';
import type { Controller } from './manager.ts';
import { startFakeAgentServer, type FakeAgentServer } from './testing/fake-agent-server.ts';
import { FakeRuntime } from './testing/fake-runtime.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Resolves with the first object of `kind` named `name` that satisfies `ok`, as the watch delivers it. */
async function waitFor<T extends KubeObject>(store: SqliteStore, kind: ResourceKind<T>, name: string, ok: (obj: T) => boolean): Promise<T> {
  const current = await store.get(kind, 'default', name);
  if (current && ok(current)) return current;
  const signal = AbortSignal.timeout(10_000);
  for await (const e of store.watch(kind, 'default', { resourceVersion: current?.metadata.resourceVersion ?? '0', signal })) {
    if (e.object.metadata.name === name && ok(e.object)) return e.object;
  }
  throw new Error(`${kind.kind} ${name} never got there`);
}

describe('createEmbeddedController', () => {
  it('takes a conversation from creation to READY on a new sandbox, by watches alone', async () => {
    const clock = new ManualClock();
    const store = new SqliteStore(':memory:', { clock });
    cleanups.push(() => store.close());
    const agent: FakeAgentServer = await startFakeAgentServer();
    cleanups.push(() => agent.close());
    const runtime = new FakeRuntime();
    runtime.startResult = (name) => ({ phase: 'running', runtimeId: name, url: agent.url });
    const controller: Controller = createEmbeddedController({ store, runtime, clock, settings: { idleTimeMs: 60_000, deletionTimeMs: 60_000, capacity: 5 }, namespace: 'default' });
    await controller.start();
    cleanups.push(() => controller.stop());

    const id = 'f'.repeat(32);
    const conv: Conversation = {
      apiVersion: API_VERSION,
      kind: 'Conversation',
      metadata: { name: id, namespace: 'default', labels: { [LABEL_OWNER]: 'alice' } },
      spec: { owner: 'alice', initialMessage: { role: 'user', content: [{ type: 'text', text: 'hello' }], run: true } },
    };
    await store.create(ConversationKind, conv);
    const ready = await waitFor(store, ConversationKind, id, (c) => c.status?.startTask?.status === 'READY');
    expect(ready.status).toMatchObject({ sandboxName: id, initialMessageDelivered: true });
    const sandbox = await waitFor(store, SandboxKind, id, (sb) => sb.status?.phase === 'RUNNING' && sb.status.conversationCount === 1);
    expect(sandbox.spec.owner).toBe('alice');
    expect(agent.started.map((r) => String(r.conversation_id).replaceAll('-', ''))).toEqual([id]);
    expect(runtime.calls).toEqual([`start ${id}`]);
  });

  it('sets a timer at the lifecycle deadline of each listed Sandbox before its first pass has run', async () => {
    const clock = new ManualClock();
    const store = new SqliteStore(':memory:', { clock });
    cleanups.push(() => store.close());
    const now = clock.now().toISO()!;
    for (const name of ['a', 'b', 'c']) {
      const sb = await store.create(SandboxKind, { apiVersion: API_VERSION, kind: 'Sandbox', metadata: { name, namespace: 'default', annotations: { [ANNOTATION_LAST_ACTIVITY]: now } }, spec: {} });
      await store.updateStatus(SandboxKind, { ...sb, status: { phase: 'RUNNING', sessionStartTime: now, url: 'http://127.0.0.1:1' } });
    }
    // Passes that never get past the runtime: any timer in the queue was set when the Sandbox was seen.
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const runtime = new FakeRuntime();
    runtime.observe = async () => (await released, { phase: 'absent' });
    const controller = createEmbeddedController({ store, runtime, clock, settings: { idleTimeMs: 60_000, deletionTimeMs: 60_000, capacity: 5 }, namespace: 'default' });
    await controller.start();
    cleanups.push(() => controller.stop());
    cleanups.push(() => release());
    expect(controller.queue('sandbox')!.delayed).toBe(3);
  });
});
