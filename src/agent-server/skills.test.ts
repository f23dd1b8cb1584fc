// Skills and the search/plan tools over HTTP with the real agent and the scripted model: a real git
// repository as the workspace with AGENTS.md, an AgentSkills folder and a legacy microagent.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAgent } from '../agent/agent.ts';
import { startScriptedLlm, type RecordedRequest, type ScriptedLlm } from '../testing/scripted-llm/server.ts';
import { eventually, startTestServer, tempDir, userText, type TestServer } from './test-support.ts';

let llm: ScriptedLlm;
let dir: ReturnType<typeof tempDir>;
let s: TestServer;
let home: string;
const oldHome = process.env['HOME'];

beforeAll(async () => (llm = await startScriptedLlm()));
afterAll(() => llm.close());
beforeEach(async () => {
  dir = tempDir();
  // The agent server's HOME holds the user skills.
  home = join(dir.path, 'home');
  process.env['HOME'] = home;
  s = await startTestServer(dir.path, { createAgent, llmDefaults: { model: 'openai/scripted', baseUrl: llm.url, apiKey: 'sk-default' } });
});
afterEach(async () => {
  await s.close();
  process.env['HOME'] = oldHome;
  dir.remove();
});

function write(root: string, files: Record<string, string>): void {
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, p)), { recursive: true });
    writeFileSync(join(root, p), text);
  }
}

function repo(): string {
  const wd = join(dir.path, 'project');
  write(wd, {
    'AGENTS.md': 'Run the tests with make check.',
    '.agents/skills/release-notes/SKILL.md': '---\nname: release-notes\ndescription: How to write release notes.\n---\n# Release notes\nUse the template in ${SKILL_ROOT}/references/template.md.\nVersion: !`cat VERSION`\n',
    VERSION: '1.2.3',
    '.agents/skills/release-notes/references/template.md': 'template',
    '.openhands/microagents/banana.md': '---\ntriggers:\n  - banana\n---\nBananas are berries.',
    'src/app.ts': 'export const answer = 42;\n',
    'src/AGENTS.md': 'Source files use 2-space indent.',
  });
  execFileSync('git', ['init', '-q', wd]);
  return wd;
}

const systemText = (req: RecordedRequest) => String(req.messages.find((m) => m.role === 'system')?.content);
const events = async (id: string) => (await s.api(`/api/conversations/${id}/events/search?limit=100`)).body.items as any[];

