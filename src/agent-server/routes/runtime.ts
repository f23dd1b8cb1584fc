// A conversation's runtime routes (OpenHands 1.58 `runtime_router.py`): the bash, file, git and
// VS Code routes again under `/api/conversations/{runtime_conversation_id}/`, scoped to that
// conversation: its working directory is where commands run by default, every `path` and
// `workspace_dir` must be inside it (links followed: a link the agent planted in the workspace
// cannot lead out), a `cwd` too, and its commands and their events are its own. A trajectory
// download names the same conversation. Plus `GET /api/conversations/{id}/runtime` (and
// `POST .../runtime/reprovision`): conversations run in this server, so their runtime is always there.
import Router from '@koa/router';
import type { Context, Next } from 'koa';
import type { ConversationRuntimeInfo } from '../../api/agent-server/runtime.ts';
import { Invalid } from '../../api/errors.ts';
import type { ConversationRuntime } from '../conversation/runtime.ts';
import type { ConversationService } from '../conversation/service.ts';
import { isInside } from '../http/paths.ts';
import { uuidIssue, withConversationIdParam } from '../http/validate.ts';
import { archiveRoutes } from './archive.ts';
import { bashRoutes, type BashScope } from './bash.ts';
import { fileBrowserRoutes } from './file-browser.ts';
import { gitHistoryRoutes } from './git-history.ts';
import { trajectoryRoutes } from './trajectory.ts';
import { uploadRoutes } from './upload.ts';
import { vscodeRoutes } from './vscode.ts';
import { workspaceRoutes } from './workspace.ts';
import { normalizeConversationId } from '../conversation/service.ts';

export interface RuntimeRouteDeps {
  service: ConversationService;
  /** The conversation's own one-shot commands. */
  bash(rt: ConversationRuntime): BashScope;
}

const runtimeOf = (ctx: Context) => ctx.state['runtime'] as ConversationRuntime;

/** Query (and path) parameters naming a place in the workspace, as OpenHands checks them. */
const CONFINED = ['path', 'workspace_dir'] as const;

/** The runtime routes' own part of a path (the router's middleware sees every path under its prefix). */
const RUNTIME_PATH = /\/conversations\/[^/]+\/(bash|file|git|vscode)\//;

async function bindConversation(service: ConversationService, ctx: Context, next: Next): Promise<void> {
  if (!RUNTIME_PATH.test(ctx.path)) return next();
  const raw = ctx.params['runtime_conversation_id'] ?? '';
  const bad = uuidIssue(raw, ['path', 'runtime_conversation_id']);
  if (bad) throw bad;
  const rt = service.get(raw);
  ctx.state['runtime'] = rt;
  for (const name of CONFINED) {
    const value = ctx.query[name];
    const given = Array.isArray(value) ? value[value.length - 1] : value;
    if (given === undefined) continue;
    if (!given.startsWith('/') || !(await isInside(rt.workspaceDir, given))) {
      throw new Invalid([{ loc: ['query', name], msg: `${name} must be inside the conversation workspace`, type: 'value_error' }]);
    }
  }
  // (The router's middleware does not get the routes' own path parameters: read from the path.)
  const trajectory = /\/file\/download-trajectory\/([^/]+)$/.exec(ctx.path)?.[1];
  const named = trajectory === undefined ? undefined : normalizeConversationId(decodeURIComponent(trajectory));
  if (named !== undefined && named !== rt.conversationId) {
    throw new Invalid([{ loc: ['path', 'conversation_id'], msg: 'Trajectory must belong to the selected conversation', type: 'value_error' }]);
  }
  await next();
}

export function runtimeRoutes(d: RuntimeRouteDeps): Router {
  const r = new Router({ prefix: '/conversations/:runtime_conversation_id' });
  r.use((ctx, next) => bindConversation(d.service, ctx, next));
  const scoped = [
    bashRoutes((ctx) => d.bash(runtimeOf(ctx))),
    uploadRoutes({ legacy: false }),
    workspaceRoutes({ legacy: false }),
    fileBrowserRoutes('', { discovery: false }),
    trajectoryRoutes(d.service),
    archiveRoutes(),
    gitHistoryRoutes(),
    vscodeRoutes(),
  ];
  for (const sub of scoped) r.use(sub.routes(), sub.allowedMethods());
  return r;
}

/** GET /api/conversations/{id}/runtime and POST .../runtime/reprovision (nothing to provision: the same answer). */
export function runtimeInfoRoutes(service: ConversationService): Router {
  const r = withConversationIdParam(new Router({ prefix: '/conversations/:conversation_id/runtime' }));
  const info = (ctx: Context) => {
    service.get(ctx.params['conversation_id']!);
    const body: ConversationRuntimeInfo = { runtime_status: 'available', can_resume: true, runtime_error: null };
    ctx.body = body;
  };
  r.get('/', info);
  r.post('/reprovision', info);
  return r;
}
