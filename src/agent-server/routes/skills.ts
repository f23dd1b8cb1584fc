// POST /api/skills: the skills a workspace would load, with counts per source (OpenHands
// skills_router.py). The other /api/skills routes (sync, install, marketplace) answer 501.
import Router from '@koa/router';
import { inWorkspace } from '../http/paths.ts';
import { NotImplemented } from '../../api/errors.ts';
import { parseBody } from '../../api/agent-server/parse.ts';
import { SkillsRequest, type SkillsResponse } from '../../api/agent-server/skills.ts';
import { loadAllSkills } from '../../agent/skills/sources.ts';
import { skillInfo } from '../../agent/skills/types.ts';
import type { ExtensionsConfig } from '../../agent/skills/extensions-repo.ts';
import { checkRegistrations } from './extensions.ts';

/**
 * `workspaceDir`: the server's workspace root; a relative project_dir is taken inside it, as conversations' working dirs are.
 * `extensions`: the public skills source and the server's marketplace registrations (extensions.ts).
 */
export function skillRoutes(workspaceDir: string, extensions?: ExtensionsConfig): Router {
  const r = new Router();
  r.post('/skills', async (ctx) => {
    const req = parseBody(SkillsRequest, ctx.request.body);
    checkRegistrations(req.registered_marketplaces ?? [], ['body', 'registered_marketplaces']);
    if (req.project_dir) req.project_dir = inWorkspace(workspaceDir, req.project_dir);
    const { skills, sources, conflicts } = await loadAllSkills(req, { ...(extensions ? { extensions } : {}), baseDir: workspaceDir });
    const body: SkillsResponse = { skills: skills.map(skillInfo), sources, ...(conflicts.length ? { conflicts } : {}) };
    ctx.body = body;
  });
  r.all('/skills/*rest', async () => {
    throw new NotImplemented('Skill sync, installation and marketplaces are not implemented by this agent server yet');
  });
  return r;
}
