import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { StartConversationRequest } from '../../api/agent-server/index.ts';
import { availableSkillsPrompt, loadSkillsFromDir, matchTriggers, renderSkill, resolveSkills, skillsPromptSection } from './index.ts';
import { ConversationSkills } from './conversation.ts';
import { pathGlobRegex, touchedPath } from './path-rules.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'skills-'));
  dirs.push(root);
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, p)), { recursive: true });
    writeFileSync(join(root, p), text);
  }
  return root;
}

// Project skills asked for, user skills not (the HOME of the machine running the tests is not theirs).
const request = (ctx: Record<string, unknown> = {}) => ({ agent: { llm: { model: 'x' }, agent_context: { load_project_skills: true, ...ctx } } }) as unknown as StartConversationRequest;

describe('loadSkillsFromDir', () => {
  it('loads AgentSkills folders and legacy files, skipping invalid names and READMEs', async () => {
    const dir = tree({
      'pdf-tools/SKILL.md': '---\nname: pdf-tools\ndescription: Extract text from PDFs.\ntriggers: [pdf]\n---\n# PDF\nUse ${SKILL_ROOT}/scripts/x.sh\n',
      'pdf-tools/references/more.md': 'not a skill on its own',
      'Bad_Name/SKILL.md': '---\ndescription: nope\n---\nbody',
      'mismatch/SKILL.md': '---\nname: other\n---\nbody',
      'deploy.md': '---\ntriggers:\n  - deploy\n  - /ship\n---\nHow to deploy.',
      'nested/style.md': 'Always use tabs.',
      'README.md': 'ignored',
    });
    const skills = await loadSkillsFromDir(dir, 'project');
    expect(skills.map((s) => [s.name, s.type, s.triggers])).toEqual([
      ['pdf-tools', 'agentskills', ['pdf']],
      ['deploy', 'knowledge', ['deploy', '/ship']],
      ['nested/style', 'repo', []],
    ]);
    const pdf = skills[0]!;
    expect(pdf).toMatchObject({ source: join(dir, 'pdf-tools/SKILL.md'), description: 'Extract text from PDFs.', is_agentskills_format: true, root: join(dir, 'pdf-tools'), origin: 'project' });
    expect(renderSkill(pdf)).toContain(`${join(dir, 'pdf-tools')}/scripts/x.sh`);
    expect(await loadSkillsFromDir(join(dir, 'absent'), 'user')).toEqual([]);
  });
});

