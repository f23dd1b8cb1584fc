// A conversation's runtime routes (/api/conversations/{id}/bash|file|git|vscode/...): scoped to its
// workspace, hostile paths refused (.., encoded forms, links planted in the workspace), its own
// commands and events, gone with the conversation.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventually, startRequest, TEST_KEY, useTestServer } from '../test-support.ts';

/** Whether a process is there (a zombie reaped by its parent is not). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const t = useTestServer(() => ({ tuning: { bash: { killGraceMs: 200 } } }));

/** A conversation whose working directory is `<tmp>/conv` (with a file in it), and `<tmp>/outside` beside it. */
async function conversation(): Promise<{ id: string; ws: string; outside: string; base: string }> {
  const ws = join(t.dir.path, 'conv');
  const outside = join(t.dir.path, 'outside');
  mkdirSync(ws, { recursive: true });
  mkdirSync(outside, { recursive: true });
  writeFileSync(join(ws, 'a.txt'), 'inside\n');
  writeFileSync(join(outside, 'secret.txt'), 'outside\n');
  const r = await t.s.api('/api/conversations', { method: 'POST', body: startRequest(ws) });
  expect(r.status).toBe(201);
  return { id: r.body.id, ws, outside, base: `/api/conversations/${r.body.id}` };
}

const q = (p: string) => encodeURIComponent(p);

