// Installed skills and plugins side by side: the same sources (a local directory, and a git
// repository made here, reached by file:// URL with a ref and a repo_path) installed, listed,
// disabled, refreshed and removed on both servers, each with its own home; what an installed skill
// or plugin changes in POST /api/skills and POST /api/plugins; and the refusals (409, 400, 422, 404).
// Paths differ by home, so they are compared by what they end with.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { until } from '../../src/testing/until.ts';
import type { Side } from './servers.ts';
import { startBody, type View } from './flows.ts';

const keys = (o: unknown) => (o && typeof o === 'object' ? Object.keys(o).sort() : o);
/** A 422's locations, or the type of a bare-sentence detail. */
const locs = (body: any) => (Array.isArray(body?.detail) ? body.detail.map((i: any) => i.loc.join('.')) : typeof body?.detail);
/** The first sentence of a string detail (ours adds the reason after OpenHands' sentence). */
const sentence = (body: any) => (typeof body?.detail === 'string' ? body.detail.split('. ')[0] : body?.detail);
/** A detail's text: the string, or the first issue's message (ours locates the 422s OpenHands answers as a sentence). */
const text = (body: any): string => (typeof body?.detail === 'string' ? body.detail : String(body?.detail?.[0]?.msg ?? ''));

function write(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

const skillMd = (name: string, description: string) => `---\nname: ${name}\ndescription: ${description}\n---\nUse ${name}.\n`;

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'init.defaultBranch=main', ...args], { cwd, encoding: 'utf8' }).trim();
}

function commit(path: string, files: Record<string, string>): string {
  mkdirSync(path, { recursive: true });
  try {
    git(path, 'rev-parse', '--git-dir');
  } catch {
    git(path, 'init', '--quiet');
  }
  for (const [f, t] of Object.entries(files)) write(join(path, f), t);
  git(path, 'add', '-A');
  git(path, 'commit', '--quiet', '-m', 'c');
  return git(path, 'rev-parse', 'HEAD');
}

/** A fresh directory beside the side's workspace (inside its home on OpenHands' side). */
const scratch = (s: Side) => mkdtempSync(join(dirname(s.workDir), 'install-src-'));

