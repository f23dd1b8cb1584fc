// The foundation slice end to end, over HTTP only: `agentyard up` as a child process, a scripted
// OpenAI-compatible model, a real sandbox process, real files and a real shell.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Value } from 'typebox/value';
import type { TSchema } from 'typebox';
import { AppConversation, AppConversationStartTask, SandboxInfo } from '../../src/api/app/responses.ts';
import { parseEvent } from '../../src/api/events/index.ts';
import type { ScriptedLlm } from '../../src/testing/scripted-llm/server.ts';
import { eventually, startServiceWithModel, type RunningService } from './harness.ts';

interface StartTask {
  id: string;
  status: string;
  detail?: string | null;
  app_conversation_id?: string | null;
  sandbox_id?: string | null;
}
interface EventPage {
  items: { kind: string; source: string; [k: string]: unknown }[];
  next_page_id: string | null;
}

/** Responses must match the schemas the OpenAPI document publishes. */
function expectSchema(schema: TSchema, value: unknown): void {
  expect([...Value.Errors(schema, value)].map((e) => `${e.instancePath} ${e.message}`)).toEqual([]);
}

const userMessage = (text: string) => ({ role: 'user', content: [{ type: 'text', text }], run: true });

async function startConversation(svc: RunningService, body: Record<string, unknown>): Promise<StartTask> {
  const started = await svc.api<StartTask>('POST', '/api/v1/app-conversations', body);
  expect(started.status, JSON.stringify(started.body)).toBeLessThan(300);
  return eventually(async () => {
    const { body: tasks } = await svc.api<(StartTask | null)[]>('GET', `/api/v1/app-conversations/start-tasks?ids=${started.body.id}`);
    const task = tasks[0];
    if (task?.status === 'ERROR') throw new Error(`start failed: ${task.detail}`);
    return task?.status === 'READY' ? task : undefined;
  }, 'the start task to be READY');
}

async function allEvents(svc: RunningService, conversationId: string): Promise<EventPage['items']> {
  const { body } = await svc.api<EventPage>('GET', `/api/v1/conversation/${conversationId}/events/search?limit=100`);
  return body.items;
}

