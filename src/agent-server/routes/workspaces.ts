// /api/workspaces: the local directories the GUI offers in its workspace picker, kept by the agent
// server so every client of it sees the same list (OpenHands 1.58's workspaces_router.py). Adding
// is idempotent (deduplicated by path); removing names the path.
import Router from '@koa/router';
import { NotFound } from '../../api/errors.ts';
import { AddWorkspaceParentsRequest, AddWorkspacesRequest, WorkspacePathQuery } from '../../api/agent-server/settings.ts';
import type { Static } from 'typebox';
import type { WorkspacesStore } from '../store/settings-store.ts';
import { validate } from '../http/validate.ts';

export function workspacesRoutes(store: WorkspacesStore): Router {
  const router = new Router();
  router.get('/workspaces', async (ctx) => {
    ctx.body = store.load();
  });
  router.post('/workspaces', validate({ body: AddWorkspacesRequest }), async (ctx) => {
    ctx.body = store.addWorkspaces((ctx.state['body'] as Static<typeof AddWorkspacesRequest>).workspaces);
  });
  router.delete('/workspaces', validate({ query: WorkspacePathQuery }), async (ctx) => {
    if (!store.removeWorkspace((ctx.state['query'] as Static<typeof WorkspacePathQuery>).path)) throw new NotFound('Workspace not found');
    ctx.body = { deleted: true };
  });
  router.post('/workspaces/parents', validate({ body: AddWorkspaceParentsRequest }), async (ctx) => {
    ctx.body = store.addParents((ctx.state['body'] as Static<typeof AddWorkspaceParentsRequest>).parents);
  });
  router.delete('/workspaces/parents', validate({ query: WorkspacePathQuery }), async (ctx) => {
    if (!store.removeParent((ctx.state['query'] as Static<typeof WorkspacePathQuery>).path)) throw new NotFound('Workspace parent not found');
    ctx.body = { deleted: true };
  });
  return router;
}
