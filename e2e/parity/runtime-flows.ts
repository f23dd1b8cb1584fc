// Flows of the differential suite for the runtime parts (issue #14): a conversation's runtime
// routes (/api/conversations/{id}/bash|file|git|vscode, /runtime), its workspace as static files,
// archives, stopping a command, the tool catalog, repository search, VS Code and the desktop.
// Paths differ between the sides (each has its own directories), so what is compared is whether
// answers agree: status codes, field names, and values that do not depend on where a side lives.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { dirname, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { Flow } from './flows.ts';
import { startBody } from './flows.ts';
import { KEY, type Side } from './servers.ts';

const UNKNOWN = '0b6d9c1e-2f4a-4c1b-9a51-1b7f4c9d2e10';
const enc = encodeURIComponent;
const sortedKeys = (o: unknown) => Object.keys((o ?? {}) as object).sort();

/** A GET sent as written (no `..` resolved by the client), with the body as bytes and the headers. */
function raw(s: Side, path: string): Promise<{ status: number; type: string | undefined; headers: Record<string, unknown>; bytes: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(s.url + '/', { path, headers: { 'x-session-api-key': KEY } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], headers: res.headers, bytes: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** A fresh directory beside the side's working directory, with `a.txt`, and one outside it. */
function workspace(s: Side): { ws: string; outside: string } {
  const ws = mkdtempSync(join(dirname(s.workDir), 'rt-ws-'));
  const outside = mkdtempSync(join(dirname(s.workDir), 'rt-out-'));
  writeFileSync(join(ws, 'a.txt'), 'inside\n');
  writeFileSync(join(outside, 'secret.txt'), 'outside\n');
  return { ws, outside };
}

/** Member names of a tarball below its top directory (whose name is the side's own), files only, sorted. */
function tarFiles(tgz: Buffer): string[] {
  const tar = gunzipSync(tgz);
  const names: string[] = [];
  for (let off = 0; off + 512 <= tar.length; ) {
    const header = tar.subarray(off, off + 512);
    if (header.every((b) => b === 0)) break;
    const name = header.subarray(0, 100).toString().replace(/\0.*$/s, '');
    const prefix = header.subarray(345, 500).toString().replace(/\0.*$/s, '');
    const size = parseInt(header.subarray(124, 136).toString().replace(/\0.*$/s, '').trim() || '0', 8);
    const type = String.fromCharCode(header[156]!);
    if (type === '0' || type === '\0') names.push((prefix ? `${prefix}/${name}` : name).split('/').slice(1).join('/'));
    off += 512 + Math.ceil(size / 512) * 512;
  }
  return names.sort();
}

/** A multipart upload of five bytes: the status and the answer. */
async function upload(s: Side, path: string): Promise<[number, unknown]> {
  const form = new FormData();
  form.append('file', new Blob(['hello']), 'u.txt');
  const r = await fetch(s.url + path, { method: 'POST', headers: { 'x-session-api-key': KEY }, body: form });
  const text = await r.text();
  try {
    return [r.status, JSON.parse(text)];
  } catch {
    return [r.status, text];
  }
}

export const RUNTIME_FLOWS: Record<string, Flow> = {
  /** The runtime routes of one conversation: scoped commands, paths confined to its workspace, /runtime. */
  async runtime_routes(s) {
    const { ws, outside } = workspace(s);
    symlinkSync(outside, join(ws, 'link'));
    const created = await s.api('/api/conversations', { method: 'POST', body: startBody(s, { workspace: { kind: 'LocalWorkspace', working_dir: ws } }) });
    const base = `/api/conversations/${created.body.id}`;
    const run = await s.api(`${base}/bash/execute_bash_command`, { method: 'POST', body: { command: 'pwd' } });
    const started = await s.api(`${base}/bash/start_bash_command`, { method: 'POST', body: { command: 'sleep 20' } });
    const stop = await s.api(`${base}/bash/bash_commands/${started.body.id}/stop`, { method: 'POST' });
    const commands = await s.api(`${base}/bash/bash_events/search?kind__eq=BashCommand`);
    const serverCommands = await s.api(`/api/bash/bash_events/search?kind__eq=BashCommand&limit=100`);
    const runtime = await s.api(`${base}/runtime`);
    const view = {
      runtime: runtime.status,
      runtime_body: runtime.body,
      reprovision: (await s.api(`${base}/runtime/reprovision`, { method: 'POST' })).status,
      runtime_unknown: (await s.api(`/api/conversations/${UNKNOWN}/runtime`)).status,
      execute: run.status,
      execute_in_workspace: run.body.stdout === `${ws}\n`,
      execute_exit: run.body.exit_code,
      stop: stop.status,
      stop_again: (await s.api(`${base}/bash/bash_commands/${started.body.id}/stop`, { method: 'POST' })).status,
      stop_unknown: (await s.api(`${base}/bash/bash_commands/${UNKNOWN}/stop`, { method: 'POST' })).status,
      stop_not_uuid: (await s.api(`${base}/bash/bash_commands/nope/stop`, { method: 'POST' })).status,
      commands: commands.body.items.map((e: any) => e.command),
      own_commands_not_server_wide: !serverCommands.body.items.some((e: any) => e.id === started.body.id),
      cwd_outside: (await s.api(`${base}/bash/start_bash_command`, { method: 'POST', body: { command: 'true', cwd: outside } })).status,
      download: (await raw(s, `${base}/file/download?path=${enc(join(ws, 'a.txt'))}`)).status,
      download_outside: (await s.api(`${base}/file/download?path=${enc(join(outside, 'secret.txt'))}`)).status,
      download_dotdot: (await s.api(`${base}/file/download?path=${enc(`${ws}/../${outside.split('/').pop()}/secret.txt`)}`)).status,
      download_link: (await s.api(`${base}/file/download?path=${enc(join(ws, 'link', 'secret.txt'))}`)).status,
      download_relative: (await s.api(`${base}/file/download?path=a.txt`)).status,
      create_directory: (await s.api(`${base}/file/create_directory?path=${enc(join(ws, 'd'))}`, { method: 'POST' })).status,
      upload: await upload(s, `${base}/file/upload?path=${enc(join(ws, 'up', 'u.txt'))}`),
      upload_outside: (await upload(s, `${base}/file/upload?path=${enc(join(ws, 'link', 'u.txt'))}`))[0],
      git_changes: (await s.api(`${base}/git/changes?path=${enc(ws)}`)).status,
      git_changes_outside: (await s.api(`${base}/git/changes?path=${enc(outside)}`)).status,
      git_commits: (await s.api(`${base}/git/commits?path=${enc(ws)}`)).status,
      trajectory: (await raw(s, `${base}/file/download-trajectory/${created.body.id}`)).status,
      trajectory_other: (await s.api(`${base}/file/download-trajectory/${UNKNOWN}`)).status,
      vscode_status: (await s.api(`${base}/vscode/status`)).status,
      vscode_url: (await s.api(`${base}/vscode/url`)).status,
      vscode_url_outside: (await s.api(`${base}/vscode/url?workspace_dir=${enc(outside)}`)).status,
      unknown_conversation: (await s.api(`/api/conversations/${UNKNOWN}/bash/bash_events/search`)).status,
      not_uuid: (await s.api('/api/conversations/nope/git/changes?path=/')).status,
    };
    await s.api(base, { method: 'DELETE' });
    return view;
  },

  /** The conversation's workspace as static files. */
  async workspace_static(s) {
    const { ws, outside } = workspace(s);
    mkdirSync(join(ws, 'docs'));
    mkdirSync(join(ws, 'empty'));
    writeFileSync(join(ws, 'index.html'), '<h1>root</h1>');
    writeFileSync(join(ws, 'docs', 'index.html'), '<h1>docs</h1>');
    writeFileSync(join(ws, 'app.js'), 'console.log(1)');
    writeFileSync(join(ws, 'data.json'), '{}');
    symlinkSync(outside, join(ws, 'out'));
    const created = await s.api('/api/conversations', { method: 'POST', body: startBody(s, { workspace: { kind: 'LocalWorkspace', working_dir: ws } }) });
    const base = `/api/conversations/${created.body.id}/workspace`;
    const root = await raw(s, base);
    const docs = await raw(s, `${base}/docs/`);
    const js = await raw(s, `${base}/app.js`);
    const view = {
      root: [root.status, root.type, root.bytes.toString()],
      docs: [docs.status, docs.bytes.toString()],
      js: [js.status, js.type],
      json: (await raw(s, `${base}/data.json`)).type,
      no_index: (await raw(s, `${base}/empty`)).status,
      missing: (await raw(s, `${base}/missing.txt`)).status,
      dotdot: (await raw(s, `${base}/../../x`)).status,
      encoded_dotdot: (await raw(s, `${base}/%2e%2e/${outside.split('/').pop()}/secret.txt`)).status,
      link_out: (await raw(s, `${base}/out/secret.txt`)).status,
      unknown: (await raw(s, `/api/conversations/${UNKNOWN}/workspace/index.html`)).status,
      no_key: (await s.api(base, { key: null })).status,
    };
    await s.api(`/api/conversations/${created.body.id}`, { method: 'DELETE' });
    return view;
  },

  /** GET /api/file/archive: a tarball and a git patch of a repository, and the bad requests. */
  async archive(s) {
    const repo = mkdtempSync(join(dirname(s.workDir), 'rt-repo-'));
    const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=P', '-c', 'user.email=p@example.com', ...args], { cwd: repo, stdio: 'pipe' }).toString().trim();
    git('init', '-q', '-b', 'main');
    writeFileSync(join(repo, 'kept.txt'), 'one\n');
    git('add', '.');
    git('commit', '-qm', 'base');
    writeFileSync(join(repo, 'kept.txt'), 'two\n');
    writeFileSync(join(repo, 'new.txt'), 'new\n');
    mkdirSync(join(repo, 'node_modules'));
    writeFileSync(join(repo, 'node_modules', 'x.js'), 'x\n');
    const p = enc(repo);
    const tgz = await raw(s, `/api/file/archive?path=${p}&format=tar.gz`);
    const full = await raw(s, `/api/file/archive?path=${p}&format=tar.gz&use_default_excludes=false`);
    const delta = await raw(s, `/api/file/archive?path=${p}&base_ref=HEAD`);
    const archiveHeaders = (h: Record<string, unknown>) => Object.keys(h).filter((k) => k.startsWith('x-archive-')).sort();
    return {
      tar: [tgz.status, tgz.type],
      tar_files: tgz.status === 200 ? tarFiles(tgz.bytes) : [],
      tar_headers: archiveHeaders(tgz.headers),
      full_files: full.status === 200 ? tarFiles(full.bytes).filter((f) => !f.startsWith('.git/objects/') && !f.startsWith('.git/hooks/')) : [],
      delta: [delta.status, delta.type],
      delta_headers: archiveHeaders(delta.headers),
      delta_base_is_head: delta.headers['x-archive-base-commit'] === git('rev-parse', 'HEAD'),
      delta_files: [...delta.bytes.toString().matchAll(/^diff --git a\/(\S+)/gm)].map((m) => m[1]).sort(),
      bad_ref: (await s.api(`/api/file/archive?path=${p}&base_ref=nope`)).status,
      dash_ref: (await s.api(`/api/file/archive?path=${p}&base_ref=-x`)).status,
      relative: (await s.api('/api/file/archive?path=rel')).status,
      missing: (await s.api(`/api/file/archive?path=${enc(join(repo, 'nope'))}`)).status,
      a_file: (await s.api(`/api/file/archive?path=${enc(join(repo, 'kept.txt'))}`)).status,
      bad_format: (await s.api(`/api/file/archive?path=${p}&format=zip`)).status,
      no_path: (await s.api('/api/file/archive')).status,
    };
  },

  /** Server-wide runtime bits: stopping a command, the tool catalog, repository search, VS Code, the desktop. */
  async runtime_misc(s) {
    const started = await s.api('/api/bash/start_bash_command', { method: 'POST', body: { command: 'sleep 20' } });
    const catalog = await s.api('/api/tools/catalog');
    const github = await s.api('/api/git/repositories/search?provider=github');
    const vscodeStatus = await s.api('/api/vscode/status');
    return {
      stop: (await s.api(`/api/bash/bash_commands/${started.body.id}/stop`, { method: 'POST' })).status,
      stop_unknown: (await s.api(`/api/bash/bash_commands/${UNKNOWN}/stop`, { method: 'POST' })).status,
      catalog: catalog.status,
      catalog_fields: sortedKeys(catalog.body),
      catalog_entry_fields: sortedKeys(catalog.body.tools?.[0]),
      // What both offer for selection, and what an agent naming no tools gets, among the tools both have.
      catalog_selectable_common: catalog.body.tools.filter((e: any) => e.user_selectable && ['terminal', 'file_editor', 'task_tracker', 'glob', 'grep', 'task_tool_set', 'browser_tool_set'].includes(e.name)).map((e: any) => e.name).sort(),
      // (Whether the browser tool set is usable depends on each side's machine: a Chromium here, the browser off there.)
      repositories_github: [github.status, github.body],
      repositories_gitlab: (await s.api('/api/git/repositories/search?provider=gitlab')).status,
      repositories_unknown_provider: (await s.api('/api/git/repositories/search?provider=svn')).status,
      repositories_no_provider: (await s.api('/api/git/repositories/search')).status,
      vscode_status: [vscodeStatus.status, vscodeStatus.body.running, vscodeStatus.body.enabled, sortedKeys(vscodeStatus.body)],
      vscode_url: (await s.api('/api/vscode/url')).status,
      desktop_url: (await s.api('/api/desktop/url')).status,
    };
  },
};
