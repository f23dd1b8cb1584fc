// Fault suite, embedded mode (issue 13): conversations run multi-step tasks against a scripted model
// while a seeded schedule kill -9s their agent servers and `agentyard up` itself and takes the model
// down for a while (500s until the agent's retries give up). Afterwards:
//   nothing lost        every event an agent server saved is in the app transcript, in its order
//   nothing duplicated  each of them once
//   nothing stuck       every start task final; no conversation `running` (app or agent server);
//                       the app's execution_status is the agent server's; every sandbox RUNNING,
//                       restarted once per kill (restartCount), one agent server process each
//   no orphans          once `up` stops, no process of its data directory is left
// The seed is printed; AGENTYARD_FAULT_SEED=<n> repeats the schedule (the model's timing may differ).
// It also prints how fast a killed agent server was noticed and back (detection and restart times).
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SandboxKind } from '../../src/api/sandbox.ts';
import { systemClock } from '../../src/controller/clock.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { startScriptedLlm, type ScriptedLlm } from '../../src/testing/scripted-llm/server.ts';
import { persistedEvents, userMessage, type ConversationRecord, type StartTask } from '../embedded/flows.ts';
import { eventually, removeDataDir, scriptedModelEnv, startService, type RunningService } from '../embedded/harness.ts';
import { agentServerProcesses, allEvents, expectNoRunningWhileDown, faultSeed, killAll, processesMentioning, seeded, sleep, summary, timeRecovery, workingModel } from './kit.ts';
import { freePort } from '../../src/testing/ports.ts';

const SEED = faultSeed();
const ROUNDS = 8;
/** Tool steps per run before the model calls finish. */
const STEPS = 4;
/** At most this many agent-server kills per sandbox: five within ten minutes would be a crash loop (ERROR), a different test. */
const MAX_KILLS_PER_SANDBOX = 3;


