// POST /api/sub-agents: the agent definitions a workspace has (OpenHands sub_agents_router.py),
// project over user, first wins by name. Read-only: nothing is registered anywhere.
import Router from '@koa/router';
import { inWorkspace } from '../http/paths.ts';
import { parseBody } from '../../api/agent-server/parse.ts';
import { SubAgentsRequest, type SubAgentsResponse } from '../../api/agent-server/sub-agents.ts';
import { BUILTIN_AGENTS, discoverAgents, subAgentInfo } from '../../agent/subagent-definitions.ts';

/** `workspaceDir`: the server's workspace root; a relative project_dir is taken inside it. */
export function subAgentRoutes(workspaceDir: string): Router {
  const r = new Router();
  r.post('/sub-agents', async (ctx) => {
    const req = parseBody(SubAgentsRequest, ctx.request.body);
    const projectDir = req.project_dir ? inWorkspace(workspaceDir, req.project_dir) : null;
    // project > user > builtin, first wins by name.
    const found = [...discoverAgents(projectDir, { project: req.load_project !== false, user: req.load_user !== false }), ...(req.load_builtin !== false ? BUILTIN_AGENTS : [])];
    const seen = new Set<string>();
    const body: SubAgentsResponse = { agents: found.filter((a) => !seen.has(a.name) && (seen.add(a.name), true)).map(subAgentInfo) };
    ctx.body = body;
  });
  return r;
}
