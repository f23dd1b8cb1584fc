// Every skill a workspace would load, by source, for POST /api/skills (OpenHands
// skills_service.load_all_skills): sandbox < registered marketplaces < public < user < org < project,
// later overriding earlier by name. Public skills come from the extensions repository
// (extensions-repo.ts: a clone of OpenHands/extensions, or EXTENSIONS_PATH); a sandbox that cannot
// reach it gets none (logged), as OpenHands does.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { SkillsRequest } from '../../api/agent-server/skills.ts';
import { gitEnv, splitUrlCredentials } from '../../util/git-credentials.ts';
import { createLogger } from '../../util/log.ts';
import { registeredMarketplaceSkills } from '../plugins/registered.ts';
import { DEFAULT_MARKETPLACE_PATH, loadPublicSkills, mergeRegistrations, type ExtensionsConfig } from './extensions-repo.ts';
import { loadProjectSkillsSync, loadSkillsDirSync, loadUserSkillsSync } from './load.ts';
import { mergeByName, type Skill } from './types.ts';

const log = createLogger('skills');
const run = promisify(execFile);
const CLONE_TIMEOUT_MS = 120_000;

/** Exposed URLs named WORKER_* tell the agent where its web apps are reachable (OpenHands work_hosts). */
export function sandboxSkill(urls: readonly { name: string; url: string; port: number }[]): Skill | undefined {
  const workers = urls.filter((u) => u.name.startsWith('WORKER_'));
  if (!workers.length) return undefined;
  const hosts = workers.map((u) => `* ${u.url} (port ${u.port})`).join('\n');
  return {
    name: 'work_hosts',
    type: 'repo',
    content: `The user can reach a web application through each of these hosts, one per port:\n${hosts}`,
    triggers: [],
    source: null,
    description: null,
    is_agentskills_format: false,
    disable_model_invocation: false,
    root: null,
    origin: 'sandbox',
  };
}

/**
 * A name defined both in the old-style (`microagents/`, OpenHands' `.openhands` layout) and the
 * new-style (`skills/`) part of one configuration repository. Spec part 4 rule 6 says it must not
 * be; when it is, the new-style skill is used and the conflict is reported (the start gets a Warning).
 */
export interface SkillConflict {
  name: string;
  org: string;
  kept: 'skills/';
  ignored: 'microagents/';
}

/** Shallow clone of an organization configuration repository: `skills/`, then legacy `microagents/`. */
export async function loadOrgSkills(url: string, orgName: string, conflicts: SkillConflict[] = []): Promise<Skill[]> {
  const dir = await mkdtemp(join(tmpdir(), 'org-skills-'));
  try {
    // The URL may carry the user's token (OpenHands' pre-authenticated org_repo_url): it goes to git
    // as a header in the environment, never in argv where `ps` shows it to every local user.
    const { url: bare, authorization } = splitUrlCredentials(url);
    await run('git', ['clone', '--depth', '1', '--quiet', '--', bare, join(dir, 'repo')], { timeout: CLONE_TIMEOUT_MS, env: gitEnv(authorization) });
    const legacy = loadSkillsDirSync(join(dir, 'repo', 'microagents'), 'org');
    const current = loadSkillsDirSync(join(dir, 'repo', 'skills'), 'org');
    const names = new Set(current.map((s) => s.name));
    for (const s of legacy) if (names.has(s.name)) conflicts.push({ name: s.name, org: orgName, kept: 'skills/', ignored: 'microagents/' });
    const skills = mergeByName(legacy, current);
    // The clone goes away: these skills have no directory to point to.
    return skills.map((s) => ({ ...s, root: null }));
  } catch (err) {
    // The URL carries credentials: name the organization, never the URL or git's message quoting it.
    log.warn({ org: orgName, code: (err as { code?: unknown }).code }, 'organization skills could not be cloned');
    return [];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * `home`: the user's home (user skills and installed skills), for tests and isolated servers.
 * `extensions`: where public skills come from and the server's marketplace registrations (without
 * it, no public or marketplace skills). `sources` has OpenHands' keys (`sdk_base`: public and user
 * merged) and agentyard's split of it (`public`, `user`).
 */
export async function loadAllSkills(req: SkillsRequest, opts: { home?: string; extensions?: ExtensionsConfig; baseDir?: string } = {}): Promise<{ skills: Skill[]; sources: Record<string, number>; conflicts: SkillConflict[] }> {
  const conflicts: SkillConflict[] = [];
  const ext = opts.extensions;
  const loadPublic = req.load_public !== false && !!ext;
  const sandbox = [sandboxSkill(req.sandbox_config?.exposed_urls ?? [])].filter((s): s is Skill => !!s);
  const registrations = ext ? mergeRegistrations(ext.registeredMarketplaces, req.registered_marketplaces ?? []) : [];
  const marketplace = loadPublic ? await registeredMarketplaceSkills(registrations, { baseDir: opts.baseDir ?? process.cwd() }) : [];
  const marketplacePath = req.marketplace_path === undefined ? DEFAULT_MARKETPLACE_PATH : req.marketplace_path;
  const publicSkills = loadPublic ? await loadPublicSkills(ext, marketplacePath) : [];
  const user = req.load_user !== false ? loadUserSkillsSync(opts.home ?? ext?.home) : [];
  const sdkBase = mergeByName(publicSkills, user);
  const orgs = req.org_configs ?? (req.org_config ? [req.org_config] : []);
  const org = req.load_org !== false ? mergeByName(...(await Promise.all(orgs.map((o) => loadOrgSkills(o.org_repo_url, o.org_name, conflicts))))) : [];
  const project = req.load_project !== false && req.project_dir ? loadProjectSkillsSync(req.project_dir) : [];
  const skills = mergeByName(sandbox, marketplace, sdkBase, org, project);
  return {
    skills,
    sources: { sandbox: sandbox.length, registered_marketplaces: marketplace.length, sdk_base: sdkBase.length, public: publicSkills.length, user: user.length, org: org.length, project: project.length },
    conflicts,
  };
}
