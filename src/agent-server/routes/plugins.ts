// POST /api/plugins: the plugins a workspace has on disk (user and project plugin directories), as
// OpenHands' plugins_router.py lists them. Installation and marketplace routes answer 501.
import Router from '@koa/router';
import { inWorkspace } from '../http/paths.ts';
import { NotImplemented } from '../../api/errors.ts';
import { PluginsRequest, type PluginsResponse } from '../../api/agent-server/plugins.ts';
import { availablePlugins, pluginInfo } from '../../agent/plugins/index.ts';
import { validate } from '../http/validate.ts';

/** `workspaceDir`: a relative project_dir is taken inside it; `home`: where user plugins live (tests). */
export function pluginRoutes(workspaceDir: string, opts: { home?: string } = {}): Router {
  const router = new Router();
  router.post('/plugins', validate({ body: PluginsRequest }), async (ctx) => {
    const req = ctx.state['body'] as PluginsRequest;
    const projectDir = req.project_dir ? inWorkspace(workspaceDir, req.project_dir) : null;
    const plugins = availablePlugins({ loadUser: req.load_user !== false, loadProject: req.load_project !== false, projectDir, ...(opts.home ? { home: opts.home } : {}) });
    const body: PluginsResponse = { plugins: plugins.map(pluginInfo) };
    ctx.body = body;
  });
  router.all('/plugins/*rest', async () => {
    throw new NotImplemented('Plugin installation and the plugin marketplace are not implemented by this agent server yet; attach plugins to a conversation with the start request plugins');
  });
  return router;
}
