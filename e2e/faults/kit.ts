// What the fault suites share: a seeded schedule, a model that does multi-step work and can be
// taken down, process scans (orphans, duplicate agent servers), paged event reads, timings.
import { readdirSync, readFileSync } from 'node:fs';
import type { RecordedRequest, ScriptedReply } from '../../src/testing/scripted-llm/server.ts';

/** The seed of this run: AGENTYARD_FAULT_SEED, else random; printed by the suites so a failure can be replayed. */
export function faultSeed(): number {
  return Number(process.env.AGENTYARD_FAULT_SEED ?? Math.floor(Math.random() * 2 ** 31));
}

/** mulberry32: a small seeded generator. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A model that works `steps` terminal steps per user message, then calls finish; during an outage
 * (outage.until in the future) it answers 500 until the agent's retries give up and the run ends
 * in error. Stateless per request, so any number of conversations can share it.
 */
export function workingModel(steps: number, outage: { until: number }): (req: RecordedRequest) => ScriptedReply {
  return (req) => {
    if (Date.now() < outage.until) return { status: 500, errorMessage: 'scripted model outage', retryAfterMs: 20 };
    const lastUser = req.messages.map((m) => m.role).lastIndexOf('user');
    const done = req.messages.slice(lastUser).filter((m) => m.role === 'tool').length;
    if (done >= steps) return { toolCalls: [{ name: 'finish', arguments: { message: 'all steps done' } }] };
    return { toolCalls: [{ name: 'terminal', arguments: { command: `sleep 0.3; echo step-${done}`, summary: `step ${done}` } }] };
  };
}

/** Live (not zombie) processes whose command line mentions `needle`: agent servers, their tools, launcher chains. */
export function processesMentioning(needle: string): { pid: number; cmd: string; program: string }[] {
  const out: { pid: number; cmd: string; program: string }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      const cmd = argv.join(' ');
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (cmd.includes(needle) && !/\) Z /.test(stat)) out.push({ pid: Number(entry), cmd, program: argv[0] ?? '' });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/**
 * The agent-server processes themselves (Node running `agent-server`) working in `workspace`, not
 * the launcher chain around them (sh, bwrap, setpriv carry the same arguments under isolation).
 */
export function agentServerProcesses(workspace: string): { pid: number; cmd: string }[] {
  return processesMentioning(workspace).filter((p) => /(^|\/)node$/.test(p.program) && p.cmd.includes('agent-server'));
}

export function killAll(needle: string): void {
  for (const p of processesMentioning(needle)) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}

export interface EventItem {
  id: string;
  kind: string;
  code?: string;
}

/** Every event of a paged search (`{items, next_page_id}`), in order. */
export async function allEvents(get: <T>(path: string) => Promise<T>, base: string): Promise<EventItem[]> {
  const out: EventItem[] = [];
  let page = await get<{ items: EventItem[]; next_page_id: string | null }>(`${base}?limit=100`);
  for (;;) {
    out.push(...page.items);
    if (!page.next_page_id) return out;
    page = await get<{ items: EventItem[]; next_page_id: string | null }>(`${base}?limit=100&page_id=${page.next_page_id}`);
  }
}

export function summary(label: string, ms: number[]): string {
  const s = [...ms].sort((a, b) => a - b);
  return s.length ? `${label}: median ${s[Math.floor(s.length / 2)]} ms, max ${s.at(-1)} ms` : `${label}: none`;
}

/**
 * From a kill on, polls `status` (undefined while it cannot be read): the time until it is no
 * longer RUNNING (noticed) and until it is RUNNING again (restarted).
 */
export async function timeRecovery(status: () => Promise<string | undefined>, t0: number, out: { noticed: number[]; back: number[] }, timeoutMs = 90_000): Promise<void> {
  let noticed: number | undefined;
  while (Date.now() - t0 < timeoutMs) {
    const s = await status().catch(() => undefined);
    if (noticed === undefined && s !== undefined && s !== 'RUNNING') noticed = Date.now() - t0;
    if (noticed !== undefined && s === 'RUNNING') {
      out.noticed.push(noticed);
      out.back.push(Date.now() - t0);
      return;
    }
    await sleep(25);
  }
}

/**
 * Status truth right after a kill: once the sandbox no longer reads RUNNING (its agent server is
 * known dead), none of its conversations may read `running` for long: they must move to error (or
 * paused) before the sandbox is RUNNING again. Throws when one read `running` the whole time.
 */
export async function expectNoRunningWhileDown(status: () => Promise<string | undefined>, executionStatuses: () => Promise<(string | null)[]>, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let sawDown = false;
  while (Date.now() < deadline) {
    const s = await status().catch(() => undefined);
    if (s !== undefined && s !== 'RUNNING') {
      sawDown = true;
      if ((await executionStatuses().catch(() => ['unknown'])).every((e) => e !== 'running')) return;
    } else if (sawDown && s === 'RUNNING') {
      throw new Error('a conversation read `running` for the whole time its agent server was down');
    }
    await sleep(25);
  }
  throw new Error(`timed out waiting for the sandbox to read down with no conversation running (saw it down: ${sawDown})`);
}
