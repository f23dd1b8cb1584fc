import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConversationKind } from '../../api/conversation.ts';
import { SandboxKind } from '../../api/sandbox.ts';
import { ConversationReconciler } from './reconciler.ts';
import { controllerEnv, NS } from '../testing/env.ts';
import { startFakeAgentServer, type FakeAgentServer } from '../testing/fake-agent-server.ts';

let agent: FakeAgentServer;
let agentUrl: string;
let started: Record<string, unknown>[];
beforeAll(async () => {
  agent = await startFakeAgentServer();
  agentUrl = agent.url;
  started = agent.started;
});
afterAll(() => agent.close());

const hex = (n: number) => n.toString(16).padStart(32, '0');

async function runningSandbox(env: ReturnType<typeof controllerEnv>, name: string, owner = 'alice') {
  await env.createSandbox(name, owner);
  await env.settleSandbox(name);
  env.runtime.boot(name, agentUrl);
  await env.settleSandbox(name);
}

describe('ConversationReconciler', () => {
  it('walks the start task through every step in order to READY and starts the conversation on the agent server', async () => {
    const env = controllerEnv();
    await env.createConversation(hex(1), { initialMessage: { role: 'user', content: [{ type: 'text', text: 'hi' }], run: true } });
    const seen: string[] = [];
    const watch = (async () => {
      for await (const e of env.store.watch(ConversationKind, NS, { signal: AbortSignal.timeout(5_000) })) {
        const s = e.object.status?.startTask?.status;
        if (s && seen.at(-1) !== s) seen.push(s);
        if (s === 'READY' || s === 'ERROR') return;
      }
    })();
    await env.conversations.reconcile(`${NS}/${hex(1)}`); // places it on a new sandbox
    const placed = (await env.store.get(ConversationKind, NS, hex(1)))!;
    const sandboxName = placed.status!.sandboxName!;
    expect(placed.metadata.labels?.['agentyard.dev/sandbox']).toBe(sandboxName);
    await env.settleConversation(hex(1));
    expect((await env.store.get(ConversationKind, NS, hex(1)))!.status?.startTask?.status).toBe('WAITING_FOR_SANDBOX');

    await env.settleSandbox(sandboxName);
    env.runtime.boot(sandboxName, agentUrl);
    await env.settleSandbox(sandboxName);
    const conv = (await env.settleConversation(hex(1)))!;
    await watch;
    expect(conv.status?.startTask?.status).toBe('READY');
    expect(seen).toEqual(['WAITING_FOR_SANDBOX', 'PREPARING_REPOSITORY', 'RUNNING_SETUP_SCRIPT', 'SETTING_UP_GIT_HOOKS', 'SETTING_UP_SKILLS', 'STARTING_CONVERSATION', 'READY']);
    const request = started.find((r) => String(r.conversation_id).replaceAll('-', '') === hex(1))!;
    expect(request.initial_message).toMatchObject({ role: 'user', run: true });
    expect(request.key).toBeTruthy();
  });

  it('refuses an explicit sandbox that is not RUNNING, and one that belongs to someone else', async () => {
    const env = controllerEnv();
    await env.createSandbox('paused', 'alice', { paused: true });
    await env.settleSandbox('paused');
    await env.createConversation(hex(2), { sandboxName: 'paused' });
    let conv = (await env.settleConversation(hex(2)))!;
    expect(conv.status?.startTask).toMatchObject({ status: 'ERROR' });
    expect(conv.status?.startTask?.detail).toMatch(/PAUSED.*must be RUNNING/);

    await runningSandbox(env, 'bobs', 'bob');
    await env.createConversation(hex(3), { sandboxName: 'bobs' });
    conv = (await env.settleConversation(hex(3)))!;
    expect(conv.status?.startTask?.detail).toBe('Sandbox bobs does not exist');
  });

  it.each([
    ['GROUP_BY_NEWEST', 'newest'],
    ['LEAST_RECENTLY_USED', 'idlest'],
    ['FEWEST_CONVERSATIONS', 'emptiest'],
    ['ADD_TO_ANY', 'oldest'],
  ] as const)('%s picks the %s available sandbox', async (strategy, want) => {
    const env = controllerEnv();
    // Created in this order, one minute apart: oldest, idlest, emptiest, newest.
    for (const name of ['oldest', 'idlest', 'emptiest', 'newest']) {
      await runningSandbox(env, name);
      env.clock.advance(60_000);
    }
    await runningSandbox(env, 'bobs-newer', 'bob'); // never chosen for alice
    for (const [name, minutesAgo] of [['oldest', 1], ['idlest', 30], ['emptiest', 2], ['newest', 3]] as const) {
      const sb = (await env.store.get(SandboxKind, NS, name))!;
      const at = env.clock.now().minus({ minutes: minutesAgo }).toISO()!;
      await env.store.update(SandboxKind, { ...sb, metadata: { ...sb.metadata, annotations: { 'agentyard.dev/last-activity-time': at } } });
    }
    // Existing conversations: two on each except 'emptiest'.
    let n = 100;
    for (const name of ['oldest', 'idlest', 'newest']) {
      for (let i = 0; i < 2; i++) {
        await env.createConversation(hex(n), { sandboxName: name });
        await env.settleConversation(hex(n++));
      }
    }
    await env.createConversation(hex(999), { sandboxGrouping: strategy });
    await env.conversations.reconcile(`${NS}/${hex(999)}`);
    expect((await env.store.get(ConversationKind, NS, hex(999)))!.status?.sandboxName).toBe(want);
  });

  it('NO_GROUPING creates a sandbox per conversation; past capacity the start fails with CapacityExceeded', async () => {
    const env = controllerEnv({ capacity: 1 });
    await env.createConversation(hex(10));
    await env.conversations.reconcile(`${NS}/${hex(10)}`);
    expect((await env.store.list(SandboxKind, NS)).items.map((s) => s.metadata.name)).toEqual([hex(10)]);
    await env.createConversation(hex(11));
    const conv = (await env.settleConversation(hex(11)))!;
    expect(conv.status?.startTask?.status).toBe('ERROR');
    expect(conv.status?.conditions?.find((c) => c.type === 'Ready')?.reason).toBe('CapacityExceeded');
    expect((await env.store.list(SandboxKind, NS)).items).toHaveLength(1);
  });

  it('a new reconciler on the same store resumes a half-done start', async () => {
    const env = controllerEnv();
    await runningSandbox(env, 'warm');
    await env.createConversation(hex(20), { sandboxName: 'warm' });
    await env.conversations.reconcile(`${NS}/${hex(20)}`);
    await env.conversations.reconcile(`${NS}/${hex(20)}`);
    expect((await env.store.get(ConversationKind, NS, hex(20)))!.status?.startTask?.status).toBe('PREPARING_REPOSITORY');
    const restarted = new ConversationReconciler({ store: env.store, clock: env.clock, settings: { idleTimeMs: 1, deletionTimeMs: 1, capacity: 1 } });
    for (let i = 0; i < 8; i++) await restarted.reconcile(`${NS}/${hex(20)}`);
    expect((await env.store.get(ConversationKind, NS, hex(20)))!.status?.startTask?.status).toBe('READY');
  });

  it('keeps the execution status and metrics the facade wrote', async () => {
    const env = controllerEnv();
    await runningSandbox(env, 'warm');
    await env.createConversation(hex(30), { sandboxName: 'warm' });
    await env.conversations.reconcile(`${NS}/${hex(30)}`);
    const conv = (await env.store.get(ConversationKind, NS, hex(30)))!;
    await env.store.updateStatus(ConversationKind, { ...conv, status: { ...conv.status, executionStatus: 'running' } });
    await env.settleConversation(hex(30));
    expect((await env.store.get(ConversationKind, NS, hex(30)))!.status).toMatchObject({ executionStatus: 'running', startTask: { status: 'READY' } });
  });
});