describe('resolveSkills', () => {
  it('reads third-party files at the workspace and the git root, project skill dirs, request skills; project skills win', async () => {
    const repo = tree({
      'AGENTS.md': 'Root agents file',
      'Claude.md': 'claude rules',
      '.cursorrules': 'cursor rules',
      'sub/agents.md': 'Sub agents file',
      '.agents/skills/x/SKILL.md': '---\nname: x\ndescription: The x skill\n---\nX body',
      '.openhands/microagents/legacy.md': '---\ntriggers: [banana]\n---\nBanana facts',
      '.openhands/skills/x.md': 'shadowed by .agents/skills/x',
    });
    execFileSync('git', ['init', '-q', repo]);
    const skills = await resolveSkills({
      workspaceDir: join(repo, 'sub'),
      request: request({ skills: [{ name: 'legacy', content: 'from request', trigger: { type: 'keyword', keywords: ['apple'] } }] }),
    });
    const byName = Object.fromEntries(skills.map((s) => [s.name, s]));
    // The workspace's own agents.md wins over the git root's AGENTS.md.
    expect(byName['agents']!.content).toBe('Sub agents file');
    expect(byName['claude']!.type).toBe('repo');
    expect(byName['cursorrules']!.content).toBe('cursor rules');
    expect(byName['x']!.content).toBe('X body');
    // Project skills are authoritative over the request's and the plugins' (1.58's LocalConversation).
    expect(byName['legacy']).toMatchObject({ content: 'Banana facts', triggers: ['banana'], origin: 'project', type: 'knowledge' });
    const extra = await resolveSkills({ workspaceDir: repo, request: request() }, [
      { ...byName['x']!, content: 'plugin x', origin: 'plugin:p' },
      { ...byName['x']!, name: 'p-only', content: 'plugin only', origin: 'plugin:p' },
    ]);
    expect(extra.find((s) => s.name === 'x')!.content).toBe('X body');
    expect(extra.find((s) => s.name === 'p-only')!.content).toBe('plugin only');
  });

  it("loads user and project skills only when asked (1.58's defaults: neither), user yielding to the request's, project overriding it", async () => {
    const home = tree({
      '.agents/skills/mine/SKILL.md': '---\nname: mine\ndescription: user skill\n---\nmine',
      '.openhands/skills/shared.md': 'shared from the user',
    });
    const ws = tree({ 'AGENTS.md': 'project rules', '.agents/skills/shared/SKILL.md': '---\nname: shared\ndescription: project skill\n---\nshared from the project' });
    const explicit = [{ name: 'shared', content: 'shared from the request' }, { name: 'mine', content: 'mine from the request' }];
    const ctx = (c: Record<string, unknown>) => ({ agent: { llm: { model: 'x' }, agent_context: c } }) as unknown as StartConversationRequest;
    const names = (skills: { name: string; origin?: string | undefined; content: string }[]) => skills.map((s) => [s.name, s.origin, s.content]).sort();
    const host = { workspaceDir: ws, userHome: home };
    expect(await resolveSkills({ ...host, request: { agent: { llm: { model: 'x' } } } as unknown as StartConversationRequest })).toEqual([]);
    expect(await resolveSkills({ ...host, request: ctx({}) })).toEqual([]);
    expect(names(await resolveSkills({ ...host, request: ctx({ load_user_skills: true }) }))).toEqual([
      ['mine', 'user', 'mine'],
      ['shared', 'user', 'shared from the user'],
    ]);
    expect(names(await resolveSkills({ ...host, request: ctx({ load_project_skills: true }) }))).toEqual([
      ['agents', 'project', 'project rules'],
      ['shared', 'project', 'shared from the project'],
    ]);
    // User skills yield to the request's; project skills override them.
    expect(names(await resolveSkills({ ...host, request: ctx({ skills: explicit, load_user_skills: true }) }))).toEqual([
      ['mine', 'request', 'mine from the request'],
      ['shared', 'request', 'shared from the request'],
    ]);
    expect(names(await resolveSkills({ ...host, request: ctx({ skills: explicit, load_user_skills: true, load_project_skills: true }) }))).toEqual([
      ['agents', 'project', 'project rules'],
      ['mine', 'request', 'mine from the request'],
      ['shared', 'project', 'shared from the project'],
    ]);
    // The deny-list holds for project skills too.
    expect(names(await resolveSkills({ ...host, request: ctx({ load_project_skills: true, disabled_skills: ['shared'] }) }))).toEqual([['agents', 'project', 'project rules']]);
  });

  it('keeps project skills over plugin skills added later to a conversation', () => {
    const ws = tree({ '.agents/skills/shared/SKILL.md': '---\nname: shared\ndescription: project skill\n---\nfrom the project' });
    const conv = new ConversationSkills({ workspaceDir: ws, request: request() });
    const plugin = { ...conv.all[0]!, origin: 'plugin:p' };
    conv.addExtra([{ ...plugin, content: 'from the plugin' }, { ...plugin, name: 'p-only', content: 'plugin only' }]);
    expect(conv.all.map((s) => [s.name, s.content])).toEqual([
      ['shared', 'from the project'],
      ['p-only', 'plugin only'],
    ]);
  });

  it('loads installed skills from OH_PERSISTENCE_DIR when no home is given, as OpenHands keeps them there', async () => {
    const store = tree({ 'skills/installed/kept/SKILL.md': '---\nname: kept\ndescription: installed skill\n---\nkept' });
    const old = process.env['OH_PERSISTENCE_DIR'];
    process.env['OH_PERSISTENCE_DIR'] = store;
    try {
      const skills = await resolveSkills({ workspaceDir: tree({}), request: request({ load_user_skills: true }) });
      expect(skills.map((s) => s.name)).toContain('kept');
    } finally {
      if (old === undefined) delete process.env['OH_PERSISTENCE_DIR'];
      else process.env['OH_PERSISTENCE_DIR'] = old;
    }
  });
});

