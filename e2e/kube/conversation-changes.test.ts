// The conversation list's change stream in cluster mode: the API server's watch (KubeStore) drives
// GET /api/v1/app-conversations/changes on a real kube-apiserver. Sandbox and execution status are
// pushed as the controller's writes land, only the caller's, and a reconnect with the last event
// id resumes without missing a change (the same behaviour as SQLite's change feed,
// src/facade/conversation-changes.test.ts).
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import type { EventSourceMessage } from 'eventsource-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConversationKind, type Conversation } from '../../src/api/conversation.ts';
import { API_VERSION, LABEL_OWNER, LABEL_START_TASK } from '../../src/api/meta.ts';
import { SandboxKind, type Sandbox } from '../../src/api/sandbox.ts';
import { systemClock } from '../../src/controller/clock.ts';
import { SqliteAppStore } from '../../src/facade/db/app-db.ts';
import type { AppUser } from '../../src/facade/db/types.ts';
import { startApiServer, type ApiServer } from '../../src/facade/server.ts';
import { KubeStore } from '../../src/store/kube/kube-store.ts';
import { SseStream } from '../../src/testing/sse.ts';
import { createLogger } from '../../src/util/log.ts';
import { kubeBinDir, startTestCluster, type TestCluster } from './cluster.ts';

const skip = !kubeBinDir();
type Rec = { id: string; sandbox_status: string; execution_status: string | null };
const changeOf = (id: string, ok: (r: Rec) => boolean) => (e: EventSourceMessage) => e.event === 'change' && (JSON.parse(e.data) as Rec).id === id && ok(JSON.parse(e.data) as Rec);

describe.skipIf(skip)('the conversation change stream on a real API server', () => {
  let cluster: TestCluster;
  let store: KubeStore;
  let db: SqliteAppStore;
  let api: ApiServer;
  let ns: string;
  let alice: { user: AppUser; key: string };
  let bob: { user: AppUser; key: string };
  const dir = mkdtempSync(join(tmpdir(), 'kube-changes-'));
  const streams: SseStream[] = [];

  beforeAll(async () => {
    cluster = await startTestCluster({ controllerManager: false });
    store = new KubeStore(cluster.kubeConfig);
    ns = `changes-${randomUUID().slice(0, 8)}`;
    await cluster.kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: ns } } });
    db = new SqliteAppStore(join(dir, 'app.db'), { clock: systemClock });
    const mk = async (name: string) => {
      const user = await db.createUser(name);
      return { user, key: await db.createApiKey(user.id) };
    };
    alice = await mk('alice');
    bob = await mk('bob');
    api = await startApiServer({ store, db, clock: systemClock, namespace: ns, settings: { capacity: 10 }, log: createLogger('kube-changes', 'silent'), port: 0, host: '127.0.0.1' });
  }, 300_000);

  afterAll(async () => {
    for (const s of streams) s.close();
    await api?.close();
    await db?.close();
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const open = async (key: string, lastEventId?: string) => {
    const s = await SseStream.open(`${api.url}/api/v1/app-conversations/changes`, { authorization: `Bearer ${key}`, ...(lastEventId ? { 'last-event-id': lastEventId } : {}) });
    streams.push(s);
    expect(s.status).toBe(200);
    return s;
  };
  const start = async (key: string) => {
    const res = await fetch(`${api.url}/api/v1/app-conversations`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(200);
    const task = ((await res.json()) as { id: string }).id;
    return (await store.list(ConversationKind, ns, { labelSelector: `${LABEL_START_TASK}=${task}` })).items[0]!.metadata.name;
  };
  /** What the controller writes: a sandbox of `owner`, and its status. */
  const sandbox = (owner: AppUser, name: string) =>
    store.create(SandboxKind, { apiVersion: API_VERSION, kind: 'Sandbox', metadata: { name, namespace: ns, labels: { [LABEL_OWNER]: owner.id } }, spec: { owner: owner.id, paused: false } });
  const sandboxPhase = async (name: string, phase: NonNullable<Sandbox['status']>['phase']) => {
    const sb = (await store.get(SandboxKind, ns, name))!;
    await store.updateStatus(SandboxKind, { ...sb, status: { ...sb.status, phase } });
  };
  const convStatus = async (id: string, status: Partial<NonNullable<Conversation['status']>>) => {
    const c = (await store.get(ConversationKind, ns, id))!;
    await store.updateStatus(ConversationKind, { ...c, status: { ...c.status, ...status } });
  };

  it("pushes the caller's sandbox and execution status from the API server's watch, and resumes after a reconnect", async () => {
    const mine = await start(alice.key);
    const bobs = await start(bob.key);
    await sandbox(alice.user, 'sb-alice');
    await sandbox(bob.user, 'sb-bob');
    const s = await open(alice.key);
    const snap = JSON.parse((await s.next((e) => e.event === 'snapshot')).data) as { items: Rec[] };
    expect(snap.items.map((r) => r.id)).toEqual([mine]);

    await convStatus(mine, { sandboxName: 'sb-alice', startTask: { status: 'READY' } });
    await sandboxPhase('sb-alice', 'RUNNING');
    await s.next(changeOf(mine, (r) => r.sandbox_status === 'RUNNING'));
    await convStatus(bobs, { sandboxName: 'sb-bob', executionStatus: 'running' });
    await sandboxPhase('sb-bob', 'RUNNING');
    await convStatus(mine, { executionStatus: 'running' });
    const last = await s.next(changeOf(mine, (r) => r.execution_status === 'running'));
    expect(s.events.map((e) => e.data).join('\n')).not.toContain(bobs);
    s.close();

    // While nobody listens: the sandbox pauses and the agent finishes; a reconnect from the last id shows both, no snapshot.
    await sandboxPhase('sb-alice', 'PAUSED');
    await convStatus(mine, { executionStatus: 'finished' });
    const again = await open(alice.key, last.id);
    await again.next(changeOf(mine, (r) => r.sandbox_status === 'PAUSED' && r.execution_status === 'finished'));
    expect(again.events.some((e) => e.event === 'snapshot')).toBe(false);
  });
});
