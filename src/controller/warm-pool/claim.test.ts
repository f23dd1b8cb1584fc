// Conversation starts claiming warm-pool members (SQLite store, fake runtime, loopback stand-in
// agent server): the claim, the hand-over of keys, the refill, the cold fallback, the timers after
// the claim, and no double claim when starts race in two controllers at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConversationKind } from '../../api/conversation.ts';
import { LABEL_OWNER } from '../../api/meta.ts';
import { MODEL_TOKEN_KEY } from '../../api/model-gateway.ts';
import { SandboxKind } from '../../api/sandbox.ts';
import { SecretKind } from '../../api/secret.ts';
import { ANNOTATION_CLAIMED_BY, LABEL_CLAIMED_FROM, LABEL_WARM_POOL, SandboxWarmPoolKind } from '../../api/warm-pool.ts';
import { ConversationReconciler } from '../conversation/reconciler.ts';
import { readSessionKey, sessionSecretName } from '../sandbox/session-secret.ts';
import { controllerEnv, interceptStore, NS } from '../testing/env.ts';
import { startFakeAgentServer, type FakeAgentServer } from '../testing/fake-agent-server.ts';
import { ANNOTATION_HANDED_TO } from './hand-over.ts';
import { REFILL_DELAY_MS } from './reconciler.ts';
import { createPool, fill, members } from './testing.ts';

let agent: FakeAgentServer;
beforeAll(async () => {
  agent = await startFakeAgentServer();
});
afterAll(() => agent.close());

const hex = (n: number) => n.toString(16).padStart(32, '0');
const b64 = (s: string | undefined) => (s === undefined ? undefined : Buffer.from(s, 'base64').toString('utf8'));