describe('prompt and triggers', () => {
  it('lists summaries with a truncation note and puts repo skills in full into REPO_CONTEXT', async () => {
    const dir = tree({ 'AGENTS.md': 'Use pnpm.', '.agents/skills/nodesc/SKILL.md': '# Title\n\nFirst line.\nSecond line here.\n', '.openhands/microagents/k.md': '---\ntriggers: [kiwi]\n---\nKiwi' });
    const skills = await resolveSkills({ workspaceDir: dir, request: request() });
    const prompt = skillsPromptSection(skills, 'openai/gpt-4o');
    expect(prompt).toContain('<REPO_CONTEXT>');
    expect(prompt).toContain('[BEGIN context from [agents]]\nUse pnpm.\n[END Context]');
    expect(prompt).toContain('<name>nodesc</name>');
    expect(prompt).toContain('<description>First line.... [18 characters truncated. Call invoke_skill(name="nodesc") to load the full skill]</description>');
    expect(prompt).toContain('<name>k</name>');
    expect(availableSkillsPrompt([])).toContain('no available skills');
  });

  it('loads an instruction file reached through a symlink once', async () => {
    const dir = tree({ 'AGENTS.md': 'shared rules' });
    symlinkSync(join(dir, 'AGENTS.md'), join(dir, 'CLAUDE.md'));
    const skills = await resolveSkills({ workspaceDir: dir, request: request() });
    expect(skills.map((s) => [s.name, s.content])).toEqual([['agents', 'shared rules']]);
  });

  it('matches keywords as whole tokens in any case, once per skill', () => {
    const base = { content: 'c', source: null, description: null, is_agentskills_format: false, disable_model_invocation: false, root: null, origin: 'request', type: 'knowledge' as const };
    const skills = [
      { ...base, name: 'git', triggers: ['git'] },
      { ...base, name: 'lin', triggers: ['/linear'] },
    ];
    expect(matchTriggers(skills, 'Push to GitHub', new Set())).toEqual([]);
    expect(matchTriggers(skills, 'use GIT please, then /linear', new Set()).map((m) => [m.skill.name, m.trigger])).toEqual([
      ['git', 'git'],
      ['lin', '/linear'],
    ]);
    expect(matchTriggers(skills, 'git', new Set(['git']))).toEqual([]);
  });
});

describe('path rules', () => {
  it('matches gitignore-style globs', () => {
    expect(pathGlobRegex('src/**').test('src/a/b.ts')).toBe(true);
    expect(pathGlobRegex('src/**').test('srcx/a.ts')).toBe(false);
    expect(pathGlobRegex('*.py').test('a/b/c.py')).toBe(true);
    expect(pathGlobRegex('*.py').test('c.py')).toBe(true);
    expect(pathGlobRegex('docs/*.md').test('docs/a/b.md')).toBe(false);
    expect(pathGlobRegex('a?c').test('abc')).toBe(true);
    expect(touchedPath({ path: '/w/src/x.ts' }, '/w')).toBe('src/x.ts');
    expect(touchedPath({ path: '/elsewhere/x.ts' }, '/w')).toBeUndefined();
    expect(touchedPath({ command: 'ls' }, '/w')).toBeUndefined();
  });

  it('loads nested instruction files and paths: skills as rules, injected once into an observation touching a match', async () => {
    const ws = tree({
      'server/AGENTS.md': 'Server rules.',
      'node_modules/x/AGENTS.md': 'ignored',
      '.openhands/microagents/py.md': '---\npaths: "*.py, scripts/**"\n---\nPython rules.',
    });
    const host = { workspaceDir: ws, request: request() };
    const skills = await resolveSkills(host);
    expect(skills.map((s) => [s.name, s.paths, s.disable_model_invocation])).toEqual([
      ['agents:server', ['server/**'], true],
      ['py', ['*.py', 'scripts/**'], true],
    ]);
    expect(skillsPromptSection(skills)).toBe('');
    const conv = new ConversationSkills(host);
    const obs = { kind: 'ObservationEvent', id: 'o', timestamp: 't', source: 'environment', tool_name: 'file_editor', tool_call_id: 'c', action_id: 'a', observation: { kind: 'ThinkObservation' }, extended_content: [] } as never;
    const { event: first, fired } = conv.withPathRules(obs, { path: join(ws, 'server/app/main.py') }, []);
    expect(fired).toEqual(['agents:server', 'py']);
    expect(conv.activatedPathRules([first as never])).toEqual(['agents:server', 'py']);
    expect(conv.activatedPathRules([])).toEqual([]);
    const text = first.extended_content![0]!.text;
    expect(text).toContain('Server rules.');
    expect(text).toContain('Python rules.');
    expect(text).toContain(`Rule location: ${join(ws, 'server/AGENTS.md')}`);
    expect(conv.withPathRules(obs, { path: join(ws, 'server/other.txt') }, [first as never])).toMatchObject({ event: { extended_content: [] }, fired: [] });
    expect(conv.withPathRules(obs, { path: join(ws, 'README.md') }, []).event.extended_content).toEqual([]);
  });
});
