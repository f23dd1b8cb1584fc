// Status truth: no conversation reads `running` once its sandbox stops serving it. The rule as a
// table, then the reconciler applying it against a real store, and a start whose agent server dies
// before READY going on after the restart instead of ending in ERROR.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConversationKind, type Conversation, type ExecutionStatus } from '../../api/conversation.ts';
import { API_VERSION } from '../../api/meta.ts';
import { SandboxKind, type Sandbox, type SandboxStatus } from '../../api/sandbox.ts';
import { controllerEnv, NS } from '../testing/env.ts';
import { startFakeAgentServer, type FakeAgentServer } from '../testing/fake-agent-server.ts';
import { interruption } from './execution-truth.ts';

const conv = (executionStatus: ExecutionStatus): Conversation => ({
  apiVersion: API_VERSION,
  kind: 'Conversation',
  metadata: { name: 'c1', namespace: NS },
  spec: {},
  status: { sandboxName: 'sb1', executionStatus, startTask: { status: 'READY' } },
});
const sandbox = (status: SandboxStatus, paused = false, deleting = false): Sandbox => ({
  apiVersion: API_VERSION,
  kind: 'Sandbox',
  metadata: { name: 'sb1', namespace: NS, ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
  spec: { paused },
  status,
});

describe('interruption', () => {
  it.each<[string, ExecutionStatus, Sandbox | undefined, string | undefined]>([
    ['running on a running sandbox: the agent server says', 'running', sandbox({ phase: 'RUNNING' }), undefined],
    ['running, sandbox paused', 'running', sandbox({ phase: 'PAUSED', pauseReason: 'IdleTimeout' }, true), 'paused'],
    ['running, sandbox being paused', 'running', sandbox({ phase: 'RUNNING' }, true), 'paused'],
    ['running, sandbox ERROR', 'running', sandbox({ phase: 'ERROR', message: 'crash loop' }), 'error'],
    ['running, agent server died and restarting', 'running', sandbox({ phase: 'STARTING', lastDeath: { id: 'd', time: '2026-01-01T00:00:00Z', reason: 'AgentServerExited' } }), 'error'],
    ['running, sandbox deleted', 'running', undefined, 'error'],
    ['running, sandbox being deleted', 'running', sandbox({ phase: 'RUNNING' }, false, true), 'error'],
    ['idle, sandbox ERROR: nothing was lost', 'idle', sandbox({ phase: 'ERROR' }), undefined],
    ['waiting for confirmation, sandbox paused: still waiting', 'waiting_for_confirmation', sandbox({ phase: 'PAUSED' }, true), undefined],
    ['finished, sandbox deleted', 'finished', undefined, undefined],
  ])('%s', (_name, status, sb, want) => {
    const got = interruption(conv(status), sb);
    expect(got?.status).toBe(want);
    if (got) expect(got.why).toMatch(/sb1/);
  });
});

let agent: FakeAgentServer;
beforeAll(async () => (agent = await startFakeAgentServer()));
afterAll(() => agent.close());

type Env = ReturnType<typeof controllerEnv>;
const hex = (n: number) => n.toString(16).padStart(32, '0');

async function readyOn(env: Env, name: string): Promise<string> {
  await env.createSandbox('sb1');
  await env.settleSandbox('sb1');
  env.runtime.boot('sb1', agent.url);
  await env.settleSandbox('sb1');
  await env.createConversation(name, { sandboxName: 'sb1' });
  await env.settleConversation(name);
  const c = (await env.store.get(ConversationKind, NS, name))!;
  expect(c.status?.startTask?.status).toBe('READY');
  return name;
}

async function setExecution(env: Env, name: string, executionStatus: ExecutionStatus) {
  const c = (await env.store.get(ConversationKind, NS, name))!;
  await env.store.updateStatus(ConversationKind, { ...c, status: { ...c.status, executionStatus } });
}

const executionOf = async (env: Env, name: string) => (await env.store.get(ConversationKind, NS, name))!.status?.executionStatus;

describe('ConversationReconciler follows its sandbox', () => {
  it('a running conversation whose agent server dies reads error; an idle one is left alone; the agent server rules again once back', async () => {
    const env = controllerEnv();
    const running = await readyOn(env, hex(1));
    await env.createConversation(hex(2), { sandboxName: 'sb1' });
    await env.settleConversation(hex(2));
    await setExecution(env, running, 'running');
    await setExecution(env, hex(2), 'idle');

    env.runtime.die('sb1');
    await env.settleSandbox('sb1');
    await env.settleConversation(running);
    await env.settleConversation(hex(2));
    expect(await executionOf(env, running)).toBe('error');
    expect(await executionOf(env, hex(2))).toBe('idle');

    // Back up: whatever the agent server reports next stands (the reconciler only ever replaces `running`).
    env.clock.advance(1_000);
    await env.settleSandbox('sb1');
    env.runtime.boot('sb1', agent.url);
    await env.settleSandbox('sb1');
    await setExecution(env, running, 'running');
    await env.settleConversation(running);
    expect(await executionOf(env, running)).toBe('running');
  });

  it('paused with its sandbox: paused, resumable', async () => {
    const env = controllerEnv();
    const name = await readyOn(env, hex(3));
    await setExecution(env, name, 'running');
    const sb = (await env.sandbox('sb1'))!;
    await env.store.update(SandboxKind, { ...sb, spec: { ...sb.spec, paused: true } });
    await env.settleSandbox('sb1');
    await env.settleConversation(name);
    expect(await executionOf(env, name)).toBe('paused');
  });

  it('a sandbox deleted under a running conversation leaves it error, readable', async () => {
    const env = controllerEnv();
    const name = await readyOn(env, hex(4));
    await setExecution(env, name, 'running');
    await env.store.delete(SandboxKind, NS, 'sb1');
    await env.settleSandbox('sb1');
    await env.settleConversation(name);
    expect(await executionOf(env, name)).toBe('error');
  });
});

describe('a death before READY', () => {
  it('retries the start on the restarted agent server instead of ending in ERROR', async () => {
    const env = controllerEnv();
    await env.createConversation(hex(5));
    await env.settleConversation(hex(5));
    const sb = (await env.store.get(ConversationKind, NS, hex(5)))!.status!.sandboxName!;
    await env.settleSandbox(sb);
    env.runtime.die(sb, 'AgentServerFailed'); // died while starting
    await env.settleSandbox(sb);
    await env.settleConversation(hex(5));
    expect((await env.store.get(ConversationKind, NS, hex(5)))!.status?.startTask?.status).toBe('WAITING_FOR_SANDBOX');
    env.clock.advance(1_000);
    await env.settleSandbox(sb);
    env.runtime.boot(sb, agent.url);
    await env.settleSandbox(sb);
    await env.settleConversation(hex(5));
    expect((await env.store.get(ConversationKind, NS, hex(5)))!.status?.startTask?.status).toBe('READY');
    expect((await env.sandbox(sb))!.status?.restartCount).toBe(1);
  });
});
