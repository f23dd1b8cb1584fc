// /api/skills (OpenHands 1.58 skills_router.py): POST /api/skills, the skills a workspace would
// load, with counts per source; and the installed skills (`~/.openhands/skills/installed`, see
// routes/installed.ts), which load as user skills (below ~/.agents/skills and ~/.openhands/skills
// on a name conflict) into POST /api/skills and into conversations, while enabled. The extensions
// repository's routes (catalog, sync, marketplace) are another router's.
import Router from '@koa/router';
import { inWorkspace } from '../http/paths.ts';
import { parseBody } from '../../api/agent-server/parse.ts';
import { SkillsRequest, type SkillsResponse } from '../../api/agent-server/skills.ts';
import { InstallSkillRequest, SkillName, type InstalledSkill } from '../../api/agent-server/installs.ts';
import { loadAllSkills } from '../../agent/skills/sources.ts';
import { installedSkillMeta } from '../../agent/skills/load.ts';
import { skillInfo } from '../../agent/skills/types.ts';
import type { ExtensionsConfig } from '../../agent/skills/extensions-repo.ts';
import { checkRegistrations } from './extensions.ts';
import { ExtensionStore } from '../../agent/extensions/install.ts';
import { installedDir, type InstalledRecord } from '../../agent/extensions/installed.ts';
import { installedRoutes } from './installed.ts';

/** InstalledSkillResponse: the record without requested_ref (OpenHands keeps it, does not answer it). */
export function installedSkillView(r: InstalledRecord): InstalledSkill {
  return { name: r.name, version: r.version, description: r.description, enabled: r.enabled, source: r.source, resolved_ref: r.resolved_ref, repo_path: r.repo_path, installed_at: r.installed_at, install_path: r.install_path };
}

/**
 * `workspaceDir`: the server's workspace root; a relative project_dir (or local install source) is
 * taken inside it. `home`: the user's home (user and installed skills), for tests and isolated servers.
 * `extensions`: the public skills source and the server's marketplace registrations (extensions.ts).
 */
export function skillRoutes(workspaceDir: string, opts: { home?: string; extensions?: ExtensionsConfig } = {}): Router {
  const r = new Router();
  r.post('/skills', async (ctx) => {
    const req = parseBody(SkillsRequest, ctx.request.body);
    checkRegistrations(req.registered_marketplaces ?? [], ['body', 'registered_marketplaces']);
    if (req.project_dir) req.project_dir = inWorkspace(workspaceDir, req.project_dir);
    const { skills, sources, conflicts } = await loadAllSkills(req, { ...(opts.home !== undefined ? { home: opts.home } : {}), ...(opts.extensions ? { extensions: opts.extensions } : {}), baseDir: workspaceDir });
    const body: SkillsResponse = { skills: skills.map(skillInfo), sources, ...(conflicts.length ? { conflicts } : {}) };
    ctx.body = body;
  });
  // One store per directory: its installs run one at a time.
  const stores = new Map<string, ExtensionStore>();
  const store = () => {
    const dir = installedDir('skills', opts.home);
    let s = stores.get(dir);
    if (!s) stores.set(dir, (s = new ExtensionStore(dir, installedSkillMeta, { what: 'skill', workspaceDir })));
    return s;
  };
  installedRoutes(r, { kind: 'skills', what: 'skill', param: 'skill_name', name: SkillName, installRequest: InstallSkillRequest, store, view: installedSkillView, invalid: 'Invalid skill. Ensure the source contains a valid SKILL.md.' });
  return r;
}
