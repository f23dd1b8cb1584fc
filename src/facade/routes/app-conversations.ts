// /api/v1/app-conversations: start, start tasks, records, search and count, send-message.
import Router from '@koa/router';
import { input, userOf, type Facade } from '../context.ts';
import { sendMessage } from '../messages.ts';
import {
  filterConversations,
  batchConversations,
  batchStartTasks,
  countConversations,
  countStartTasks,
  searchConversations,
  searchStartTasks,
} from '../queries.ts';
import {
  AppConfirmationPolicyRequest,
  AppConfirmationResponse,
  AppForkRequest,
  AppConversationStartRequest,
  AppConversationUpdateRequest,
  AppSendMessageRequest,
  ConversationChangesQuery,
  ConversationCountQuery,
  ConversationSearchQuery,
  IdsQuery,
  SEND_MESSAGE_BODY_LIMIT_BYTES,
  START_BODY_LIMIT_BYTES,
  StartTaskCountQuery,
  StartTaskSearchQuery,
  WorkspaceFileQuery,
  WorkspaceFilesQuery,
  WorkspaceGitQuery,
} from '../../api/app/requests.ts';
import { deleteConversation, downloadConversation, refuseFixedAtStart, updateConversation } from '../conversation-admin.ts';
import { respondToConfirmation, setConfirmationPolicy } from '../confirmation.ts';
import { forkConversation } from '../fork.ts';
import { startConversation } from '../start.ts';
import { streamStartTask } from '../stream-start.ts';
import { conversationChanges } from '../conversation-changes.ts';
import { credentialsHold } from '../auth.ts';
import { sessionPolicy } from '../login/routes.ts';
import { listWorkspaceFiles, readWorkspaceFile, workspaceGit } from '../workspace.ts';
import { jsonBody } from '../body.ts';
import { validate } from '../validate.ts';