describe('agentyard up: a conversation end to end', () => {
  let llm: ScriptedLlm;
  let svc: RunningService;
  let stop: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    ({ llm, svc, stop } = await startServiceWithModel());
  });

  afterAll(async () => {
    await stop?.();
  });

  it('answers /health and refuses requests without the API key', async () => {
    expect((await fetch(`${svc.url}/health`)).status).toBe(200);
    const res = await fetch(`${svc.url}/api/v1/sandboxes/search`);
    expect(res.status).toBe(401);
    expect(await res.json()).toHaveProperty('detail');
  });

  it('rejects a bad start request with 422 and field paths, creating nothing', async () => {
    const bad = await svc.api<{ detail: { loc: (string | number)[] }[] }>('POST', '/api/v1/app-conversations', {
      initial_message: { role: 'user', content: [{ type: 'text' }] },
      unknown_field: 1,
    });
    expect(bad.status).toBe(422);
    const locs = bad.body.detail.map((d) => d.loc.join('.'));
    expect(locs.some((l) => l.includes('initial_message'))).toBe(true);
    const { body } = await svc.api<{ items: unknown[] }>('GET', '/api/v1/app-conversations/search');
    expect(body.items).toEqual([]);
  });

  it('runs the agent: a real command, a real file edit, the finish; then pause, resume and delete', async () => {
    llm.push(
      { content: 'I will look around first.', toolCalls: [{ name: 'terminal', arguments: { command: 'pwd && git init -q && echo hello-from-shell > greeting.txt && cat greeting.txt', summary: 'write a greeting' } }], usage: { prompt_tokens: 120, completion_tokens: 30 } },
      (req) => {
        // The first command printed the working directory: the model writes the note next to it.
        const toolAnswer = req.messages.find((m) => m.role === 'tool');
        const workspace = String(toolAnswer?.content).split('\n')[0]!;
        return { toolCalls: [{ name: 'file_editor', arguments: { command: 'create', path: join(workspace, 'notes.md'), file_text: '# Notes\nwritten by the agent\n' } }], usage: { prompt_tokens: 200, completion_tokens: 40 } };
      },
      { toolCalls: [{ name: 'finish', arguments: { message: 'Done: greeting.txt and notes.md exist.' } }], usage: { prompt_tokens: 260, completion_tokens: 10 } },
    );
    const task = await startConversation(svc, { initial_message: userMessage('Create a greeting and some notes') });
    expectSchema(AppConversationStartTask, task);
    const conversationId = task.app_conversation_id!;
    const sandboxId = task.sandbox_id!;
    expect(conversationId).toMatch(/^[0-9a-f]{32}$/);

    const events = await eventually(async () => {
      const items = await allEvents(svc, conversationId);
      return items.some((e) => e.kind === 'ObservationEvent' && e.tool_name === 'finish') ? items : undefined;
    }, 'the finish observation to reach the app');
    for (const e of events) parseEvent(e); // strict: every stored event is a valid Event
    const kinds = events.map((e) => e.kind);
    expect(kinds).toContain('SystemPromptEvent');
    expect(events.find((e) => e.kind === 'MessageEvent')?.source).toBe('user');
    const actions = events.filter((e) => e.kind === 'ActionEvent');
    const observations = events.filter((e) => e.kind === 'ObservationEvent');
    expect(actions.map((a) => a.tool_name)).toEqual(['terminal', 'file_editor', 'finish']);
    for (const obs of observations) {
      const action = actions.find((a) => a.id === obs.action_id);
      expect(action?.tool_call_id).toBe(obs.tool_call_id);
    }
    const terminal = observations[0]!.observation as { content: { text: string }[]; exit_code: number };
    expect(terminal.exit_code).toBe(0);
    expect(terminal.content[0]!.text).toContain('hello-from-shell');

    // The work is really on disk, in the sandbox's workspace.
    const workspace = join(svc.dataDir, 'sandboxes', sandboxId, 'workspace');
    expect(readFileSync(join(workspace, 'greeting.txt'), 'utf8')).toBe('hello-from-shell\n');
    expect(readFileSync(join(workspace, 'notes.md'), 'utf8')).toContain('written by the agent');
    // The model saw the real observation of the first tool call.
    expect(JSON.stringify(llm.requests[1]!.messages)).toContain('hello-from-shell');

    const record = await eventually(async () => {
      const { body } = await svc.api<({ execution_status: string; sandbox_status: string; sandbox_id: string; metrics?: { accumulated_token_usage?: { prompt_tokens: number } } } | null)[]>('GET', `/api/v1/app-conversations?ids=${conversationId}`);
      return body[0]?.execution_status === 'finished' ? body[0] : undefined;
    }, 'execution_status finished');
    expectSchema(AppConversation, record);
    expect(record.sandbox_status).toBe('RUNNING');
    const { body: sandboxes } = await svc.api<unknown[]>('GET', `/api/v1/sandboxes?id=${sandboxId}`);
    expectSchema(SandboxInfo, sandboxes[0]);
    expect(record.sandbox_id).toBe(sandboxId);
    expect(record.metrics?.accumulated_token_usage?.prompt_tokens).toBe(580);

    // The workspace is readable through the API: a file, the Git changes and a file's diff.
    const file = await svc.api<string>('GET', `/api/v1/app-conversations/${conversationId}/file?file_path=${encodeURIComponent(join(workspace, 'greeting.txt'))}`);
    expect(file).toMatchObject({ status: 200, body: 'hello-from-shell\n' });
    const changes = await svc.api<{ status: string; path: string }[]>('GET', `/api/v1/app-conversations/${conversationId}/git/changes?path=${encodeURIComponent(workspace)}`);
    expect(changes.body).toEqual(expect.arrayContaining([{ status: 'ADDED', path: 'greeting.txt' }, { status: 'ADDED', path: 'notes.md' }]));
    const diff = await svc.api('GET', `/api/v1/app-conversations/${conversationId}/git/diff?path=${encodeURIComponent(join(workspace, 'notes.md'))}`);
    expect(diff.body).toEqual({ original: null, modified: '# Notes\nwritten by the agent\n' });
    // A relative path (as the file listing gives them) is taken inside the working directory.
    const relative = await svc.api<string>('GET', `/api/v1/app-conversations/${conversationId}/file?file_path=greeting.txt`);
    expect(relative).toMatchObject({ status: 200, body: 'hello-from-shell\n' });
    const missing = await svc.api<{ detail: { loc: string[] }[] }>('GET', `/api/v1/app-conversations/${conversationId}/file`);
    expect(missing.status).toBe(422);
    expect(missing.body.detail[0]!.loc).toEqual(['query', 'file_path']);

    // Pause: the process is stopped, the workspace stays.
    const runtime = JSON.parse(readFileSync(join(svc.dataDir, 'sandboxes', sandboxId, 'runtime.json'), 'utf8')) as { pid: number };
    expect((await svc.api('POST', `/api/v1/sandboxes/${sandboxId}/pause`)).status).toBe(200);
    await eventually(async () => {
      const { body } = await svc.api<({ status: string } | null)[]>('GET', `/api/v1/sandboxes?id=${sandboxId}`);
      return body[0]?.status === 'PAUSED' ? true : undefined;
    }, 'the sandbox to be PAUSED');
    await eventually(async () => (isAlive(runtime.pid) ? undefined : true), 'the agent server process to exit');
    expect(existsSync(join(workspace, 'greeting.txt'))).toBe(true);
    // The next access resumes it (spec part 3): a workspace read waits for the new agent server.
    const whilePaused = await svc.api<string>('GET', `/api/v1/app-conversations/${conversationId}/file?file_path=${encodeURIComponent(join(workspace, 'greeting.txt'))}`);
    expect(whilePaused).toMatchObject({ status: 200, body: 'hello-from-shell\n' });
    const { body: resumed } = await svc.api<({ status: string } | null)[]>('GET', `/api/v1/sandboxes?id=${sandboxId}`);
    expect(resumed[0]?.status).toBe('RUNNING');
    const again = JSON.parse(readFileSync(join(svc.dataDir, 'sandboxes', sandboxId, 'runtime.json'), 'utf8')) as { pid: number };
    expect(again.pid).not.toBe(runtime.pid);

    // Resume is idempotent: running again, workspace intact, and the conversation takes messages again.
    expect((await svc.api('POST', `/api/v1/sandboxes/${sandboxId}/resume`)).status).toBe(200);
    await eventually(async () => {
      const { body } = await svc.api<({ status: string } | null)[]>('GET', `/api/v1/sandboxes?id=${sandboxId}`);
      return body[0]?.status === 'RUNNING' ? true : undefined;
    }, 'the sandbox to be RUNNING again');
    expect(readFileSync(join(workspace, 'notes.md'), 'utf8')).toContain('written by the agent');

    // Delete: the conversation reads MISSING, refuses messages, and its transcript stays readable.
    expect((await svc.api('DELETE', `/api/v1/sandboxes/${sandboxId}`)).status).toBe(200);
    await eventually(async () => {
      const { body } = await svc.api<({ sandbox_status: string } | null)[]>('GET', `/api/v1/app-conversations?ids=${conversationId}`);
      return body[0]?.sandbox_status === 'MISSING' ? true : undefined;
    }, 'the conversation to read MISSING');
    const refused = await svc.api<{ detail: string }>('POST', `/api/v1/app-conversations/${conversationId}/send-message`, { role: 'user', content: [{ type: 'text', text: 'more' }] });
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(refused.status).toBeLessThan(500);
    expect(String(refused.body.detail)).toMatch(/read-only|MISSING|deleted/i);
    expect((await allEvents(svc, conversationId)).length).toBe(events.length);
    expect((await svc.api('GET', `/api/v1/app-conversations/${conversationId}/file?file_path=${encodeURIComponent(join(workspace, 'greeting.txt'))}`)).status).toBe(410);
    await eventually(async () => (existsSync(workspace) ? undefined : true), 'the workspace to be removed');
    expect(readdirSync(join(svc.dataDir, 'objects', 'internal', 'workspace-archives')).some((f) => f.startsWith(sandboxId))).toBe(true);
  });
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