describe.skipIf(process.platform !== 'linux')('fault suite (embedded): random kill -9 of agent servers and of up, a failing model', () => {
  let work = '';
  let dataDir = '';
  let llm: ScriptedLlm | undefined;
  let svc: RunningService | undefined;
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'agentyard-faults-'));
    dataDir = join(work, 'data');
  });
  afterAll(async () => {
    await svc?.stop();
    if (dataDir) killAll(dataDir); // last resort, so a failed run leaves nothing behind either
    await llm?.close();
    if (work) removeDataDir(work);
  });

  it(`heals every fault with nothing lost, duplicated, stuck or orphaned (seed ${SEED})`, async () => {
    console.log(`fault suite seed: ${SEED} (AGENTYARD_FAULT_SEED=${SEED} repeats the schedule)`);
    const rand = seeded(SEED);
    const outage = { until: 0 };
    const reply = workingModel(STEPS, outage);
    llm = await startScriptedLlm(Array.from({ length: 3000 }, () => reply));
    const port = await freePort(); // agent servers push to the API: a restarted `up` keeps the address
    const env = { ...scriptedModelEnv(llm), AGENTYARD_LOG_LEVEL: 'warn' };
    svc = await startService({ dataDir, port, env });
    const api = <T>(method: string, path: string, body?: unknown) => svc!.api<T>(method, path, body);

    // Three conversations on two sandboxes (the third joins the first's agent server).
    const startTask = async (body: Record<string, unknown>) => {
      const { body: task } = await api<StartTask>('POST', '/api/v1/app-conversations', body);
      return eventually(async () => {
        const { body: tasks } = await api<(StartTask | null)[]>('GET', `/api/v1/app-conversations/start-tasks?ids=${task.id}`);
        if (tasks[0]?.status === 'ERROR') throw new Error(`start failed: ${tasks[0].detail}`);
        return tasks[0]?.status === 'READY' ? (tasks[0] as StartTask & { app_conversation_id: string; sandbox_id: string }) : undefined;
      }, 'a start task to be READY');
    };
    const [a, b] = await Promise.all([startTask({ initial_message: userMessage('task A') }), startTask({ initial_message: userMessage('task B') })]);
    const c = await startTask({ initial_message: userMessage('task C'), sandbox_id: a.sandbox_id });
    const conversations = [a, b, c].map((t) => ({ id: t.app_conversation_id, sandbox: t.sandbox_id }));
    const sandboxes = [a.sandbox_id, b.sandbox_id];

    const kills = new Map<string, number>(sandboxes.map((s) => [s, 0]));
    const timings = { noticed: [] as number[], back: [] as number[] };
    const watchers: Promise<void>[] = [];
    const pidOf = (sandbox: string) => (JSON.parse(readFileSync(join(dataDir, 'sandboxes', sandbox, 'runtime.json'), 'utf8')) as { pid?: number }).pid;
    const sandboxStatus = async (sandbox: string) => {
      const res = await svc!.api<({ status: string } | null)[]>('GET', `/api/v1/sandboxes?id=${sandbox}`).catch(() => undefined);
      return res?.status === 200 ? res.body[0]?.status : undefined; // undefined while `up` is down
    };
    const nudge = async () => {
      // New work for conversations whose run ended (finished, or lost to a fault): the faults keep landing mid-run.
      const { body } = await api<(ConversationRecord | null)[]>('GET', `/api/v1/app-conversations?${conversations.map((x) => `ids=${x.id}`).join('&')}`).catch(() => ({ body: [] as (ConversationRecord | null)[] }));
      for (const rec of body ?? []) {
        if (rec && rec.sandbox_status === 'RUNNING' && rec.execution_status !== 'running') {
          await api('POST', `/api/v1/app-conversations/${rec.id}/send-message`, userMessage('go on')).catch(() => undefined);
        }
      }
    };

    const schedule: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      await sleep(500 + rand() * 2000);
      const r = rand();
      const victim = sandboxes[Math.floor(rand() * sandboxes.length)]!;
      if (r < 0.5 && kills.get(victim)! < MAX_KILLS_PER_SANDBOX) {
        // Wait until it serves again (a kill while it is down would be no kill), then kill -9 its agent server.
        await eventually(async () => ((await sandboxStatus(victim)) === 'RUNNING' ? true : undefined), `sandbox ${victim} RUNNING before a kill`, 60_000, 50);
        // The agent server itself (under isolation the recorded pid is its launcher chain's head).
        const pid = agentServerProcesses(join(dataDir, 'sandboxes', victim, 'workspace'))[0]?.pid ?? pidOf(victim)!;
        process.kill(pid, 'SIGKILL');
        kills.set(victim, kills.get(victim)! + 1);
        watchers.push(timeRecovery(() => sandboxStatus(victim), Date.now(), timings));
        // Status truth after this fault: its conversations leave `running` while it is down.
        const onVictim = conversations.filter((x) => x.sandbox === victim).map((x) => `ids=${x.id}`).join('&');
        await expectNoRunningWhileDown(
          () => sandboxStatus(victim),
          async () => (await api<(ConversationRecord | null)[]>('GET', `/api/v1/app-conversations?${onVictim}`)).body.map((r) => r?.execution_status ?? null),
        );
        schedule.push(`kill agent server ${victim}`);
      } else if (r < 0.75) {
        await svc.stop('SIGKILL');
        await sleep(rand() * 1000);
        svc = await startService({ dataDir, port, env });
        schedule.push('kill -9 up');
      } else {
        outage.until = Date.now() + 1500;
        schedule.push('model outage 1.5 s');
      }
      await nudge();
    }
    console.log(`fault schedule (seed ${SEED}): ${schedule.join(', ')}`);
    await Promise.all(watchers);

    // Settle: every sandbox serves again, no run is left going, and the app agrees with each agent server.
    for (const s of sandboxes) await eventually(async () => ((await sandboxStatus(s)) === 'RUNNING' ? true : undefined), `sandbox ${s} RUNNING again`, 90_000, 100);
    const agentServer = async (sandbox: string) => {
      const { body } = await api<({ session_api_key: string; exposed_urls: { name: string; url: string }[] } | null)[]>('GET', `/api/v1/sandboxes?id=${sandbox}`);
      const url = body[0]!.exposed_urls.find((u) => u.name === 'AGENT_SERVER')!.url;
      const headers = { 'X-Session-API-Key': body[0]!.session_api_key };
      const get = async <T>(path: string) => (await (await fetch(url + path, { headers })).json()) as T;
      return { get };
    };
    const appGet = async <T>(path: string) => (await api<T>('GET', path)).body;

    for (const conv of conversations) {
      const server = await agentServer(conv.sandbox);
      await eventually(
        async () => {
          const agentInfo = await server.get<{ execution_status: string }>(`/api/conversations/${conv.id}`);
          const [rec] = await appGet<(ConversationRecord | null)[]>(`/api/v1/app-conversations?ids=${conv.id}`);
          if (agentInfo.execution_status === 'running' || rec?.execution_status !== agentInfo.execution_status) return undefined;
          const saved = (await allEvents(server.get, `/api/conversations/${conv.id}/events/search`)).map((e) => e.id);
          const transcript = persistedEvents(await allEvents(appGet, `/api/v1/conversation/${conv.id}/events/search`)).map((e) => e.id);
          return JSON.stringify(saved) === JSON.stringify(transcript) ? true : undefined;
        },
        `conversation ${conv.id}: no run going, the app agreeing with its agent server`,
        90_000,
        250,
      );
      // The checks themselves, on the settled state.
      const saved = await allEvents(server.get, `/api/conversations/${conv.id}/events/search`);
      const transcript = persistedEvents(await allEvents(appGet, `/api/v1/conversation/${conv.id}/events/search`));
      expect(transcript.map((e) => e.id)).toEqual(saved.map((e) => e.id)); // nothing lost, in order
      expect(new Set(transcript.map((e) => e.id)).size).toBe(transcript.length); // nothing twice
      const [rec] = await appGet<(ConversationRecord | null)[]>(`/api/v1/app-conversations?ids=${conv.id}`);
      expect(rec).toMatchObject({ sandbox_status: 'RUNNING' });
      expect(rec!.execution_status).not.toBe('running');
      // A lost run says so: at most one restart notice per kill of its agent server.
      const notices = transcript.filter((e) => e.kind === 'ConversationErrorEvent' && e.code === 'AgentServerRestarted').length;
      expect(notices).toBeLessThanOrEqual(kills.get(conv.sandbox)!);
    }

    const { body: tasks } = await api<{ items: StartTask[] }>('GET', '/api/v1/app-conversations/start-tasks/search?limit=100');
    expect(tasks.items.every((t) => t.status === 'READY')).toBe(true); // every start task final, none failed
    for (const s of sandboxes) {
      const agentServers = agentServerProcesses(join(dataDir, 'sandboxes', s, 'workspace'));
      expect(agentServers, `agent servers of ${s}`).toHaveLength(1); // a restart never leaves two
    }

    const killed = [...kills.values()].reduce((x, y) => x + y, 0);
    if (killed > 0) {
      console.log(`embedded, agent server kill -9 (${killed} kills, seed ${SEED}): ${summary('noticed (API not RUNNING)', timings.noticed)}; ${summary('RUNNING again', timings.back)}`);
    }
    expect(timings.noticed).toHaveLength(killed);

    // No orphans: a clean stop leaves no process of this installation.
    await svc.stop();
    svc = undefined;
    expect(processesMentioning(dataDir)).toEqual([]);

    // Each kill was one death and one restart, counted in the Sandbox status (the store, read once `up` is gone).
    const store = new SqliteStore(join(dataDir, 'resources.db'), { clock: systemClock });
    try {
      for (const s of sandboxes) {
        const sb = await store.get(SandboxKind, 'default', s);
        expect({ sandbox: s, restarts: sb?.status?.restartCount ?? 0 }).toEqual({ sandbox: s, restarts: kills.get(s) });
      }
    } finally {
      store.close();
    }
  }, 600_000);
});

