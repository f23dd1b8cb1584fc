// The critic's pieces: which `agent.critic` it takes and refuses, the conversation rendered as the
// critic model reads it (tool results grouped in one user turn), the refinement decision and count.
import { describe, expect, it } from 'vitest';
import { startScriptedLlm } from '../../testing/scripted-llm/server.ts';
import { CRITIC_LABELS, criticConfig, CriticConfigError, evaluate, followupPrompt, refinementsSoFar, renderCriticInput, shouldRefine } from './critic.ts';

describe('the critic', () => {
  it('reads agent.critic, refusing what it cannot use', () => {
    expect(criticConfig(null)).toBeUndefined();
    expect(criticConfig({ kind: 'APIBasedCritic', server_url: 'http://c.example/vllm/', mode: 'all_actions', iterative_refinement: { success_threshold: 0.7, max_iterations: 2 } })).toEqual({
      serverUrl: 'http://c.example/vllm', modelName: 'critic', mode: 'all_actions', refinement: { threshold: 0.7, maxIterations: 2 }, issueThreshold: 0.75, timeoutMs: 300_000,
    });
    expect(criticConfig({ server_url: 'http://c.example', api_key: 'sk-x' })?.apiKey).toBe('sk-x');
    expect(() => criticConfig({ server_url: 'http://c.example', api_key: 7 })).toThrow(/api_key/);
    expect(() => criticConfig({ kind: 'AgentFinishedCritic', server_url: 'http://c.example' })).toThrow(/not supported/);
    expect(() => criticConfig({})).toThrow(/server_url/);
    expect(() => criticConfig({ server_url: 'http://c.example', mode: 'sometimes' })).toThrow(/mode/);
    expect(() => criticConfig({ server_url: 'http://c.example', iterative_refinement: { max_iterations: 0 } })).toThrow(/max_iterations/);
    // Located at the field, as 1.58's 422 names it.
    const loc = (raw: Record<string, unknown>) => { try { criticConfig(raw); } catch (err) { return (err as CriticConfigError).loc; } };
    expect(loc({ server_url: 'http://c.example', mode: 'sometimes' })).toEqual(['mode']);
    expect(loc({ server_url: 'http://c.example', iterative_refinement: { success_threshold: 2 } })).toEqual(['iterative_refinement', 'success_threshold']);
  });

  it('renders the conversation as ChatML: tools in the system turn, consecutive tool results in one user turn', () => {
    const text = renderCriticInput(
      [
        { role: 'system', content: 'SYS' },
        { role: 'user', content: [{ type: 'text', text: 'do it' }] },
        { role: 'assistant', content: 'on it', tool_calls: [{ id: 'a', type: 'function', function: { name: 't', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'a', content: 'out-1' },
        { role: 'tool', tool_call_id: 'b', content: 'out-2' },
      ],
      [{ type: 'function', function: { name: 't', description: 'a tool', parameters: { type: 'object' } } }],
    );
    expect(text).toBe(
      '<|im_start|>system\nSYS\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>\n' +
        '{"type": "function", "function": {"name": "t", "description": "a tool", "parameters": {"type": "object"}}}\n</tools>\n\n' +
        'For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n' +
        '<|im_start|>user\ndo it<|im_end|>\n<|im_start|>assistant\non it<|im_end|>\n<|im_start|>user\n<tool_response>\nout-1\n</tool_response>\n<tool_response>\nout-2\n</tool_response><|im_end|>\n',
    );
  });

  it('refines below the threshold or on a likely agent issue, and counts the follow-ups it sent', () => {
    const cfg = criticConfig({ server_url: 'http://c.example', iterative_refinement: { success_threshold: 0.6 } })!;
    const issues = (p: number) => ({ categorized_features: { agent_behavioral_issues: [{ name: 'loop_behavior', display_name: 'Loop Behavior', probability: p }] } });
    expect(shouldRefine(cfg, { score: 0.5, message: null, metadata: null })).toBe(true);
    expect(shouldRefine(cfg, { score: 0.9, message: null, metadata: issues(0.8) })).toBe(true);
    expect(shouldRefine(cfg, { score: 0.9, message: null, metadata: issues(0.5) })).toBe(false);
    expect(shouldRefine(criticConfig({ server_url: 'http://c.example' })!, { score: 0.1, message: null, metadata: null })).toBe(false);
    const text = followupPrompt({ score: 0.25, message: null, metadata: null }, 2);
    expect(text).toBe("The task appears incomplete (iteration 2, predicted success likelihood: 25.0%).\n\nPlease review what you've done and verify each requirement is met.\nList what's working and what needs fixing, then complete the task.");
    expect(refinementsSoFar(['hello', text, 'The task appears incomplete? no'])).toBe(1);
    expect(CRITIC_LABELS).toHaveLength(27);
  });

  it('tries a 500 again (three attempts in all, as 1.58), any other failure once', async () => {
    const llm = await startScriptedLlm();
    try {
      const cfg = criticConfig({ server_url: llm.url.replace(/\/v1$/, '/vllm') })!;
      const probs = CRITIC_LABELS.map((l) => (l === 'success' ? 0.7 : 0.05));
      const once = (waits: number[]) => evaluate(cfg, 'sk-c', [{ role: 'user', content: 'hi' }], [], ['e1'], AbortSignal.timeout(10_000), waits);
      llm.pushClassification({ status: 500 }, { status: 500 }, probs);
      expect((await once([0, 0])).score).toBe(0.7);
      expect(llm.classifications).toHaveLength(3);
      llm.pushClassification({ status: 500 }, { status: 500 }, { status: 500 });
      await expect(once([0, 0])).rejects.toThrow(/answered 500/);
      expect(llm.classifications).toHaveLength(6);
      llm.pushClassification({ status: 401 }, probs);
      await expect(once([0, 0])).rejects.toThrow(/answered 401/);
      expect(llm.classifications).toHaveLength(7);
      expect(llm.classifications[0]!.headers['authorization']).toBe('Bearer sk-c');
    } finally {
      await llm.close();
    }
  });
});