describe('runtime routes of a conversation', () => {
  it('run commands in the conversation workspace, with their own events, stoppable, gone with the conversation', async () => {
    const c = await conversation();
    const run = await t.s.api(`${c.base}/bash/execute_bash_command`, { method: 'POST', body: { command: 'pwd' } });
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({ exit_code: 0, stdout: `${c.ws}\n` });
    // The server's own command log does not see the conversation's, and the other way round.
    await t.s.api('/api/bash/execute_bash_command', { method: 'POST', body: { command: 'echo server' } });
    const mine = (await t.s.api(`${c.base}/bash/bash_events/search?kind__eq=BashCommand`)).body.items.map((e: any) => e.command);
    const server = (await t.s.api('/api/bash/bash_events/search?kind__eq=BashCommand')).body.items.map((e: any) => e.command);
    expect(mine).toEqual(['pwd']);
    expect(server).toEqual(['echo server']);
    expect((await t.s.api(`/api/bash/bash_events/${run.body.command_id}`)).status).toBe(404);
    expect((await t.s.api(`${c.base}/bash/bash_events/${run.body.command_id}`)).status).toBe(200);

    // cwd must stay in the workspace: outside, through .., or through a link planted in it.
    symlinkSync(c.outside, join(c.ws, 'link'));
    for (const cwd of [c.outside, '..', join(c.ws, '..', 'outside'), 'link', join(c.ws, 'link')]) {
      const r = await t.s.api(`${c.base}/bash/start_bash_command`, { method: 'POST', body: { command: 'true', cwd } });
      expect({ cwd, status: r.status, loc: r.body.detail?.[0]?.loc }).toEqual({ cwd, status: 422, loc: ['body', 'cwd'] });
    }
    mkdirSync(join(c.ws, 'sub'));
    expect((await t.s.api(`${c.base}/bash/execute_bash_command`, { method: 'POST', body: { command: 'pwd', cwd: 'sub' } })).body.stdout).toBe(`${join(c.ws, 'sub')}\n`);

    // Stop: a running command ends (exit -1) and the answer waits for its last output; a finished one is a success too.
    const started = await t.s.api(`${c.base}/bash/start_bash_command`, { method: 'POST', body: { command: "trap '' TERM; sleep 30" } });
    const stopAt = Date.now();
    expect(await t.s.api(`${c.base}/bash/bash_commands/${started.body.id}/stop`, { method: 'POST' })).toEqual({ status: 200, body: { success: true } });
    expect(Date.now() - stopAt).toBeLessThan(10_000);
    const out = (await t.s.api(`${c.base}/bash/bash_events/search?kind__eq=BashOutput&command_id__eq=${started.body.id}`)).body.items;
    expect(out.at(-1).exit_code).toBe(-1);
    expect((await t.s.api(`${c.base}/bash/bash_commands/${started.body.id}/stop`, { method: 'POST' })).status).toBe(200);
    expect((await t.s.api(`${c.base}/bash/bash_commands/0f8e1c2a-9b7d-4c55-a90e-2b1f7e6d5c4a/stop`, { method: 'POST' })).status).toBe(404);
    expect((await t.s.api(`${c.base}/bash/bash_commands/nope/stop`, { method: 'POST' })).body.detail[0].loc).toEqual(['path', 'command_id']);
    // The server's own stop does not reach the conversation's commands.
    expect((await t.s.api(`/api/bash/bash_commands/${started.body.id}/stop`, { method: 'POST' })).status).toBe(404);

    // Deleted: its commands are killed, its events removed, its runtime routes 404.
    const long = await t.s.api(`${c.base}/bash/start_bash_command`, { method: 'POST', body: { command: 'echo $$ > pid; sleep 30' } });
    expect(long.status).toBe(200);
    const pid = Number(await eventually(() => existsSync(join(c.ws, 'pid')) && readFileSync(join(c.ws, 'pid'), 'utf8').trim()));
    expect(alive(pid)).toBe(true);
    expect((await t.s.api(c.base, { method: 'DELETE' })).status).toBe(200);
    expect(alive(pid)).toBe(false);
    expect((await t.s.api(`${c.base}/bash/bash_events/search`)).status).toBe(404);
    expect((await t.s.api('/api/bash/bash_events/search?kind__eq=BashCommand')).body.items.map((e: any) => e.command)).toEqual(['echo server']);
  });

  it('the server-wide stop: a background command stops, an unknown id is a 404', async () => {
    const started = await t.s.api('/api/bash/start_bash_command', { method: 'POST', body: { command: 'sleep 30' } });
    expect((await t.s.api(`/api/bash/bash_commands/${started.body.id}/stop`, { method: 'POST' })).status).toBe(200);
    // The stop answers once the command's last output is recorded.
    expect((await t.s.api(`/api/bash/bash_events/search?kind__eq=BashOutput&command_id__eq=${started.body.id}`)).body.items.at(-1)?.exit_code).toBe(-1);
    expect((await t.s.api('/api/bash/bash_commands/0f8e1c2a-9b7d-4c55-a90e-2b1f7e6d5c4a/stop', { method: 'POST' })).status).toBe(404);
  });

  it('file and git routes take paths inside the workspace only: .., encoded forms and planted links are refused', async () => {
    const c = await conversation();
    symlinkSync(c.outside, join(c.ws, 'link'));
    symlinkSync(join(c.outside, 'secret.txt'), join(c.ws, 'secret-link.txt'));
    symlinkSync(join(c.ws, 'loop'), join(c.ws, 'loop'));
    const dl = await fetch(`${t.s.url}${c.base}/file/download?path=${q(join(c.ws, 'a.txt'))}`, { headers: { 'x-session-api-key': TEST_KEY } });
    expect(dl.status).toBe(200);
    expect(await dl.text()).toBe('inside\n');
    const refused = [
      `${c.base}/file/download?path=${q(join(c.outside, 'secret.txt'))}`,
      `${c.base}/file/download?path=${q(`${c.ws}/../outside/secret.txt`)}`,
      `${c.base}/file/download?path=${c.ws}/%2e%2e/outside/secret.txt`,
      `${c.base}/file/download?path=${q(join(c.ws, 'link', 'secret.txt'))}`,
      `${c.base}/file/download?path=${q(join(c.ws, 'secret-link.txt'))}`,
      `${c.base}/file/download?path=a.txt`,
      `${c.base}/file/download?path=${q(join(c.ws, 'loop', 'x'))}`,
      `${c.base}/file/download?path=${q(c.ws)}%00/a.txt`,
      `${c.base}/git/changes?path=${q(c.outside)}`,
      `${c.base}/git/diff?path=${q(join(c.ws, 'link', 'secret.txt'))}`,
      `${c.base}/git/commits?path=/`,
      `${c.base}/file/archive?path=${q(c.outside)}&format=tar.gz`,
      `${c.base}/vscode/url?workspace_dir=${q(c.outside)}`,
    ];
    for (const path of refused) {
      const r = await t.s.api(path);
      expect({ path, status: r.status }).toEqual({ path, status: 422 });
      expect(String(r.body.detail[0].msg)).toMatch(/must be inside the conversation workspace/);
    }
    // Writes too: an upload or a directory through the planted link.
    const form = new FormData();
    form.append('file', new Blob(['x']), 'x.txt');
    const up = await fetch(`${t.s.url}${c.base}/file/upload?path=${q(join(c.ws, 'link', 'x.txt'))}`, { method: 'POST', headers: { 'x-session-api-key': TEST_KEY }, body: form });
    expect(up.status).toBe(422);
    expect((await t.s.api(`${c.base}/file/create_directory?path=${q(join(c.ws, 'link', 'd'))}`, { method: 'POST' })).status).toBe(422);
    // Inside: an upload to a new directory, a directory, git changes (not a repository: none).
    const form2 = new FormData();
    form2.append('file', new Blob(['new']), 'n.txt');
    expect((await fetch(`${t.s.url}${c.base}/file/upload?path=${q(join(c.ws, 'new', 'n.txt'))}`, { method: 'POST', headers: { 'x-session-api-key': TEST_KEY }, body: form2 })).status).toBe(200);
    expect((await t.s.api(`${c.base}/file/create_directory?path=${q(join(c.ws, 'd1', 'd2'))}`, { method: 'POST' })).status).toBe(200);
    execFileSync('git', ['init', '-q'], { cwd: c.ws });
    const changes = await t.s.api(`${c.base}/git/changes?path=${q(c.ws)}`);
    expect(changes.status).toBe(200);
    expect(changes.body.map((x: any) => x.path)).toContain('new/n.txt');
  });

  it('checks the conversation first: 422 for a non-UUID, 404 for an unknown one; a trajectory of another conversation is refused', async () => {
    const c = await conversation();
    const other = await conversation();
    expect((await t.s.api(`/api/conversations/nope/bash/bash_events/search`)).body.detail[0].loc).toEqual(['path', 'runtime_conversation_id']);
    expect((await t.s.api(`/api/conversations/0f8e1c2a-9b7d-4c55-a90e-2b1f7e6d5c4a/file/download?path=/etc/hostname`)).status).toBe(404);
    expect((await t.s.api(`${c.base}/file/download-trajectory/${c.id}`)).status).toBe(200);
    const foreign = await t.s.api(`${c.base}/file/download-trajectory/${other.id.replaceAll('-', '')}`);
    expect(foreign.status).toBe(422);
    expect(foreign.body.detail[0].msg).toMatch(/Trajectory must belong to the selected conversation/);
    expect((await t.s.api(`${c.base}/file/download-trajectory/not-a-uuid`)).body.detail[0].loc).toEqual(['path', 'conversation_id']);
    expect((await t.s.api(`${c.base}/file/download-trajectory/0f8e1c2a-9b7d-4c55-a90e-2b1f7e6d5c4a`)).status).toBe(422);
    // Legacy path-style forms and the picker helpers are not runtime routes (as in OpenHands 1.58).
    expect((await t.s.api(`${c.base}/file/home`)).status).toBe(404);
    expect((await t.s.api(`${c.base}/file/download/${c.ws}/a.txt`)).status).toBe(404);
  });

  it('GET /runtime says the runtime is there; VS Code and the desktop say they are not', async () => {
    const c = await conversation();
    const info = { runtime_status: 'available', can_resume: true, runtime_error: null };
    expect(await t.s.api(`${c.base}/runtime`)).toEqual({ status: 200, body: info });
    expect(await t.s.api(`${c.base}/runtime/reprovision`, { method: 'POST' })).toEqual({ status: 200, body: info });
    expect((await t.s.api('/api/conversations/0f8e1c2a-9b7d-4c55-a90e-2b1f7e6d5c4a/runtime')).status).toBe(404);
    for (const prefix of ['/api', c.base]) {
      const status = await t.s.api(`${prefix}/vscode/status`);
      expect(status).toMatchObject({ status: 200, body: { running: false, enabled: false } });
      expect(status.body.message).toMatch(/not available/);
      const url = await t.s.api(`${prefix}/vscode/url?workspace_dir=${q(realpathSync(c.ws))}`);
      expect(url.status).toBe(503);
      expect(url.body.detail).toMatch(/VS Code is not available/);
    }
    expect((await t.s.api('/api/desktop/url')).status).toBe(503);
    expect((await t.s.api('/api/vscode/status', { key: null })).status).toBe(401);
  });
});
