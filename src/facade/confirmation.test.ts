// Confirmation mode through the app API against a real agent server: the policy reaches the
// conversation there, a bad one is a 422 at its field, another user's conversation is 404, and an
// answer is passed on (approve/reject of a waiting action: e2e/embedded/web-app.test.ts).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startWorkspaceHarness, type WorkspaceHarness } from './test-support.ts';

describe('confirmation mode through the app API', () => {
  let h: WorkspaceHarness;
  beforeEach(async () => {
    h = await startWorkspaceHarness();
  });
  afterEach(() => h.close());

  const policyOnAgent = async (id: string) => {
    const res = await fetch(`${h.agent.url}/api/conversations/${id}`, { headers: { 'x-session-api-key': 'sk-1' } });
    return ((await res.json()) as { confirmation_policy: unknown }).confirmation_policy;
  };

  it('sets the policy on the agent server', async () => {
    const id = await h.conversation(h.workspace);
    expect(await h.call('POST', `/api/v1/app-conversations/${id}/confirmation-policy`, { body: { policy: { kind: 'AlwaysConfirm' } } })).toMatchObject({ status: 200, body: { success: true } });
    expect(await policyOnAgent(id)).toMatchObject({ kind: 'AlwaysConfirm' });
    await h.call('POST', `/api/v1/app-conversations/${id}/confirmation-policy`, { body: { policy: { kind: 'ConfirmRisky', threshold: 'MEDIUM' } } });
    expect(await policyOnAgent(id)).toMatchObject({ kind: 'ConfirmRisky', threshold: 'MEDIUM' });
  });

  it('refuses a bad policy or answer at its field, and another user', async () => {
    const id = await h.conversation(h.workspace);
    const bad = await h.call('POST', `/api/v1/app-conversations/${id}/confirmation-policy`, { body: { policy: { kind: 'Sometimes' } } });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc.slice(0, 2)).toEqual(['body', 'policy']);
    const answer = await h.call('POST', `/api/v1/app-conversations/${id}/respond-to-confirmation`, { body: { accept: 'yes' } });
    expect(answer.status).toBe(422);
    expect(answer.body.detail[0].loc).toEqual(['body', 'accept']);
    expect((await h.call('POST', `/api/v1/app-conversations/${id}/confirmation-policy`, { key: h.bob.key, body: { policy: { kind: 'AlwaysConfirm' } } })).status).toBe(404);
    expect((await h.call('POST', `/api/v1/app-conversations/${id}/respond-to-confirmation`, { key: h.bob.key, body: { accept: true } })).status).toBe(404);
  });

  it('passes an answer on to the agent server (with nothing waiting it changes nothing)', async () => {
    const id = await h.conversation(h.workspace);
    expect(await h.call('POST', `/api/v1/app-conversations/${id}/respond-to-confirmation`, { body: { accept: false, reason: 'not now' } })).toMatchObject({ status: 200, body: { success: true } });
    const info = await fetch(`${h.agent.url}/api/conversations/${id}`, { headers: { 'x-session-api-key': 'sk-1' } });
    expect(((await info.json()) as { execution_status: string }).execution_status).toBe('idle');
  });
});