describe('skills in a conversation', () => {
  it('lists skills in the prompt, injects triggered ones into the user message, and loads one on invoke_skill', async () => {
    const wd = repo();
    write(home, { '.agents/skills/mine/SKILL.md': '---\nname: mine\ndescription: A user skill.\n---\nMine.' });
    let first: RecordedRequest | undefined;
    llm.push(
      (req) => {
        first = req;
        return {
          toolCalls: [
            { name: 'invoke_skill', arguments: { name: 'release-notes' } },
            { name: 'task_tracker', arguments: { command: 'plan', task_list: [{ title: 'Write notes', status: 'in_progress' }] } },
            { name: 'glob', arguments: { pattern: '**/*.ts' } },
            { name: 'grep', arguments: { pattern: 'answer', include: '*.ts' } },
            { name: 'file_editor', arguments: { command: 'view', path: join(wd, 'src/app.ts') } },
            { name: 'file_editor', arguments: { command: 'view', path: join(wd, 'src/app.ts') } },
          ],
        };
      },
      { toolCalls: [{ name: 'finish', arguments: { message: 'done' } }] },
    );
    const body = {
      workspace: { kind: 'LocalWorkspace', working_dir: wd },
      agent: {
        llm: { model: 'openai/scripted' },
        tools: [{ name: 'terminal' }, { name: 'file_editor' }, { name: 'task_tracker' }, { name: 'glob' }, { name: 'grep' }],
        // Both off by default (1.58's AgentContext): asked for here.
        agent_context: { load_user_skills: true, load_project_skills: true },
      },
    };
    const id = (await s.api('/api/conversations', { method: 'POST', body })).body.id;
    await s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('Write release notes, and mind the Banana case', true) });
    await eventually(async () => (await s.api(`/api/conversations/${id}`)).body.execution_status === 'finished', 15_000);

    // What the model received: the tools, the repo context, the skill summaries, the triggered skill.
    expect(first!.tools!.map((t) => t.function.name)).toEqual(['terminal', 'file_editor', 'finish', 'think', 'task_tracker', 'glob', 'grep', 'invoke_skill']);
    const system = systemText(first!);
    expect(system).toContain('<REPO_CONTEXT>');
    expect(system).toContain('[BEGIN context from [agents]]\nRun the tests with make check.\n[END Context]');
    expect(system).toContain('<name>release-notes</name>\n    <description>How to write release notes.</description>');
    expect(system).toContain('<name>banana</name>');
    expect(system).toContain('<name>mine</name>');
    expect(system).not.toContain('Use the template');
    const user = String(first!.messages.find((m) => m.role === 'user')?.content);
    expect(user).toContain('The following was added because the message matched the keyword "banana"');
    expect(user).toContain('Bananas are berries.');

    const items = await events(id);
    const message = items.find((e) => e.kind === 'MessageEvent' && e.source === 'user');
    expect(message.activated_skills).toEqual(['banana']);
    expect(message.extended_content[0].text).toContain('Bananas are berries.');
    const prompt = items.find((e) => e.kind === 'SystemPromptEvent');
    expect(prompt.tools.map((t: any) => t.kind)).toContain('InvokeSkillTool');
    expect(prompt.dynamic_context.text).toContain('<available_skills>');

    const obs = (kind: string) => items.find((e) => e.kind === 'ObservationEvent' && e.observation.kind === kind).observation;
    const invoked = obs('InvokeSkillObservation');
    expect(invoked.skill_name).toBe('release-notes');
    expect(invoked.content[0].text).toContain(`Use the template in ${join(wd, '.agents/skills/release-notes')}/references/template.md.`);
    expect(invoked.content[0].text).toContain('.agents/skills/release-notes; resolve relative paths');
    // Inline commands run in the workspace when the skill is invoked.
    expect(invoked.content[0].text).toContain('Version: 1.2.3');
    expect(obs('TaskTrackerObservation')).toMatchObject({ command: 'plan', task_list: [{ title: 'Write notes', notes: '', status: 'in_progress' }] });
    expect(obs('GlobObservation')).toMatchObject({ files: [join(wd, 'src/app.ts')], pattern: '**/*.ts', search_path: wd });
    expect(obs('GrepObservation')).toMatchObject({ matches: [join(wd, 'src/app.ts')], include_pattern: '*.ts' });
    // src/AGENTS.md is a rule for files under src/: added to the first observation touching one, once.
    const views = items.filter((e) => e.kind === 'ObservationEvent' && e.observation.kind === 'FileEditorObservation');
    expect(views[0].extended_content[0].text).toContain(`matches "src/**"`);
    expect(views[0].extended_content[0].text).toContain('Source files use 2-space indent.');
    expect(views[1].extended_content).toEqual([]);
    expect(system).not.toContain('2-space indent');

    const info = (await s.api(`/api/conversations/${id}`)).body;
    expect(info.activated_knowledge_skills).toEqual(['banana']);
    expect(info.invoked_skills).toEqual(['release-notes']);

    // A skill fires once per conversation.
    llm.push({ content: 'ok' });
    await s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('banana again', true) });
    await eventually(async () => (await events(id)).filter((e) => e.kind === 'MessageEvent' && e.source === 'agent').length === 1, 15_000);
    const again = (await events(id)).filter((e) => e.kind === 'MessageEvent' && e.source === 'user')[1];
    expect(again.activated_skills).toEqual([]);
    expect(again.extended_content).toEqual([]);

    // After a restart the info is rebuilt from the stored events.
    await s.close();
    s = await startTestServer(dir.path, { createAgent, llmDefaults: { model: 'openai/scripted', baseUrl: llm.url, apiKey: 'sk-default' } });
    const restarted = (await s.api(`/api/conversations/${id}`)).body;
    expect([restarted.activated_knowledge_skills, restarted.invoked_skills]).toEqual([['banana'], ['release-notes']]);
  });

  it('attaches no invoke_skill without AgentSkills, and takes skills from the start request only (no flags: no user or project skills)', async () => {
    const wd = join(dir.path, 'plain');
    write(wd, { 'AGENTS.md': 'Project rules.' });
    write(home, { '.openhands/skills/kiwi.md': '---\ntriggers: [deploy]\n---\nKiwi.' });
    llm.push({ content: 'hi' });
    const body = {
      workspace: { kind: 'LocalWorkspace', working_dir: wd },
      agent: {
        llm: { model: 'openai/scripted' },
        agent_context: {
          skills: [{ name: 'deploy', content: 'Deploy with make ship.', trigger: { type: 'keyword', keywords: ['/deploy'] } }],
          system_message_suffix: 'Answer in French.',
          user_message_suffix: 'Be brief.',
        },
      },
      initial_message: userText('please /deploy now', true),
    };
    const id = (await s.api('/api/conversations', { method: 'POST', body })).body.id;
    await eventually(async () => (await s.api(`/api/conversations/${id}`)).body.execution_status === 'finished', 15_000);
    const req = llm.requests.at(-1)!;
    expect(req.tools!.map((t) => t.function.name)).toEqual(['terminal', 'file_editor', 'finish', 'think']);
    expect(systemText(req)).toContain('<name>deploy</name>');
    expect(systemText(req)).toMatch(/Answer in French\.$/);
    expect(systemText(req)).not.toContain('Project rules.');
    expect(systemText(req)).not.toContain('kiwi');
    expect(String(req.messages.find((m) => m.role === 'user')?.content)).toMatch(/please \/deploy now\n<EXTRA_INFO>[\s\S]*Deploy with make ship\.[\s\S]*<\/EXTRA_INFO>\n\nBe brief\.$/);
    const message = (await events(id)).find((e) => e.kind === 'MessageEvent' && e.source === 'user');
    expect(message.activated_skills).toEqual(['deploy']);
    expect(message.extended_content[0].text).toContain('Deploy with make ship.');
  });
});

