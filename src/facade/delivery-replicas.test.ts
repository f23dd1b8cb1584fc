// Two API replicas sharing one PostgreSQL app store and one resource store: messages queued through
// either replica reach the agent server once each, in order, when the sandbox runs again.
// Needs Debian's postgresql; skipped without it.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SandboxKind } from '../api/sandbox.ts';
import { createLogger } from '../util/log.ts';
import { postgresBinDir, startPostgres, type PgServer } from '../testing/postgres/server.ts';
import { PostgresAppStore } from './db/postgres/app-store.ts';
import { startApiServer, type ApiServer } from './server.ts';
import { eventually, makeSandbox, NS, setSandboxPhase, setStartTask, startConversationId, startFakeAgentServer, startHarness, type FakeAgentServer, type Harness } from './test-support.ts';

const binDir = postgresBinDir();

describe.skipIf(!binDir)(`queued messages with two API replicas on PostgreSQL${binDir ? '' : ' (skipped: PostgreSQL server binaries not found under /usr/lib/postgresql; install Debian postgresql)'}`, () => {
  let pg: PgServer;
  let h: Harness;
  let second: { db: PostgresAppStore; server: ApiServer };
  let agent: FakeAgentServer;

  beforeEach(async () => {
    pg = await startPostgres();
    h = await startHarness({ capacity: 5 }, { appStore: (clock) => PostgresAppStore.open(pg.url, { clock }) });
    const db = await PostgresAppStore.open(pg.url, { clock: h.clock });
    const server = await startApiServer({ store: h.store, db, clock: h.clock, namespace: NS, settings: { capacity: 5 }, log: createLogger('replica-b'), port: 0, host: '127.0.0.1', deliveryRetryMs: 50 });
    second = { db, server };
    agent = await startFakeAgentServer('sk-1');
  }, 30_000);

  afterEach(async () => {
    await second.server.close();
    await second.db.close();
    await h.close(); // ends the first replica's pool before the server stops
    await agent.close();
    await pg.stop();
  });

  it('delivers each message once and in order, whichever replica queued it', async () => {
    await makeSandbox(h.store, h.alice.user, 'sb-1', 'RUNNING', { url: agent.url, key: 'sk-1' });
    const id = await startConversationId(h, { sandbox_id: 'sb-1' });
    await setStartTask(h.store, id, 'READY', 'sb-1');
    await h.store.update(SandboxKind, { ...(await h.store.get(SandboxKind, NS, 'sb-1'))!, spec: { owner: h.alice.user.id, paused: true } });
    await setSandboxPhase(h.store, 'sb-1', 'PAUSED');

    const texts = ['one', 'two', 'three', 'four', 'five', 'six'];
    for (const [i, t] of texts.entries()) {
      const base = i % 2 === 0 ? h.server.url : second.server.url;
      const res = await fetch(`${base}/api/v1/app-conversations/${id}/send-message`, {
        method: 'POST',
        headers: { authorization: `Bearer ${h.alice.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ role: 'user', content: [{ type: 'text', text: t }] }),
      });
      expect(await res.json()).toMatchObject({ success: true, sandbox_status: 'PAUSED' });
    }
    expect(await second.db.pending.count(id)).toBe(texts.length);

    await setSandboxPhase(h.store, 'sb-1', 'RUNNING'); // wakes both replicas' delivery loops
    // Once the queue is empty nothing can be delivered again: a message is claimed before delivery.
    await eventually(async () => (await h.db.pending.count(id)) === 0, 'the queue to drain');
    expect(agent.received.map((m) => m.body.content[0].text)).toEqual(texts);
  });
});