describe('crash loop (embedded): an agent server that cannot stay up', () => {
  it('is restarted with backoff, then ERROR with the reason in the Ready condition; the start task ends with it', async () => {
    // Dies at once, every time (the command line must name agent-server; the runtime appends its arguments).
    const svc = await startService({ env: { AGENTYARD_AGENT_SERVER_COMMAND: JSON.stringify(['/bin/sh', '-c', 'exit 3', 'agent-server']), AGENTYARD_LOG_LEVEL: 'warn' } });
    try {
      const t0 = Date.now();
      const { body: task } = await svc.api<StartTask>('POST', '/api/v1/app-conversations', { initial_message: userMessage('never runs') });
      const ended = await eventually(async () => {
        const { body } = await svc.api<(StartTask | null)[]>('GET', `/api/v1/app-conversations/start-tasks?ids=${task.id}`);
        return body[0]?.status === 'ERROR' ? body[0] : undefined;
      }, 'the start task to end', 120_000, 200);
      const elapsed = Date.now() - t0;
      expect(ended.detail).toMatch(/died 5 times within 10 minutes/);
      const { body: sandboxes } = await svc.api<({ status: string; status_detail: string | null } | null)[]>('GET', `/api/v1/sandboxes?id=${ended.sandbox_id}`);
      expect(sandboxes[0]).toMatchObject({ status: 'ERROR', status_detail: expect.stringMatching(/died 5 times.*exit code 3/) });
      await svc.stop();
      const store = new SqliteStore(join(svc.dataDir, 'resources.db'), { clock: systemClock });
      try {
        const sb = (await store.get(SandboxKind, 'default', ended.sandbox_id!))!;
        expect(sb.status).toMatchObject({ phase: 'ERROR', restartCount: 4 });
        expect(sb.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'CrashLoop' });
      } finally {
        store.close();
      }
      // 1 + 2 + 4 + 8 s of backoff at least: restarted, not given up at the first death.
      expect(elapsed).toBeGreaterThan(15_000);
      expect(processesMentioning(svc.dataDir)).toEqual([]);
    } finally {
      await svc.stop();
      removeDataDir(svc.dataDir);
    }
  }, 180_000);
});
