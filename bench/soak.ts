// Memory soak: `agentyard up` as a child process runs conversations of 1,000 agent steps each (a
// real terminal command per step, the scripted model over HTTP), `SOAK_CONVERSATIONS` of them at
// once (default 4), in runs of 100 steps (one user message each). After every 100 steps it prints
// the RSS of each agent server and of `up`: flat lines mean nothing grows per step.
//   node bench/soak.ts            (also part of `make bench`)
import { readdirSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { eventually, startServiceWithModel, type RunningService } from '../e2e/embedded/harness.ts';
import type { RecordedRequest, ScriptedReply } from '../src/testing/scripted-llm/server.ts';

const STEPS = 1_000;
const PER_RUN = 100;

/** Resident set size of a process in MiB, from /proc. */
function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

function children(pid: number): number[] {
  const out: number[] = [];
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    out.push(...readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number));
  }
  return out;
}

/**
 * The agent-server processes `up` started: for each child of `up` running one, the last process
 * down its line that names `agent-server` (the Node process; the child itself may be a launcher,
 * e.g. the sandbox network's, whose RSS is a couple of MiB).
 */
function agentServerPids(upPid: number): number[] {
  const names = (p: number) => readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('agent-server');
  const deepest = (p: number): number => {
    for (const c of children(p)) if (names(c)) return deepest(c);
    return p;
  };
  return children(upPid).filter(names).map(deepest);
}

/** `finish` answers given so far: one per conversation per run. */
let finishes = 0;

/** One agent step per request: a terminal command, and `finish` after PER_RUN of them since the last user message. */
function step(req: RecordedRequest): ScriptedReply {
  const lastUser = req.messages.map((m) => m.role).lastIndexOf('user');
  const done = req.messages.slice(lastUser).filter((m) => m.role === 'assistant').length;
  if (done >= PER_RUN && ++finishes) return { toolCalls: [{ name: 'finish', arguments: { message: `ran ${done} steps` } }], usage: { prompt_tokens: 1000, completion_tokens: 20 } };
  return { content: `Step ${done + 1}.`, toolCalls: [{ name: 'terminal', arguments: { command: `echo step ${done + 1}; seq 1 120 | tr '\\n' ' '` } }], usage: { prompt_tokens: 1000, completion_tokens: 20 } };
}

const userMessage = (text: string) => ({ role: 'user', content: [{ type: 'text', text }], run: true });

async function waitFinished(svc: RunningService, ids: string[], runs: number): Promise<void> {
  await eventually(
    async () => {
      if (finishes < runs) return undefined;
      const { body } = await svc.api<({ execution_status: string | null } | null)[]>('GET', `/api/v1/app-conversations?${ids.map((i) => `ids=${i}`).join('&')}`);
      if (body.some((c) => c?.execution_status === 'error' || c?.execution_status === 'stuck')) throw new Error(`a soak run failed: ${JSON.stringify(body)}`);
      return body.every((c) => c?.execution_status === 'finished') ? true : undefined;
    },
    'the soak runs to finish',
    600_000,
    100,
  );
}

export async function soak(log: (line: string) => void = console.log): Promise<void> {
  const conversations = Number(process.env.SOAK_CONVERSATIONS ?? 4);
  const { llm, svc, stop } = await startServiceWithModel({ env: { AGENTYARD_LOG_LEVEL: 'warn', AGENTYARD_SANDBOX_CAPACITY: String(conversations + 1) } });
  try {
    llm.push(...Array.from({ length: conversations * (STEPS + STEPS / PER_RUN) + 10 }, () => step));
    const upPid = svc.process.pid!;
    const started = await Promise.all(
      Array.from({ length: conversations }, async (_, i) => {
        const r = await svc.api<{ id: string }>('POST', '/api/v1/app-conversations', { initial_message: userMessage(`soak ${i}: run ${PER_RUN} steps`) });
        if (r.status >= 300) throw new Error(`start failed: ${r.status} ${JSON.stringify(r.body)}`);
        return eventually(async () => {
          const { body } = await svc.api<({ status: string; app_conversation_id: string; detail?: string } | null)[]>('GET', `/api/v1/app-conversations/start-tasks?ids=${r.body.id}`);
          if (body[0]?.status === 'ERROR') throw new Error(`start failed: ${body[0].detail}`);
          return body[0]?.status === 'READY' ? body[0].app_conversation_id : undefined;
        }, 'a soak conversation to start');
      }),
    );
    log(`soak: ${conversations} conversation(s) x ${STEPS} steps in runs of ${PER_RUN}; RSS in MiB (agent servers: each; up: the API + controller process)`);
    log(`${'steps'.padStart(6)}  ${'agent servers'.padEnd(conversations * 6 + 4)}  ${'up'.padStart(5)}  s/100 steps`);
    let t = performance.now();
    for (let steps = PER_RUN; steps <= STEPS; steps += PER_RUN) {
      await waitFinished(svc, started, (steps / PER_RUN) * conversations);
      const now = performance.now();
      const servers = agentServerPids(upPid).map((p) => rssMiB(p).toFixed(0).padStart(5));
      log(`${String(steps).padStart(6)}  ${servers.join(' ').padEnd(conversations * 6 + 4)}  ${rssMiB(upPid).toFixed(0).padStart(5)}  ${((now - t) / 1000).toFixed(1)}`);
      t = performance.now();
      if (steps < STEPS) {
        await Promise.all(started.map(async (id) => {
          const r = await svc.api('POST', `/api/v1/app-conversations/${id}/send-message`, userMessage(`next ${PER_RUN} steps`));
          if (r.status !== 200) throw new Error(`send-message answered ${r.status}: ${JSON.stringify(r.body)}`);
        }));
      }
    }
  } finally {
    await stop();
  }
}

if (import.meta.main) await soak();