export function appConversationRoutes(facade: Facade): Router {
  const { d, activity } = facade;
  const r = new Router({ prefix: '/app-conversations' });

  r.post('/', validate({ body: AppConversationStartRequest, bodyLimitBytes: START_BODY_LIMIT_BYTES }), async (ctx) => {
    ctx.body = await startConversation(d, userOf(ctx), input<unknown, AppConversationStartRequest>(ctx).body);
  });

  r.post('/stream-start', validate({ body: AppConversationStartRequest, bodyLimitBytes: START_BODY_LIMIT_BYTES }), async (ctx) => {
    const user = userOf(ctx);
    const first = await startConversation(d, user, input<unknown, AppConversationStartRequest>(ctx).body);
    ctx.type = 'application/json';
    // Koa destroys the stream when the client goes away, which stops the watch behind it.
    ctx.body = streamStartTask(d, user, first);
  });

  r.get('/', validate({ query: IdsQuery }), async (ctx) => {
    ctx.body = await batchConversations(d, userOf(ctx), input<IdsQuery>(ctx).query.ids);
  });

  r.get('/search', validate({ query: ConversationSearchQuery }), async (ctx) => {
    ctx.body = await searchConversations(d, userOf(ctx), input<ConversationSearchQuery>(ctx).query);
  });

  // Server-Sent Events (conversation-changes.ts). Koa destroys the stream when the client goes away, which stops its watches.
  const oidc = facade.oidc;
  const policy = oidc ? () => sessionPolicy(oidc) : undefined;
  r.get('/changes', validate({ query: ConversationChangesQuery }), async (ctx) => {
    const q = input<ConversationChangesQuery>(ctx).query;
    // The filters' own checks (a malformed time is a 422) before the stream's headers go out.
    await filterConversations(d, [], q);
    ctx.req.socket.setTimeout(0);
    ctx.req.socket.setNoDelay(true);
    ctx.set('Cache-Control', 'no-cache, no-transform');
    ctx.set('X-Accel-Buffering', 'no'); // nginx (the chart's ingress): pass each event on at once
    ctx.type = 'text/event-stream';
    ctx.body = conversationChanges(d, userOf(ctx), q, ctx.get('last-event-id') || q.after, { authorized: () => credentialsHold(ctx, d.db, policy) });
  });

  r.get('/count', validate({ query: ConversationCountQuery }), async (ctx) => {
    ctx.body = await countConversations(d, userOf(ctx), input<ConversationCountQuery>(ctx).query);
  });

  r.get('/start-tasks', validate({ query: IdsQuery }), async (ctx) => {
    ctx.body = await batchStartTasks(d, userOf(ctx), input<IdsQuery>(ctx).query.ids);
  });

  r.get('/start-tasks/search', validate({ query: StartTaskSearchQuery }), async (ctx) => {
    ctx.body = await searchStartTasks(d, userOf(ctx), input<StartTaskSearchQuery>(ctx).query);
  });

  r.get('/start-tasks/count', validate({ query: StartTaskCountQuery }), async (ctx) => {
    ctx.body = await countStartTasks(d, userOf(ctx), input<StartTaskCountQuery>(ctx).query);
  });

  r.post('/:conversation_id/send-message', validate({ body: AppSendMessageRequest, bodyLimitBytes: SEND_MESSAGE_BODY_LIMIT_BYTES }), async (ctx) => {
    const body = input<unknown, AppSendMessageRequest>(ctx).body;
    ctx.body = await sendMessage(d, activity, userOf(ctx), ctx.params['conversation_id']!, body);
  });

  const fixedAtStart = async (ctx: { request: { body?: unknown } }, next: () => Promise<unknown>) => {
    refuseFixedAtStart(ctx.request.body);
    await next();
  };
  r.patch('/:conversation_id', jsonBody(), fixedAtStart, validate({ body: AppConversationUpdateRequest }), async (ctx) => {
    ctx.body = await updateConversation(d, userOf(ctx), ctx.params['conversation_id']!, input<unknown, AppConversationUpdateRequest>(ctx).body);
  });

  r.delete('/:conversation_id', async (ctx) => {
    ctx.body = await deleteConversation(d, userOf(ctx), ctx.params['conversation_id']!);
  });

  r.get('/:conversation_id/download', async (ctx) => {
    const { filename, body } = await downloadConversation(d, userOf(ctx), ctx.params['conversation_id']!);
    ctx.type = 'application/zip';
    ctx.attachment(filename);
    ctx.body = body;
  });

  r.post('/:conversation_id/fork', validate({ body: AppForkRequest }), async (ctx) => {
    ctx.body = await forkConversation(d, userOf(ctx), ctx.params['conversation_id']!, input<unknown, AppForkRequest>(ctx).body);
  });

  r.post('/:conversation_id/confirmation-policy', validate({ body: AppConfirmationPolicyRequest }), async (ctx) => {
    ctx.body = await setConfirmationPolicy(d, userOf(ctx), ctx.params['conversation_id']!, input<unknown, AppConfirmationPolicyRequest>(ctx).body.policy);
  });

  r.post('/:conversation_id/respond-to-confirmation', validate({ body: AppConfirmationResponse }), async (ctx) => {
    ctx.body = await respondToConfirmation(d, userOf(ctx), ctx.params['conversation_id']!, input<unknown, AppConfirmationResponse>(ctx).body);
  });

  r.get('/:conversation_id/file', validate({ query: WorkspaceFileQuery }), async (ctx) => {
    ctx.body = JSON.stringify(await readWorkspaceFile(d, userOf(ctx), ctx.params['conversation_id']!, input<WorkspaceFileQuery>(ctx).query.file_path));
    ctx.type = 'application/json';
  });

  r.get('/:conversation_id/files', validate({ query: WorkspaceFilesQuery }), async (ctx) => {
    ctx.body = await listWorkspaceFiles(d, userOf(ctx), ctx.params['conversation_id']!, input<WorkspaceFilesQuery>(ctx).query.path);
  });

  for (const what of ['changes', 'diff'] as const) {
    r.get(`/:conversation_id/git/${what}`, validate({ query: WorkspaceGitQuery }), async (ctx) => {
      const { path, ref } = input<WorkspaceGitQuery>(ctx).query;
      ctx.body = await workspaceGit(d, userOf(ctx), ctx.params['conversation_id']!, what, path, ref);
    });
  }

  return r;
}
