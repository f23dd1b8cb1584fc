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
    t.llm.pushClassification(probs(0.4), { status: 503 }, probs(0.8));
    t.llm.push({ toolCalls: [{ name: 'think', arguments: { thought: 'one' } }] }, { toolCalls: [{ name: 'think', arguments: { thought: 'two' } }] }, { toolCalls: [{ name: 'finish', arguments: { message: 'finish-marker' } }] });
    await t.run();
    expect(t.status()).toBe('finished');
    expect(t.of('ActionEvent').map((a) => a.critic_result?.score ?? null)).toEqual([0.4, null, 0.8]);
    expect(t.llm.classifications.map((c) => [c.model, c.headers['authorization']])).toEqual(Array(3).fill(['critic', 'Bearer sk-test']));
    // Each evaluation reads the conversation up to the action it scores, without that action (not
    // answered yet, as 1.58's view leaves it out).
    const results = t.llm.classifications.map((c) => c.input.split('<tool_response>').length - 1);
    expect(results).toEqual([0, 1, 2]);
    expect(t.llm.classifications.map((c) => c.input.includes('finish-marker'))).toEqual([false, false, false]);
    const ids = t.of('ActionEvent').map((a) => a.critic_result?.metadata?.['event_ids'] as string[] | undefined);
    expect(ids[0]).not.toContain(t.of('ActionEvent')[0]!.id);
  });

  it('scores a plain answer in finish_and_message mode (not in all_actions), with its own key', async () => {
    const t = await setup();
    t.host.request.agent!.critic = { kind: 'APIBasedCritic', server_url: t.llm.url.replace(/\/v1$/, '/vllm'), api_key: 'sk-critic' };
    t.say('hi');
    t.llm.pushClassification(probs(0.7));
    t.llm.push({ content: 'Hello there.' });
    await t.run();
    const answer = t.of('MessageEvent').at(-1)!;
    expect(answer.source).toBe('agent');
    expect(answer.critic_result?.score).toBe(0.7);
    expect(answer.critic_result?.metadata?.['event_ids']).toContain(answer.id);
    expect(t.llm.classifications.map((c) => [c.headers['authorization'], c.input.endsWith('<|im_start|>assistant\nHello there.<|im_end|>\n')])).toEqual([['Bearer sk-critic', true]]);
  });

  it('refuses a critic it cannot use: the run ends with CriticConfigError, no model call', async () => {
    const t = await setup({ llm: { apiKey: undefined } });
    // No api_key of its own, and the agent LLM has none to lend.
    t.host.request.agent!.critic = { server_url: 'http://127.0.0.1:9/vllm' };
    t.say('go');
    await t.run();
    expect(t.of('ConversationErrorEvent').at(-1)).toMatchObject({ code: 'CriticConfigError' });
    expect(t.llm.requests).toHaveLength(0);
  });
});
