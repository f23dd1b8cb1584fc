// ACP agents' routes (OpenHands 1.58): model discovery before a conversation, and the live model
// switch of an ACP conversation. The agent itself is src/agent-server/acp.
import Router from '@koa/router';
import { AcpModelDiscoveryRequest, acpAgentFromSettings, CredentialBindingActivation, SwitchAcpModelRequest } from '../../api/agent-server/index.ts';
import { BadGateway, Conflict, Forbidden, Invalid, NotFound, NotImplemented } from '../../api/errors.ts';
import { CredentialBindingError, HttpCredentialBinding, supportsCredentialBinding } from '../acp/credential-binding.ts';
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
    ctx.body = await discovery.discover(agent, await service.secretValues(body.secrets ?? {}), body.refresh ?? false);
  });

  router.post('/conversations/:conversation_id/switch_acp_model', validate({ body: SwitchAcpModelRequest }), async (ctx) => {
    await service.get(ctx.params['conversation_id']!).switchAcpModel((ctx.state['body'] as SwitchAcpModelRequest).model);
    ctx.body = { success: true };
  });

  // 1.58: the body first (422), then whether the name can be bound at all (404), then the source is
  // asked for the credential (its answer mapped to 403/409/422/501/502), then the conversation takes it.
  router.put('/conversations/:conversation_id/credential-bindings/:secret_name', validate({ body: CredentialBindingActivation }), async (ctx) => {
    const name = ctx.params['secret_name']!;
    if (!supportsCredentialBinding(name)) throw new NotFound('Not Found');
    const body = ctx.state['body'] as CredentialBindingActivation;
    const binding = new HttpCredentialBinding(body.url, body.headers ?? {});
    const rt = service.get(ctx.params['conversation_id']!);
    try {
      await binding.probe((ms) => new Promise((r) => setTimeout(r, ms)));
      rt.activateCredentialBinding(name, binding);
    } catch (e) {
      if (e instanceof CredentialBindingError) throw bindingError(e);
      throw e;
    }
    ctx.status = 204;
  });

  // 1.58 answers 204 once every conversation is ready for the sandbox to be paused (outside its OpenAPI document, as here).
  router.post('/conversations/prepare-for-sandbox-pause', async (ctx) => {
    await service.prepareForSandboxPause();
    ctx.status = 204;
  });

  return router;
}

/** 1.58's statuses for a source's answer; its 422 names the field here (the project's 422s carry paths). */
function bindingError(e: CredentialBindingError): Error {
  switch (e.status) {
    case 403:
      return new Forbidden(e.message);
    case 409:
      return new Conflict(e.message);
    case 422:
      return new Invalid([{ loc: ['body', 'url'], msg: e.message, type: 'value_error' }]);
    case 501:
      return new NotImplemented(e.message);
    default:
      return new BadGateway(e.message);
  }
}