export const INSTALL_FLOWS: Record<string, (s: Side) => Promise<View>> = {
  /** A local skill: install, 409, force, list, load as a user skill, disable, refusals, uninstall. */
  async skills_install(s) {
    const base = scratch(s);
    const src = join(base, 'pdf-tools');
    write(join(src, 'SKILL.md'), skillMd('pdf-tools', 'Work with PDFs'));
    write(join(base, 'empty', 'README.md'), 'no skill');
    write(join(base, 'Bad_Name', 'SKILL.md'), '---\ndescription: x\n---\nbody\n');
    write(join(base, 'mismatch', 'SKILL.md'), skillMd('other-name', 'x'));
    const X = '/api/skills/installed/pdf-tools';
    const skills = async () => ((await s.api('/api/skills', { method: 'POST', body: { load_public: false, load_project: false, load_org: false } })).body.skills ?? []).map((k: any) => k.name).sort();
    const install = await s.api('/api/skills/install', { method: 'POST', body: { source: src } });
    const again = await s.api('/api/skills/install', { method: 'POST', body: { source: src } });
    const forced = await s.api('/api/skills/install', { method: 'POST', body: { source: src, force: true } });
    const view: View = {
      install: install.status,
      install_fields: keys(install.body),
      install_body: [install.body.name, install.body.version, install.body.description, install.body.enabled, install.body.source === src, install.body.resolved_ref, install.body.repo_path],
      install_path: String(install.body.install_path).endsWith('/.openhands/skills/installed/pdf-tools'),
      again: [again.status, again.body.detail],
      forced: [forced.status, forced.body.enabled],
      listed: (await s.api('/api/skills/installed')).body.skills?.map((k: any) => [k.name, k.enabled]),
      one: await s.api(X).then((r) => [r.status, r.body.name]),
      user_skills: await skills(),
      disable: await s.api(X, { method: 'PATCH', body: { enabled: false } }).then((r) => [r.status, r.body]),
      after_disable: await skills(),
      listed_disabled: (await s.api('/api/skills/installed')).body.skills?.map((k: any) => [k.name, k.enabled]),
      forced_keeps_disabled: (await s.api('/api/skills/install', { method: 'POST', body: { source: src, force: true } })).body.enabled,
      enable: await s.api(X, { method: 'PATCH', body: { enabled: true } }).then((r) => [r.status, r.body]),
      after_enable: await skills(),
      patch_no_body: await s.api(X, { method: 'PATCH', body: {} }).then((r) => [r.status, locs(r.body)]),
      no_skill_md: await s.api('/api/skills/install', { method: 'POST', body: { source: join(base, 'empty') } }).then((r) => [r.status, text(r.body).startsWith('Invalid skill. Ensure the source contains a valid SKILL.md.')]),
      no_skill_md_detail: await s.api('/api/skills/install', { method: 'POST', body: { source: join(base, 'empty') } }).then((r) => locs(r.body)),
      bad_name: await s.api('/api/skills/install', { method: 'POST', body: { source: join(base, 'Bad_Name') } }).then((r) => r.status),
      name_mismatch: await s.api('/api/skills/install', { method: 'POST', body: { source: join(base, 'mismatch') } }).then((r) => r.status),
      missing_source: await s.api('/api/skills/install', { method: 'POST', body: { source: join(base, 'nowhere') } }).then((r) => [r.status, sentence(r.body)]),
      repo_path_escape: await s.api('/api/skills/install', { method: 'POST', body: { source: src, repo_path: '../empty' } }).then((r) => r.status),
      empty_source: await s.api('/api/skills/install', { method: 'POST', body: { source: '' } }).then((r) => [r.status, locs(r.body)]),
      no_source: await s.api('/api/skills/install', { method: 'POST', body: {} }).then((r) => [r.status, locs(r.body)]),
      unknown: await s.api('/api/skills/installed/nope').then((r) => [r.status, r.body]),
      bad_path_name: await s.api('/api/skills/installed/Bad_Name').then((r) => [r.status, locs(r.body)]),
      refresh_unknown: await s.api('/api/skills/installed/nope/refresh', { method: 'POST' }).then((r) => [r.status, r.body]),
      patch_unknown: await s.api('/api/skills/installed/nope', { method: 'PATCH', body: { enabled: true } }).then((r) => [r.status, r.body]),
      uninstall: await s.api(X, { method: 'DELETE' }).then((r) => [r.status, r.body]),
      after_uninstall: [(await s.api(X)).status, await skills()],
      uninstall_again: await s.api(X, { method: 'DELETE' }).then((r) => [r.status, r.body]),
      no_key: (await s.api('/api/skills/installed', { key: null })).status,
    };
    return view;
  },

  /** A skill from a git monorepo at a tag and repo_path, refreshed to the newest commit; a refresh that fails keeps it. */
  async skills_git(s) {
    const repo = join(scratch(s), 'monorepo');
    const first = commit(repo, { 'skills/lint/SKILL.md': skillMd('lint', 'v1'), 'README.md': 'monorepo' });
    git(repo, 'tag', 'v1');
    const second = commit(repo, { 'skills/lint/SKILL.md': skillMd('lint', 'v2') });
    const url = `file://${repo}`;
    const install = await s.api('/api/skills/install', { method: 'POST', body: { source: url, ref: 'v1', repo_path: 'skills/lint' } });
    const refreshed = await s.api('/api/skills/installed/lint/refresh', { method: 'POST' });
    commit(repo, { 'skills/lint/SKILL.md': skillMd('other-name', 'v3') });
    const invalid = await s.api('/api/skills/installed/lint/refresh', { method: 'POST' });
    const kept = (await s.api('/api/skills/installed/lint')).body;
    const view: View = {
      install: install.status,
      install_body: [install.body.name, install.body.description, install.body.source === url, install.body.resolved_ref === first, install.body.repo_path],
      refresh: refreshed.status,
      refresh_fields: keys(refreshed.body),
      refresh_body: [refreshed.body.message, refreshed.body.skill?.description, refreshed.body.skill?.resolved_ref === second, refreshed.body.skill?.repo_path],
      refresh_invalid: [invalid.status, text(invalid.body).startsWith("The source of skill 'lint' no longer holds a valid skill. The installed copy was kept.")],
      refresh_invalid_detail: locs(invalid.body),
      kept: [kept.description, kept.resolved_ref === second],
      unknown_ref: await s.api('/api/skills/install', { method: 'POST', body: { source: url, ref: 'no-such-ref', repo_path: 'skills/lint', force: true } }).then((r) => [r.status, sentence(r.body)]),
      missing_repo_path: await s.api('/api/skills/install', { method: 'POST', body: { source: url, repo_path: 'skills/none', force: true } }).then((r) => [r.status, sentence(r.body)]),
      escaping_repo_path: await s.api('/api/skills/install', { method: 'POST', body: { source: url, repo_path: '../x', force: true } }).then((r) => r.status),
      github_unreachable: await s.api('/api/skills/install', { method: 'POST', body: { source: 'github:agentyard-parity/no-such-repo-7d3e' } }).then((r) => [r.status, sentence(r.body)]),
      github_malformed: await s.api('/api/skills/install', { method: 'POST', body: { source: 'github:only-owner' } }).then((r) => r.status),
      uninstall: (await s.api('/api/skills/installed/lint', { method: 'DELETE' })).status,
    };
    return view;
  },

  /** A plugin from git with its contents; it shows in POST /api/plugins while enabled. */
  async plugins_install(s) {
    const base = scratch(s);
    const repo = join(base, 'plugins-repo');
    const sha = commit(repo, {
      'plugins/city-weather/.plugin/plugin.json': JSON.stringify({ name: 'city-weather', version: '0.2.0', description: 'Weather' }),
      'plugins/city-weather/commands/now.md': '---\ndescription: Weather now\n---\nSay it.\n',
      'plugins/city-weather/skills/forecast/SKILL.md': skillMd('forecast', 'Forecasts'),
    });
    write(join(base, 'bad', '.plugin', 'plugin.json'), JSON.stringify({ name: 'Bad.Name' }));
    write(join(base, 'local-plugin', '.plugin', 'plugin.json'), JSON.stringify({ name: 'local-plugin', description: 'here' }));
    const url = `file://${repo}`;
    const X = '/api/plugins/installed/city-weather';
    const available = async () => ((await s.api('/api/plugins', { method: 'POST', body: { load_project: false } })).body.plugins ?? []).map((p: any) => p.name).sort();
    const install = await s.api('/api/plugins/install', { method: 'POST', body: { source: url, repo_path: 'plugins/city-weather' } });
    const local = await s.api('/api/plugins/install', { method: 'POST', body: { source: join(base, 'local-plugin') } });
    const view: View = {
      install: install.status,
      install_fields: keys(install.body),
      install_body: [install.body.name, install.body.version, install.body.description, install.body.enabled, install.body.source === url, install.body.resolved_ref === sha, install.body.repo_path],
      install_path: String(install.body.install_path).endsWith('/.openhands/plugins/installed/city-weather'),
      contents: [install.body.skills?.map((k: any) => [k.name, k.description]).sort(), install.body.files],
      local: [local.status, local.body.name, local.body.version, local.body.resolved_ref, local.body.files],
      again: await s.api('/api/plugins/install', { method: 'POST', body: { source: url, repo_path: 'plugins/city-weather' } }).then((r) => [r.status, r.body.detail]),
      listed: (await s.api('/api/plugins/installed')).body.plugins?.map((p: any) => [p.name, p.enabled, p.files?.length]),
      available: await available(),
      disable: await s.api(X, { method: 'PATCH', body: { enabled: false } }).then((r) => [r.status, r.body]),
      after_disable: await available(),
      one: await s.api(X).then((r) => [r.status, r.body.enabled, r.body.skills?.length]),
      refresh: await s.api(`${X}/refresh`, { method: 'POST' }).then((r) => [r.status, r.body.message, r.body.plugin?.enabled, r.body.plugin?.resolved_ref === sha]),
      bad_name: await s.api('/api/plugins/install', { method: 'POST', body: { source: join(base, 'bad') } }).then((r) => [r.status, text(r.body).startsWith('Invalid plugin. Ensure it has a valid kebab-case name.')]),
      bad_name_detail: await s.api('/api/plugins/install', { method: 'POST', body: { source: join(base, 'bad') } }).then((r) => locs(r.body)),
      missing_source: await s.api('/api/plugins/install', { method: 'POST', body: { source: join(base, 'nowhere') } }).then((r) => [r.status, sentence(r.body)]),
      github_unreachable: await s.api('/api/plugins/install', { method: 'POST', body: { source: 'github:agentyard-parity/no-such-repo-7d3e' } }).then((r) => [r.status, sentence(r.body)]),
      unknown: await s.api('/api/plugins/installed/nope').then((r) => [r.status, r.body]),
      bad_path_name: await s.api('/api/plugins/installed/Bad_Name', { method: 'DELETE' }).then((r) => [r.status, locs(r.body)]),
      uninstall: await s.api(X, { method: 'DELETE' }).then((r) => [r.status, r.body]),
      uninstall_local: (await s.api('/api/plugins/installed/local-plugin', { method: 'DELETE' })).status,
      after_uninstall: [(await s.api('/api/plugins/installed')).body.plugins, await available()],
    };
    return view;
  },

  /**
   * What installs change in a conversation: an installed skill is a user skill (listed to the model),
   * an installed plugin an ambient plugin (its command triggers, its skill is listed); disabled,
   * neither.
   */
  async installed_in_conversation(s) {
    const base = scratch(s);
    write(join(base, 'pdf-tools', 'SKILL.md'), skillMd('pdf-tools', 'Work with PDF files'));
    write(join(base, 'city-weather', '.plugin', 'plugin.json'), JSON.stringify({ name: 'city-weather', description: 'Weather' }));
    write(join(base, 'city-weather', 'commands', 'now.md'), '---\ndescription: Weather now\n---\nSay the weather in Lisbon is sunny.\n');
    write(join(base, 'city-weather', 'skills', 'forecast', 'SKILL.md'), skillMd('forecast', 'Five-day forecasts'));
    const installs = [
      (await s.api('/api/skills/install', { method: 'POST', body: { source: join(base, 'pdf-tools') } })).status,
      (await s.api('/api/plugins/install', { method: 'POST', body: { source: join(base, 'city-weather') } })).status,
    ];
    const converse = async () => {
      const before = s.llm.requests.length;
      s.llm.push({ toolCalls: [{ name: 'finish', arguments: { message: 'done' } }] });
      const body = startBody(s, { initial_message: { role: 'user', content: [{ type: 'text', text: '/city-weather:now please' }], run: true } });
      // User skills (the installed ones among them) load when the request asks: 1.58's AgentContext defaults load_user_skills to false.
      (body['agent'] as Record<string, unknown>)['agent_context'] = { load_user_skills: true };
      const r = await s.api('/api/conversations', { method: 'POST', body });
      const id = r.body.id as string;
      const end = await until('the run to end', async () => {
        const st = (await s.api(`/api/conversations/${id}`)).body.execution_status;
        return ['finished', 'error', 'stuck'].includes(st) ? st : undefined;
      });
      const evs = (await s.api(`/api/conversations/${id}/events/search?limit=100`)).body.items as any[];
      const msg = evs.find((e) => e.kind === 'MessageEvent' && e.source === 'user');
      const seen = JSON.stringify(s.llm.requests[before]?.messages ?? []);
      return { end, activated: msg?.activated_skills ?? [], command_text: JSON.stringify(msg?.extended_content ?? []).includes('sunny'), listed: ['pdf-tools', 'Five-day forecasts'].map((t) => seen.includes(t)) };
    };
    const on = await converse();
    await s.api('/api/skills/installed/pdf-tools', { method: 'PATCH', body: { enabled: false } });
    await s.api('/api/plugins/installed/city-weather', { method: 'PATCH', body: { enabled: false } });
    const off = await converse();
    await s.api('/api/skills/installed/pdf-tools', { method: 'DELETE' });
    await s.api('/api/plugins/installed/city-weather', { method: 'DELETE' });
    return { installs, on, off };
  },

  /** A plugin source checked and pinned without installing; OpenHands' error codes. */
  async plugins_fetch(s) {
    const base = scratch(s);
    const repo = join(base, 'fetched');
    const sha = commit(repo, { '.plugin/plugin.json': JSON.stringify({ name: 'fetched', version: '1.2.3' }), 'commands/go.md': 'Go.\n', 'skills/s1/SKILL.md': skillMd('s1', 'one') });
    write(join(base, 'nomanifest', 'README.md'), 'x');
    const ok = await s.api('/api/plugins/fetch', { method: 'POST', body: { source: `file://${base}/\${REPO}`, secrets: { REPO: { kind: 'StaticSecret', value: 'fetched' } } } });
    const code = (r: { status: number; body: any }) => [r.status, r.body?.detail?.code ?? locs(r.body)];
    const view: View = {
      ok: ok.status,
      ok_fields: keys(ok.body),
      ok_body: [ok.body.resolved_ref === sha, ok.body.source === `file://${base}/\${REPO}`, ok.body.repo_path, ok.body.manifest, ok.body.skills, ok.body.commands],
      ok_path: /\/\.openhands\/cache\/plugins\/fetched-[0-9a-f]{16}\/resolved-refs\/[0-9a-f]{40}$/.test(String(ok.body.path)),
      pinned: await s.api('/api/plugins/fetch', { method: 'POST', body: { source: `file://${repo}`, ref: sha } }).then((r) => [r.status, r.body.path === ok.body.path]),
      local: await s.api('/api/plugins/fetch', { method: 'POST', body: { source: repo } }).then((r) => [r.status, r.body.path === repo, r.body.resolved_ref]),
      missing_secret: await s.api('/api/plugins/fetch', { method: 'POST', body: { source: 'file:///x/${MISSING}' } }).then((r) => [r.status, r.body.detail]),
      unknown_ref: await s.api('/api/plugins/fetch', { method: 'POST', body: { source: `file://${repo}`, ref: 'nope' } }).then(code),
      unreachable: await s.api('/api/plugins/fetch', { method: 'POST', body: { source: `file://${base}/nowhere` } }).then((r) => r.status),
      unreachable_detail: await s.api('/api/plugins/fetch', { method: 'POST', body: { source: `file://${base}/nowhere` } }).then((r) => keys(r.body.detail) ?? Object.keys(r.body).sort()),
      invalid_source: await s.api('/api/plugins/fetch', { method: 'POST', body: { source: 'plainword' } }).then((r) => [r.status, r.body.detail]),
      repo_path_missing: await s.api('/api/plugins/fetch', { method: 'POST', body: { source: repo, repo_path: 'none' } }).then((r) => [r.status, r.body.detail]),
      no_manifest: await s.api('/api/plugins/fetch', { method: 'POST', body: { source: join(base, 'nomanifest') } }).then((r) => [r.status, r.body.detail]),
      bad_timeout: await s.api('/api/plugins/fetch', { method: 'POST', body: { source: repo, timeout: 0 } }).then((r) => [r.status, locs(r.body)]),
      installed_none: (await s.api('/api/plugins/installed')).body,
    };
    return view;
  },
};
