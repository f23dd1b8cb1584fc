// The start task's failure paths and its idempotent placement, against a real SQLite store, the
// fake runtime and a loopback stand-in agent server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConversationKind } from '../../api/conversation.ts';
import { Unavailable } from '../../api/errors.ts';
import { LABEL_SANDBOX, type KubeObject, type ResourceKind } from '../../api/meta.ts';
import { SandboxKind } from '../../api/sandbox.ts';
import { SecretKind } from '../../api/secret.ts';
import { controllerEnv, interceptStore, NS } from '../testing/env.ts';
import { startFakeAgentServer, type FakeAgentServer } from '../testing/fake-agent-server.ts';
import { ConversationReconciler } from './reconciler.ts';
import { startTestServer, tempDir, type TestServer } from '../../agent-server/test-support.ts';

let agent: FakeAgentServer;
beforeAll(async () => (agent = await startFakeAgentServer()));
afterAll(() => agent.close());

const hex = (n: number) => n.toString(16).padStart(32, '0');
type Env = ReturnType<typeof controllerEnv>;

async function runningSandbox(env: Env, name: string, owner = 'alice') {
  await env.createSandbox(name, owner);
  await env.settleSandbox(name);
  env.runtime.boot(name, agent.url);
  await env.settleSandbox(name);
}

const task = async (env: Env, name: string) => (await env.store.get(ConversationKind, NS, name))!.status?.startTask;
const readyReason = async (env: Env, name: string) => (await env.store.get(ConversationKind, NS, name))!.status?.conditions?.find((c) => c.type === 'Ready')?.reason;

describe('start task failures', () => {
  it.each([
    ['a selected repository on a Git host with no configured URL', { selectedRepository: 'octo/repo', gitProvider: 'forgejo' as const }, 'StartFailed', /No Git host is configured for forgejo/],
    ['a selected repository on an agent server that cannot clone', { selectedRepository: 'octo/repo' }, 'StartFailed', /cannot clone repositories/],
  ])('%s ends in ERROR with a clear detail', async (_name, spec, reason, detail) => {
    const env = controllerEnv();
    await runningSandbox(env, 'warm');
    await env.createConversation(hex(1), { sandboxName: 'warm', ...spec });
    await env.settleConversation(hex(1));
    const t = await task(env, hex(1));
    expect(t?.status).toBe('ERROR');
    expect(t?.detail).toMatch(detail);
    expect(await readyReason(env, hex(1))).toBe(reason);
    expect(agent.started.some((r) => String(r.conversation_id).replaceAll('-', '') === hex(1))).toBe(false);
  });

  it.each([
    ['its sandbox fails', async (env: Env, sb: string) => void env.runtime.states.set(sb, { phase: 'failed', reason: 'RuntimeFailed', message: 'no memory' }), 'SandboxNotRunning', /failed: no memory/],
    ['its sandbox is paused', async (env: Env, sb: string) => {
      const current = (await env.store.get(SandboxKind, NS, sb))!;
      await env.store.update(SandboxKind, { ...current, spec: { ...current.spec, paused: true } });
    }, 'SandboxNotRunning', /was paused before this conversation started/],
    ['its sandbox is deleted', async (env: Env, sb: string) => env.store.delete(SandboxKind, NS, sb), 'SandboxNotFound', /no longer exists/],
  ])('a start waiting for its sandbox ends in ERROR when %s', async (_name, act, reason, detail) => {
    const env = controllerEnv();
    await env.createConversation(hex(2));
    await env.settleConversation(hex(2));
    expect((await task(env, hex(2)))?.status).toBe('WAITING_FOR_SANDBOX');
    const sb = (await env.store.get(ConversationKind, NS, hex(2)))!.status!.sandboxName!;
    await act(env, sb);
    await env.settleSandbox(sb);
    await env.settleConversation(hex(2));
    expect(await task(env, hex(2))).toMatchObject({ status: 'ERROR', detail: expect.stringMatching(detail) });
    expect(await readyReason(env, hex(2))).toBe(reason);
  });

  it('an agent server that refuses the request (422) ends the start; one that is unreachable is retried', async () => {
    const env = controllerEnv();
    await runningSandbox(env, 'warm');
    agent.answers.set(hex(3), [422, { detail: [{ loc: ['body', 'agent'], msg: 'bad agent', type: 'value_error' }] }]);
    await env.createConversation(hex(3), { sandboxName: 'warm' });
    await env.settleConversation(hex(3));
    expect(await task(env, hex(3))).toMatchObject({ status: 'ERROR', detail: expect.stringMatching(/refused the conversation/) });

    agent.answers.set(hex(4), [503, { detail: 'starting' }]);
    await env.createConversation(hex(4), { sandboxName: 'warm' });
    for (let i = 0; i < 7; i++) await env.conversations.reconcile(`${NS}/${hex(4)}`);
    expect((await task(env, hex(4)))?.status).toBe('STARTING_CONVERSATION');
    await expect(env.conversations.reconcile(`${NS}/${hex(4)}`)).rejects.toBeInstanceOf(Unavailable);
    agent.answers.delete(hex(4));
    await env.settleConversation(hex(4));
    expect((await task(env, hex(4)))?.status).toBe('READY');
  });
});

