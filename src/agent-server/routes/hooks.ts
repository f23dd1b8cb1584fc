// `POST /api/hooks`: the hook configuration of a project, read from `{project_dir}/.openhands/hooks.json`
// only (as OpenHands). Null when there is no such file or it configures nothing; a file that is not
// a valid configuration is a 422 naming the file and the field (OpenHands logs it and answers null).
import Router from '@koa/router';
import { inWorkspace } from '../http/paths.ts';
import { HooksRequest, type HooksResponse } from '../../api/agent-server/hooks.ts';
import { isEmptyHookConfig, loadProjectHooks } from '../../agent/hooks/index.ts';
import { validate } from '../http/validate.ts';

/** `workspaceDir`: a relative project_dir is taken inside it, as a conversation's working dir is. */
export function hookRoutes(workspaceDir: string): Router {
  const router = new Router();
  router.post('/hooks', validate({ body: HooksRequest }), async (ctx) => {
    const { project_dir } = ctx.state['body'] as HooksRequest;
    let body: HooksResponse = { hook_config: null };
    if (project_dir) {
      const config = await loadProjectHooks(inWorkspace(workspaceDir, project_dir));
      if (config && !isEmptyHookConfig(config)) body = { hook_config: config };
    }
    ctx.body = body;
  });
  return router;
}
