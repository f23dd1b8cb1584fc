// GET /api/file/download-trajectory/{conversation_id}: the conversation's trajectory as a zip, named
// and typed as OpenHands serves it (`<id hex>.zip`, application/octet-stream); 404 for an unknown id.
import Router from '@koa/router';
import type { ConversationService } from '../conversation/service.ts';
import { trajectoryZip } from '../conversation/trajectory.ts';
import { withConversationIdParam } from '../http/validate.ts';

export function trajectoryRoutes(service: ConversationService): Router {
  const r = withConversationIdParam(new Router());
  r.get('/file/download-trajectory/:conversation_id', (ctx) => {
    const rt = service.get(ctx.params['conversation_id']!);
    ctx.attachment(`${rt.conversationId.replaceAll('-', '')}.zip`);
    ctx.type = 'application/octet-stream';
    ctx.body = Buffer.from(trajectoryZip(rt));
  });
  return r;
}
