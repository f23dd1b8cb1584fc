// The critic in the agent loop (agent.critic) against the scripted classification endpoint: every
// action scored in all_actions mode, a failed evaluation recorded without a result (the run goes
// on), and a configuration it cannot use (no key) ending the run with a ConversationErrorEvent.
import { afterEach, describe, expect, it } from 'vitest';
import { setupHost, type HostSetup } from '../test-host.ts';
import { CRITIC_LABELS } from './critic.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
const setup = (opts: HostSetup = {}) => setupHost(opts, (fn) => cleanups.push(fn));
const probs = (success: number) => CRITIC_LABELS.map((l) => (l === 'success' ? success : 0.05));

describe('the critic in the agent loop', () => {
  it('scores every action in all_actions mode; a failed evaluation leaves the action without a result', async () => {
    const t = await setup();
    t.host.request.agent!.critic = { kind: 'APIBasedCritic', server_url: t.llm.url.replace(/\/v1$/, '/vllm'), mode: 'all_actions' };
    t.say('go');
    t.llm.pushClassification(probs(0.4), { status: 500 }, probs(0.8));
    t.llm.push({ toolCalls: [{ name: 'think', arguments: { thought: 'one' } }] }, { toolCalls: [{ name: 'think', arguments: { thought: 'two' } }] }, { toolCalls: [{ name: 'finish', arguments: { message: 'done' } }] });
    await t.run();
    expect(t.status()).toBe('finished');
    expect(t.of('ActionEvent').map((a) => a.critic_result?.score ?? null)).toEqual([0.4, null, 0.8]);
    expect(t.llm.classifications.map((c) => [c.model, c.headers['authorization']])).toEqual(Array(3).fill(['critic', 'Bearer sk-test']));
    // Each evaluation reads the conversation up to the action it scores.
    const results = t.llm.classifications.map((c) => c.input.split('<tool_response>').length - 1);
    expect(results.map((n) => n - results[0]!)).toEqual([0, 1, 2]);
  });

  it('refuses a critic it cannot use: the run ends with CriticConfigError, no model call', async () => {
    const t = await setup({ llm: { apiKey: undefined } });
    t.host.request.agent!.critic = { server_url: 'http://127.0.0.1:9/vllm' };
    t.say('go');
    await t.run();
    expect(t.of('ConversationErrorEvent').at(-1)).toMatchObject({ code: 'CriticConfigError' });
    expect(t.llm.requests).toHaveLength(0);
  });
});
