// Real git repositories shaped like OpenHands' extensions repository and like a registered
// marketplace, for the extensions tests and the side-by-side suite (both servers read the same ones).
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export function writeFiles(root: string, files: Record<string, string>): void {
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, p)), { recursive: true });
    writeFileSync(join(root, p), text);
  }
}

const GIT_ID = ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'commit.gpgsign=false'];

/** Writes `files` and commits them (a new repository on branch main if `root` is none yet). */
export function commitFiles(root: string, files: Record<string, string>, message = 'update'): string {
  mkdirSync(root, { recursive: true });
  try {
    execFileSync('git', ['-C', root, 'rev-parse', '--git-dir'], { stdio: 'ignore' });
  } catch {
    execFileSync('git', ['init', '-q', '-b', 'main', root]);
  }
  writeFiles(root, files);
  execFileSync('git', ['-C', root, ...GIT_ID, 'add', '-A']);
  execFileSync('git', ['-C', root, ...GIT_ID, 'commit', '-q', '-m', message]);
  return execFileSync('git', ['-C', root, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
}

const skill = (name: string, description: string, body = `Use ${name} well.`) => `---\nname: ${name}\ndescription: ${description}\n---\n${body}\n`;

/**
 * The extensions repository: skills/ (AgentSkills folders and a legacy .md), the default
 * marketplace file (marketplaces/default.json: alpha, legacy, and a name with no skill), the
 * repository manifest (.plugin/marketplace.json: skills and plugins, one plugin in another
 * repository, one standalone skill duplicating a plugin's name), and a true plugin under plugins/.
 */
export function extensionsRepo(root: string): string {
  const manifest = {
    name: 'openhands-extensions',
    owner: { name: 'OpenHands' },
    plugins: [
      { name: 'alpha', source: './skills/alpha', description: 'Alpha skill.' },
      { name: 'beta', source: './skills/beta', description: 'Beta skill.' },
      { name: 'tool-kit', source: './plugins/tool-kit', description: 'A kit of tools.' },
      { name: 'remote-kit', source: { source: 'github', repo: 'acme/remote-kit', ref: 'v1', path: 'plugins/remote-kit' }, description: 'Elsewhere.' },
    ],
    skills: [
      { name: 'alpha', source: './skills/alpha-copy', description: 'Shadowed by the plugin entry.' },
      { name: 'delta', source: 'github:acme/delta', description: 'A standalone skill.' },
    ],
  };
  const defaults = defaultMarketplace();
  commitFiles(root, {
    'skills/alpha/SKILL.md': skill('alpha', 'Alpha skill.'),
    'skills/beta/SKILL.md': skill('beta', 'Beta skill.'),
    'skills/legacy.md': '---\ntriggers: [legacy-word]\n---\nLegacy knowledge.\n',
    'skills/README.md': '# Skills\n',
    'marketplaces/default.json': JSON.stringify(defaults, null, 2),
    '.plugin/marketplace.json': JSON.stringify(manifest, null, 2),
    'plugins/tool-kit/.plugin/plugin.json': JSON.stringify({ name: 'tool-kit', version: '1.0.0', description: 'A kit of tools.' }),
    'plugins/tool-kit/skills/kit-use/SKILL.md': skill('kit-use', 'How to use the kit.'),
    'plugins/tool-kit/commands/run.md': '---\ndescription: Run the kit.\n---\nRun it.\n',
  }, 'extensions');
  return root;
}

/** marketplaces/default.json: two skills that load, one that is missing, and `more`. */
function defaultMarketplace(more: { name: string; source: string }[] = []) {
  return {
    name: 'default',
    owner: { name: 'OpenHands' },
    plugins: [{ name: 'alpha', source: './skills/alpha' }, { name: 'legacy', source: './skills/legacy.md' }, { name: 'missing', source: './skills/missing' }, ...more],
  };
}

/** A new public skill, listed in the default marketplace (what a sync must bring). */
export function addPublicSkill(root: string, name: string): string {
  const defaults = defaultMarketplace([{ name, source: `./skills/${name}` }]);
  return commitFiles(root, { [`skills/${name}/SKILL.md`]: skill(name, `${name} skill.`), 'marketplaces/default.json': JSON.stringify(defaults, null, 2) }, `add ${name}`);
}

/** A registered marketplace: two plugins with skills and one standalone skill, in .plugin/marketplace.json. */
export function marketplaceRepo(root: string): string {
  const manifest = {
    name: 'team',
    owner: { name: 'Team' },
    plugins: [
      { name: 'lint-kit', source: './plugins/lint-kit' },
      { name: 'docs-kit', source: './plugins/docs-kit' },
    ],
    skills: [{ name: 'team-style', source: './skills/team-style' }],
  };
  commitFiles(root, {
    '.plugin/marketplace.json': JSON.stringify(manifest, null, 2),
    'plugins/lint-kit/.plugin/plugin.json': JSON.stringify({ name: 'lint-kit', version: '0.1.0' }),
    'plugins/lint-kit/skills/lint-rules/SKILL.md': skill('lint-rules', 'Lint rules.'),
    'plugins/docs-kit/.plugin/plugin.json': JSON.stringify({ name: 'docs-kit', version: '0.1.0' }),
    'plugins/docs-kit/skills/docs-style/SKILL.md': skill('docs-style', 'Docs style.'),
    'skills/team-style/SKILL.md': skill('team-style', 'Team style.'),
  }, 'marketplace');
  return root;
}
