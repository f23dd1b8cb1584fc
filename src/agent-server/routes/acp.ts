// ACP agents' routes (OpenHands 1.58): model discovery before a conversation, and the live model
// switch of an ACP conversation. The agent itself is src/agent-server/acp.
import Router from '@koa/router';
import { AcpModelDiscoveryRequest, acpAgentFromSettings, SwitchAcpModelRequest } from '../../api/agent-server/index.ts';
import type { ConversationService } from '../conversation/service.ts';
import { AcpModelDiscoveryService } from '../acp/discovery.ts';
import { resolveAcpCommand } from '../acp/providers.ts';
import { validate, withConversationIdParam } from '../http/validate.ts';

export function acpRoutes(service: ConversationService, discovery = new AcpModelDiscoveryService(service.conversationsDir)): Router {
  const router = withConversationIdParam(new Router());

  router.post('/acp/models', validate({ body: AcpModelDiscoveryRequest }), async (ctx) => {
    const body = ctx.state['body'] as AcpModelDiscoveryRequest;
    const agent = acpAgentFromSettings({ ...body.agent_settings, agent_kind: 'acp' })!;
    resolveAcpCommand(agent.acp_server, agent.acp_command, ['body', 'agent_settings']);
    ctx.body = await discovery.discover(agent, service.secretValues(body.secrets ?? {}), body.refresh ?? false);
  });

  router.post('/conversations/:conversation_id/switch_acp_model', validate({ body: SwitchAcpModelRequest }), async (ctx) => {
    await service.get(ctx.params['conversation_id']!).switchAcpModel((ctx.state['body'] as SwitchAcpModelRequest).model);
    ctx.body = { success: true };
  });

  // 1.58 answers 204 once every conversation is ready for the sandbox to be paused (outside its OpenAPI document, as here).
  router.post('/conversations/prepare-for-sandbox-pause', async (ctx) => {
    await service.prepareForSandboxPause();
    ctx.status = 204;
  });

  return router;
}
