// The ChatGPT subscription's addresses of `agentyard up` reach its sandboxes (issue 14 leftovers):
// an operator who puts a proxy in front of OpenAI sets OH_OPENAI_AUTH_ISSUER and
// OH_OPENAI_CODEX_BASE_URL on the service, and a sandbox's agent server signs in and calls its models
// there. Through the real interfaces: `agentyard up`, the sandbox's agent server over HTTP, the
// stand-in of OpenAI's sign-in and Codex endpoints on the host's loopback.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAiSubscriptionStandIn, type OpenAiSubscriptionStandIn } from '../../src/testing/openai-subscription/server.ts';
import { startReady } from './flows.ts';
import { eventually, startServiceWithModel, type ServiceWithModel } from './harness.ts';

describe('subscription addresses in `agentyard up`', () => {
  let openai: OpenAiSubscriptionStandIn;
  let svc: ServiceWithModel;
  let agent: { url: string; key: string };
  const call = async (path: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const res = await fetch(agent.url + path, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { 'X-Session-API-Key': agent.key, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: await res.json() };
  };

  beforeAll(async () => {
    openai = await startOpenAiSubscriptionStandIn();
    // A sandbox with a network of its own reaches the host's loopback only on listed ports: the proxy's.
    svc = await startServiceWithModel({ env: { OH_OPENAI_AUTH_ISSUER: openai.issuer, OH_OPENAI_CODEX_BASE_URL: openai.codexBaseUrl, AGENTYARD_SANDBOX_HOST_PORTS: new URL(openai.issuer).port } });
    const task = await startReady(svc.svc, {});
    const { body } = await svc.svc.api<{ session_api_key: string; exposed_urls: { name: string; url: string }[] }[]>('GET', `/api/v1/sandboxes?id=${task.sandbox_id}`);
    agent = { url: body[0]!.exposed_urls.find((u) => u.name === 'AGENT_SERVER')!.url, key: body[0]!.session_api_key };
  }, 120_000);

  afterAll(async () => {
    await svc?.stop();
    await openai?.close();
  });

  it("signs the sandbox's agent server in at the configured issuer and sends its model calls to the configured Codex endpoint", async () => {
    const started = await call('/api/llm/subscription/openai/device/start', {});
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    // The user is sent to the proxy's verification page, and the device code came from the stand-in.
    expect(started.body.verification_uri).toBe(`${openai.issuer}/codex/device`);
    expect(openai.authRequests.map((r) => r.path)).toEqual(['/api/accounts/deviceauth/usercode']);
    openai.approve(started.body.user_code);
    const polled = await call('/api/llm/subscription/openai/device/poll', { device_code: started.body.device_code });
    expect(polled.status, JSON.stringify(polled.body)).toBe(200);
    expect((await call('/api/llm/subscription/openai/status')).body).toMatchObject({ connected: true, account_email: 'user@example.test' });

    // A conversation on the subscription: its model call reaches the Codex endpoint the service named.
    openai.push({ toolCalls: [{ name: 'finish', arguments: { message: 'done through the proxy' } }] });
    const existing = (await call('/api/conversations/search')).body.items[0];
    const created = await call('/api/conversations', {
      workspace: existing.workspace,
      agent: { llm: { model: 'openai/gpt-5.5', auth_type: 'subscription', subscription_vendor: 'openai' }, tools: [] },
      initial_message: { role: 'user', content: [{ type: 'text', text: 'hello' }], run: true },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await eventually(async () => ((await call(`/api/conversations/${created.body.id}`)).body.execution_status === 'finished' ? true : undefined), 'the subscription conversation to finish', 30_000);
    expect(openai.refused).toEqual([]);
    expect(openai.requests).toHaveLength(1);
    expect(openai.requests[0]!.headers['authorization']).toBe(`Bearer ${openai.issued[0]}`);
    // The service's own scripted model saw none of it.
    expect(svc.llm.requests).toHaveLength(0);
  });
});