describe('a start the real agent server refuses', () => {
  const dir = tempDir();
  let real: TestServer;
  beforeAll(async () => (real = await startTestServer(dir.path, { sessionKeys: [] })));
  afterAll(async () => {
    await real.close();
    dir.remove();
  });

  it('ends in ERROR with the reason when the request is over its 10 MB limit (413), instead of retrying forever (#18 finding 6)', async () => {
    const env = controllerEnv();
    await env.createSandbox('big', 'alice');
    await env.settleSandbox('big');
    env.runtime.boot('big', real.url);
    await env.settleSandbox('big');
    // Applied directly (kubectl), past the API's own 1 MiB message limit.
    const text = 'x'.repeat(11 * 1024 * 1024);
    await env.createConversation(hex(20), { sandboxName: 'big', initialMessage: { role: 'user', content: [{ type: 'text', text }] } });
    await env.settleConversation(hex(20));
    expect(await task(env, hex(20))).toMatchObject({ status: 'ERROR', detail: expect.stringMatching(/refused the conversation.*larger than it takes \(413\)/) });
    expect(await readyReason(env, hex(20))).toBe('StartFailed');
    // Terminal: another pass does nothing (no request, no retry).
    expect(await env.conversations.reconcile(`${NS}/${hex(20)}`)).toEqual({});
    expect((await real.api('/api/conversations/search')).body.items).toEqual([]);
  });
});

describe('what the agent server is given', () => {
  it('the secrets decoded from spec.secretsRef and the model settings; never the secrets in the status', async () => {
    const env = controllerEnv({}, { llm: { model: 'openai/gpt-x', baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'sk-model' } });
    await runningSandbox(env, 'warm');
    await env.store.create(SecretKind, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `${hex(5)}-secrets`, namespace: NS },
      data: { GITHUB_TOKEN: Buffer.from('ghp_very_secret').toString('base64') },
    });
    await env.createConversation(hex(5), { sandboxName: 'warm', secretsRef: `${hex(5)}-secrets` });
    const conv = (await env.settleConversation(hex(5)))!;
    expect(conv.status?.startTask?.status).toBe('READY');
    const request = agent.started.find((r) => String(r.conversation_id).replaceAll('-', '') === hex(5))!;
    expect(request.conversation_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(request.secrets).toEqual({ GITHUB_TOKEN: 'ghp_very_secret' });
    // The user's and the working directory's skills asked for: 1.58 loads neither by default.
    expect(request.agent).toEqual({
      kind: 'Agent',
      llm: { model: 'openai/gpt-x', base_url: 'http://127.0.0.1:9/v1', api_key: 'sk-model', stream: true },
      agent_context: { load_user_skills: true, load_project_skills: true },
    });
    expect(request.workspace).toEqual({ kind: 'LocalWorkspace', working_dir: '.' });
    expect(request.key).toBe(Buffer.from((await env.store.get(SecretKind, NS, 'warm-session'))!.data!.key!, 'base64').toString());
    expect(JSON.stringify(conv)).not.toContain('ghp_very_secret');
  });
});

describe('placement is idempotent', () => {
  it('keeps a choice recorded by a pass that died before its status write', async () => {
    const env = controllerEnv();
    await runningSandbox(env, 'warm');
    const conv = await env.createConversation(hex(6));
    await env.store.update(ConversationKind, { ...conv, metadata: { ...conv.metadata, labels: { ...conv.metadata.labels, [LABEL_SANDBOX]: 'warm' } } });
    await env.conversations.reconcile(`${NS}/${hex(6)}`);
    expect((await env.store.get(ConversationKind, NS, hex(6)))!.status?.sandboxName).toBe('warm');
    expect((await env.store.list(SandboxKind, NS)).items.map((s) => s.metadata.name)).toEqual(['warm']);
  });

  it('labels the conversation before it creates the new sandbox, so a failed create is retried onto the same name', async () => {
    const env = controllerEnv();
    let failCreate = true;
    const flaky = interceptStore(env.store, {
      create: async <T extends KubeObject>(kind: ResourceKind<T>, obj: T) => {
        if (kind.kind === 'Sandbox' && failCreate) {
          failCreate = false;
          throw new Unavailable('the store hiccupped');
        }
        return env.store.create(kind, obj);
      },
    });
    const reconciler = new ConversationReconciler({ store: flaky, clock: env.clock, settings: env.settings });
    await env.createConversation(hex(7));
    await expect(reconciler.reconcile(`${NS}/${hex(7)}`)).rejects.toBeInstanceOf(Unavailable);
    expect((await env.store.get(ConversationKind, NS, hex(7)))!.metadata.labels?.[LABEL_SANDBOX]).toBe(hex(7));
    expect((await env.store.list(SandboxKind, NS)).items).toHaveLength(0);
    await reconciler.reconcile(`${NS}/${hex(7)}`);
    expect((await env.store.get(ConversationKind, NS, hex(7)))!.status?.sandboxName).toBe(hex(7));
    expect((await env.store.list(SandboxKind, NS)).items.map((s) => s.metadata.name)).toEqual([hex(7)]);
  });

  it('two starts racing for the last slot: one gets a sandbox, the other CapacityExceeded', async () => {
    const env = controllerEnv({ capacity: 1 });
    await env.createConversation(hex(8));
    await env.createConversation(hex(9));
    await Promise.all([env.conversations.reconcile(`${NS}/${hex(8)}`), env.conversations.reconcile(`${NS}/${hex(9)}`)]);
    const outcomes = [(await task(env, hex(8)))?.status, (await task(env, hex(9)))?.status].sort();
    expect(outcomes).toEqual(['ERROR', 'WAITING_FOR_SANDBOX']);
    expect((await env.store.list(SandboxKind, NS)).items).toHaveLength(1);
  });
});