describe('claiming from a warm pool', () => {
  it('places a start on a ready member, hands it over to the user with new keys, and the pool refills', async () => {
    const env = controllerEnv();
    await createPool(env, 'p', { replicas: 2 });
    const [oldest] = await fill(env, 'p', { url: agent.url });
    const poolKey = await readSessionKey(env.store, NS, oldest!.metadata.name);

    await env.createConversation(hex(1), {}, 'alice');
    const conv = (await env.settleConversation(hex(1)))!;
    expect(conv.status?.startTask?.status).toBe('READY');
    expect(conv.status?.sandboxName).toBe(oldest!.metadata.name);
    expect(env.warmPoolCounts).toEqual({ hits: ['p'], misses: 0 });

    const sb = (await env.sandbox(oldest!.metadata.name))!;
    expect(sb.spec.owner).toBe('alice');
    expect(sb.metadata.labels).toMatchObject({ [LABEL_OWNER]: 'alice', [LABEL_CLAIMED_FROM]: 'p' });
    expect(sb.metadata.labels?.[LABEL_WARM_POOL]).toBeUndefined();
    expect(sb.metadata.ownerReferences ?? []).toEqual([]);
    expect(sb.metadata.annotations?.[ANNOTATION_CLAIMED_BY]).toBe(hex(1));

    // New session key and a first model token; the agent server was told with the pool's key.
    const secret = (await env.store.get(SecretKind, NS, sessionSecretName(sb.metadata.name)))!;
    const sessionKey = b64(secret.data?.key)!;
    const token = b64(secret.data?.[MODEL_TOKEN_KEY])!;
    expect(sessionKey).not.toBe(poolKey);
    expect(token).toMatch(new RegExp(`^aysb\\.${sb.metadata.name}\\.`));
    expect(secret.data?.['pool-key']).toBeUndefined();
    expect(secret.metadata.annotations?.[ANNOTATION_HANDED_TO]).toBe('alice');
    expect(agent.handOvers.at(-1)).toEqual({ key: poolKey, session_key: sessionKey, llm_api_key: token, secret_key: `sealed:${sessionKey}` });
    // The conversation was started with the user's key, after the hand-over.
    expect(agent.started.find((r) => String(r.conversation_id).replaceAll('-', '') === hex(1))?.key).toBe(sessionKey);

    // The pool starts a replacement, once the claiming start is through (REFILL_DELAY_MS).
    expect((await env.pools.reconcile(`${NS}/p`)).requeueAfterMs).toBe(REFILL_DELAY_MS);
    expect(await members(env, 'p')).toHaveLength(1);
    env.clock.advance(REFILL_DELAY_MS);
    await env.pools.reconcile(`${NS}/p`);
    expect(await members(env, 'p')).toHaveLength(2);
    expect((await env.store.get(SandboxWarmPoolKind, NS, 'p'))!.status).toMatchObject({ claimed: 1, replicas: 2, readyReplicas: 1 });
  });

  it('starts cold when no member is ready, or no pool matches the sandbox the start would get', async () => {
    const env = controllerEnv();
    await createPool(env, 'gpu', { replicas: 1, template: { resources: { memory: '64Gi' } } });
    await fill(env, 'gpu', { url: agent.url });
    await createPool(env, 'plain', { replicas: 1 });
    await fill(env, 'plain', { boot: false });
    await env.createConversation(hex(2), {}, 'bob');
    const conv = (await env.settleConversation(hex(2), 1))!;
    expect(conv.status?.sandboxName).toBe(hex(2));
    expect(env.warmPoolCounts).toEqual({ hits: [], misses: 1 });
  });

  it('starts the idle and session timers at the claim, not at the member start', async () => {
    const env = controllerEnv({ idleTimeMs: 60_000 });
    await createPool(env, 'p', { replicas: 1 });
    const [member] = await fill(env, 'p', { url: agent.url });
    env.clock.advance(11 * 3_600_000); // waited 11 hours in the pool
    await env.createConversation(hex(3), {}, 'carol');
    await env.settleConversation(hex(3));
    const name = member!.metadata.name;
    const result = await env.sandboxes.reconcile(`${NS}/${name}`);
    expect(result.requeueAfterMs).toBe(60_000);
    env.clock.advance(59_000);
    await env.settleSandbox(name);
    expect((await env.sandbox(name))!.spec.paused).toBe(false);
    env.clock.advance(1_000);
    await env.settleSandbox(name);
    expect((await env.sandbox(name))!.status?.phase).toBe('PAUSED');
  });

  it('never gives one member to two starts racing in two controllers: a pool of 3, 8 parallel starts, exactly 3 hits', async () => {
    const env = controllerEnv({ capacity: 50 });
    await createPool(env, 'p', { replicas: 3 });
    await fill(env, 'p', { url: agent.url });
    const counts = { hits: 0, misses: 0 };
    const metrics = { hit: () => void counts.hits++, miss: () => void counts.misses++, pool: () => undefined, poolGone: () => undefined };
    // Two controllers (as two replicas during a leader hand-over would be): only the store's resourceVersion keeps them apart.
    const controllers = [0, 1].map(() => new ConversationReconciler({ store: env.store, clock: env.clock, settings: env.settings, runtime: env.runtime, warmPools: metrics }));
    const starts = Array.from({ length: 8 }, (_, i) => hex(100 + i));
    for (const [i, id] of starts.entries()) await env.createConversation(id, {}, `user-${i}`);
    await Promise.all(starts.map((id, i) => controllers[i % 2]!.reconcile(`${NS}/${id}`)));

    const placed = await Promise.all(starts.map(async (id) => (await env.store.get(ConversationKind, NS, id))!.status?.sandboxName));
    const claimedNames = placed.filter((n) => n !== undefined && n.startsWith('p-'));
    expect(counts).toEqual({ hits: 3, misses: 5 });
    expect(new Set(claimedNames).size).toBe(3);
    for (const [i, id] of starts.entries()) {
      const name = placed[i]!;
      const sb = (await env.sandbox(name))!;
      // Each claimed sandbox belongs to the one user whose start claimed it.
      if (name.startsWith('p-')) expect([sb.spec.owner, sb.metadata.annotations?.[ANNOTATION_CLAIMED_BY]]).toEqual([`user-${i}`, id]);
    }
  });

  it('finds its own claim again when a pass died between the claim and recording the placement', async () => {
    const env = controllerEnv();
    await createPool(env, 'p', { replicas: 2 });
    await fill(env, 'p', { url: agent.url });
    await env.createConversation(hex(4), {}, 'dave');
    let failed = false;
    const flaky = interceptStore(env.store, {
      update: async (kind, obj) => {
        if (kind === ConversationKind && !failed) {
          failed = true;
          throw new Error('connection lost');
        }
        return env.store.update(kind, obj);
      },
    });
    const reconciler = new ConversationReconciler({ store: flaky, clock: env.clock, settings: env.settings, runtime: env.runtime });
    await expect(reconciler.reconcile(`${NS}/${hex(4)}`)).rejects.toThrow('connection lost');
    await reconciler.reconcile(`${NS}/${hex(4)}`);
    const conv = (await env.store.get(ConversationKind, NS, hex(4)))!;
    const { items: claimed } = await env.store.list(SandboxKind, NS, { labelSelector: `${LABEL_CLAIMED_FROM}=p` });
    expect(claimed).toHaveLength(1);
    expect(conv.status?.sandboxName).toBe(claimed[0]!.metadata.name);
  });
});
