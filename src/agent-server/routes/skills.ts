// POST /api/skills: the skills a workspace would load, with counts per source (OpenHands
// skills_router.py). The other /api/skills routes (sync, install, marketplace) answer 501.
import Router from '@koa/router';
import { isAbsolute } from 'node:path';
import { Invalid, NotImplemented } from '../../api/errors.ts';
import { parseBody } from '../../api/agent-server/parse.ts';
import { SkillsRequest, type SkillsResponse } from '../../api/agent-server/skills.ts';
import { loadAllSkills } from '../../agent/skills/sources.ts';
import { skillInfo } from '../../agent/skills/types.ts';

export function skillRoutes(): Router {
  const r = new Router();
  r.post('/skills', async (ctx) => {
    const req = parseBody(SkillsRequest, ctx.request.body);
    if (req.project_dir && !isAbsolute(req.project_dir)) {
      throw new Invalid([{ loc: ['body', 'project_dir'], msg: `project_dir must be an absolute path, got '${req.project_dir}'`, type: 'value_error' }]);
    }
    const { skills, sources } = await loadAllSkills(req);
    const body: SkillsResponse = { skills: skills.map(skillInfo), sources };
    ctx.body = body;
  });
  r.all('/skills/*rest', async () => {
    throw new NotImplemented('Skill sync, installation and marketplaces are not implemented by this agent server yet');
  });
  return r;
}
