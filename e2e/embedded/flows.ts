// Small HTTP flows the embedded suites share: start a conversation and wait for its start task,
// read records, wait for a sandbox status, and make a second user with `agentyard users create`.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import { requiredForTests } from '../../src/testing/required/required.ts';
import { eventually, type RunningService } from './harness.ts';

const run = promisify(execFile);
const repoRoot = join(import.meta.dirname, '..', '..');

export interface StartTask {
  id: string;
  status: string;
  detail?: string | null;
  app_conversation_id?: string | null;
  sandbox_id?: string | null;
}

export interface ConversationRecord {
  id: string;
  sandbox_id: string;
  sandbox_status: string;
  execution_status: string | null;
}

export interface EventItem {
  kind: string;
  source: string;
  tool_name?: string;
  [k: string]: unknown;
}

/** The events an agent server keeps: the app's log opens with the full_state snapshot (seq 0), which the agent server never persists. */
export const persistedEvents = <T extends { kind: string }>(items: T[]): T[] =>
  items.filter((e) => !(e.kind === 'ConversationStateUpdateEvent' && (e as { key?: unknown }).key === 'full_state'));

export const userMessage = (text: string, runNow = true) => ({ role: 'user', content: [{ type: 'text', text }], run: runNow });

/** POSTs a start request and waits until its task is READY or ERROR (either is returned). */
export async function startAndSettle(svc: RunningService, body: Record<string, unknown>, key?: string): Promise<StartTask> {
  const started = await svc.api<StartTask>('POST', '/api/v1/app-conversations', body, key);
  expect(started.status, JSON.stringify(started.body)).toBeLessThan(300);
  return eventually(async () => {
    const { body: tasks } = await svc.api<(StartTask | null)[]>('GET', `/api/v1/app-conversations/start-tasks?ids=${started.body.id}`, undefined, key);
    const task = tasks[0];
    return task?.status === 'READY' || task?.status === 'ERROR' ? task : undefined;
  }, 'the start task to settle');
}

/** As startAndSettle, failing the test with the task's detail unless it is READY. */
export async function startReady(svc: RunningService, body: Record<string, unknown>, key?: string): Promise<StartTask & { app_conversation_id: string; sandbox_id: string }> {
  const task = await startAndSettle(svc, body, key);
  expect(task.status, task.detail ?? '').toBe('READY');
  return task as StartTask & { app_conversation_id: string; sandbox_id: string };
}

export async function conversationRecords(svc: RunningService, ids: string[], key?: string): Promise<(ConversationRecord | null)[]> {
  const { status, body } = await svc.api<(ConversationRecord | null)[]>('GET', `/api/v1/app-conversations?${ids.map((i) => `ids=${i}`).join('&')}`, undefined, key);
  expect(status).toBe(200);
  return body;
}

/** Waits until every conversation reads `status` as its sandbox_status. */
export async function conversationsRead(svc: RunningService, ids: string[], status: string, key?: string): Promise<ConversationRecord[]> {
  return eventually(async () => {
    const records = await conversationRecords(svc, ids, key);
    return records.every((r) => r?.sandbox_status === status) ? (records as ConversationRecord[]) : undefined;
  }, `conversations ${ids.join(', ')} to read ${status}`);
}

export async function sandboxReads(svc: RunningService, id: string, status: string, key?: string): Promise<void> {
  await eventually(async () => {
    const { body } = await svc.api<({ status: string } | null)[]>('GET', `/api/v1/sandboxes?id=${id}`, undefined, key);
    return body[0]?.status === status ? true : undefined;
  }, `sandbox ${id} to be ${status}`);
}

export async function events(svc: RunningService, conversationId: string, key?: string): Promise<EventItem[]> {
  const res = await svc.api<{ items: EventItem[] }>('GET', `/api/v1/conversation/${conversationId}/events/search?limit=100`, undefined, key);
  expect(res.status).toBe(200);
  return res.body.items;
}

/** Waits for the agent's finish to reach the app; returns the transcript then. */
export async function finished(svc: RunningService, conversationId: string, key?: string): Promise<EventItem[]> {
  return eventually(async () => {
    const items = await events(svc, conversationId, key);
    return items.some((e) => e.kind === 'ObservationEvent' && e.tool_name === 'finish') ? items : undefined;
  }, 'the finish observation to reach the app');
}

/**
 * Why `agentyard up` cannot serve a second user on this machine, or undefined when it can: a second
 * user needs isolated sandboxes, which need root and bubblewrap (README, "Sandbox isolation").
 * Suites with a second user skip on such a machine; as root under AGENTYARD_REQUIRE_CLUSTER_TESTS=1
 * a missing bwrap fails them instead (hack/test-deps.sh installs it).
 */
export const noSecondUser: string | undefined = (() => {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return 'a second user needs isolated sandboxes, which need `agentyard up` to run as root on Linux';
  const bwrap = (process.env.PATH ?? '').split(':').map((d) => join(d, 'bwrap')).find((p) => existsSync(p));
  return requiredForTests(bwrap, 'bubblewrap (bwrap)', 'run hack/test-deps.sh as root (installs Debian bubblewrap)') ? undefined : 'a second user needs isolated sandboxes: bubblewrap (bwrap) is not installed';
})();

/** A second user of the same installation, made the way an administrator does; returns its API key. */
export async function createUser(svc: RunningService, name: string): Promise<string> {
  const { stdout } = await run(process.execPath, [join(repoRoot, 'src/cli/main.ts'), 'users', 'create', name, '--data-dir', svc.dataDir], { cwd: repoRoot });
  const key = /API key: (\S+)/.exec(stdout)?.[1];
  if (!key) throw new Error(`agentyard users create printed no key:\n${stdout}`);
  return key;
}