describe('POST /api/skills', () => {
  it('loads project and user skills with counts per source', async () => {
    const wd = repo();
    write(home, { '.openhands/microagents/kiwi.md': '---\ntriggers: [kiwi]\n---\nKiwi.' });
    const res = await s.api('/api/skills', { method: 'POST', body: { project_dir: wd, sandbox_config: { exposed_urls: [{ name: 'WORKER_1', url: 'http://127.0.0.1:12000', port: 12000 }, { name: 'VSCODE', url: 'http://x', port: 1 }] } } });
    expect(res.status).toBe(200);
    expect(res.body.sources).toEqual({ sandbox: 1, registered_marketplaces: 0, sdk_base: 1, public: 0, user: 1, org: 0, project: 4 });
    const byName = Object.fromEntries(res.body.skills.map((x: any) => [x.name, x]));
    expect(Object.keys(byName).sort()).toEqual(['agents', 'agents:src', 'banana', 'kiwi', 'release-notes', 'work_hosts']);
    expect(byName['agents:src']).toMatchObject({ type: 'knowledge', triggers: [], disable_model_invocation: true, content: 'Source files use 2-space indent.' });
    expect(byName['release-notes']).toEqual({
      name: 'release-notes',
      type: 'agentskills',
      content: '# Release notes\nUse the template in ${SKILL_ROOT}/references/template.md.\nVersion: !`cat VERSION`',
      triggers: [],
      source: join(wd, '.agents/skills/release-notes/SKILL.md'),
      description: 'How to write release notes.',
      is_agentskills_format: true,
      disable_model_invocation: false,
    });
    expect(byName['banana']).toMatchObject({ type: 'knowledge', triggers: ['banana'] });
    expect(byName['agents']).toMatchObject({ type: 'repo', content: 'Run the tests with make check.' });
    expect(byName['work_hosts'].content).toContain('* http://127.0.0.1:12000 (port 12000)');

    // A relative project_dir is taken inside the server's workspace, as a conversation's working dir is.
    write(join(dir.path, 'workspace', 'rel'), { 'CLAUDE.md': 'claude rules' });
    const rel = await s.api('/api/skills', { method: 'POST', body: { load_user: false, project_dir: 'rel' } });
    expect(rel.body.skills.map((x: any) => x.name)).toEqual(['claude']);

    const none = await s.api('/api/skills', { method: 'POST', body: { load_user: false, load_project: false, project_dir: wd } });
    expect(none.body).toEqual({ skills: [], sources: { sandbox: 0, registered_marketplaces: 0, sdk_base: 0, public: 0, user: 0, org: 0, project: 0 } });
  });

  it('loads organization skills from a cloned configuration repository', async () => {
    const org = join(dir.path, 'org-config');
    write(org, { 'skills/org-style/SKILL.md': '---\nname: org-style\ndescription: Org style.\n---\nOrg style.', 'microagents/old.md': 'Old org rules.' });
    execFileSync('git', ['init', '-q', org]);
    execFileSync('git', ['-C', org, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'add', '.']);
    execFileSync('git', ['-C', org, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'skills']);
    const res = await s.api('/api/skills', {
      method: 'POST',
      body: { load_user: false, load_project: false, org_configs: [{ repository: 'o/r', provider: 'github', org_repo_url: `file://${org}`, org_name: 'o' }, { repository: 'o/r', provider: 'github', org_repo_url: `file://${org}-missing`, org_name: 'gone' }] },
    });
    expect(res.body.sources.org).toBe(2);
    expect(res.body.skills.map((x: any) => x.name).sort()).toEqual(['old', 'org-style']);
  });

  it('answers 422 with field paths for a bad request', async () => {
    const bad = await s.api('/api/skills', { method: 'POST', body: { load_user: 'maybe' } });
    expect(bad.status).toBe(422);
    expect(JSON.stringify(bad.body)).toContain('load_user');
    const typed = await s.api('/api/skills', { method: 'POST', body: { project_dir: 5, org_configs: [{ repository: 'o/r' }] } });
    expect(typed.status).toBe(422);
    expect(JSON.stringify(typed.body)).toContain('"project_dir"');
    expect(JSON.stringify(typed.body)).toContain('"org_repo_url"');
    // A registration's repo_path stays inside its repository (OpenHands' validator).
    const up = await s.api('/api/skills', { method: 'POST', body: { registered_marketplaces: [{ name: 'm', source: '/tmp/m', repo_path: 'a/../../b' }] } });
    expect(up.status).toBe(422);
    expect(up.body.detail[0].loc).toEqual(['body', 'registered_marketplaces', 0, 'repo_path']);
  });
});
