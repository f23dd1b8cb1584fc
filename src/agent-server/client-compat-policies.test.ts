// The published OpenHands TypeScript client, unmodified, drives confirmation mode (with the security
// analyzer) and forced condensation on this agent server, with the real agent and the scripted model.
import { describe, expect, it, vi } from 'vitest';

// As in client-compat.test.ts: the client's module picks the browser WebSocket path in ESM.
vi.hoisted(() => {
  (globalThis as { window?: unknown }).window = { WebSocket: globalThis.WebSocket };
});

import { join } from 'node:path';
import { RemoteConversation, RemoteWorkspace } from '@openhands/typescript-client';
import { createAgent } from '../agent/agent.ts';
import { eventually, TEST_KEY, useRealAgentServer } from './test-support.ts';

const ctx = useRealAgentServer({ createAgent });

describe('@openhands/typescript-client: confirmation and condensation', () => {
  it('sets a policy, rejects and accepts pending actions, sets and clears the security analyzer, and forces a condensation', async () => {
    const workspace = new RemoteWorkspace({ host: ctx.s.url, workingDir: join(ctx.dir.path, 'w'), apiKey: TEST_KEY });
    const conv = new RemoteConversation({ kind: 'Agent', llm: { model: 'openai/scripted', usage_id: 'agent' }, tools: [{ name: 'terminal', params: {} }] } as never, workspace);
    await conv.start();
    await conv.setConfirmationPolicy({ kind: 'AlwaysConfirm' } as never);
    expect((await conv.state.refresh()).confirmation_policy).toEqual({ kind: 'AlwaysConfirm' });
    const status = async () => (await conv.state.refresh(), await conv.state.getExecutionStatus());

    ctx.llm.push({ toolCalls: [{ name: 'terminal', arguments: { command: 'echo first' } }] });
    await conv.sendMessage('do it');
    await conv.run();
    await eventually(async () => (await status()) === 'waiting_for_confirmation', 10_000);
    await conv.sendConfirmationResponse(false, 'no thanks');
    await eventually(async () => (await status()) === 'idle');
    const rejected = (await conv.state.events.search({ limit: 100 })).items.filter((e: { kind: string }) => e.kind === 'UserRejectObservation');
    expect(rejected).toMatchObject([{ rejection_reason: 'no thanks', rejection_source: 'user' }]);

    ctx.llm.push({ toolCalls: [{ name: 'terminal', arguments: { command: 'echo second' } }] }, { content: 'done' });
    await conv.sendMessage('then this');
    await conv.run();
    await eventually(async () => (await status()) === 'waiting_for_confirmation', 10_000);
    await conv.sendConfirmationResponse(true);
    await eventually(async () => (await status()) === 'finished', 10_000);
    expect(await conv.getAgentFinalResponse()).toBe('done');

    // With the LLM security analyzer a ConfirmRisky policy takes the risk the model predicts.
    await conv.setSecurityAnalyzer({ kind: 'LLMSecurityAnalyzer' } as never);
    await conv.setConfirmationPolicy({ kind: 'ConfirmRisky', threshold: 'HIGH' } as never);
    expect((await conv.state.refresh()).security_analyzer).toEqual({ kind: 'LLMSecurityAnalyzer' });
    ctx.llm.push({ toolCalls: [{ name: 'terminal', arguments: { command: 'echo low-risk', security_risk: 'LOW' } }] }, { content: 'ran the low one' });
    await conv.sendMessage('something harmless');
    await conv.run();
    await eventually(async () => (await status()) === 'finished', 10_000);
    expect(await conv.getAgentFinalResponse()).toBe('ran the low one');
    await conv.setSecurityAnalyzer(null as never);
    expect((await conv.state.refresh()).security_analyzer).toBeNull();

    ctx.llm.push({ content: 'the summary' });
    await conv.condense();
    const condensations = (await conv.state.events.search({ limit: 100 })).items.filter((e: { kind: string }) => e.kind === 'Condensation');
    expect(condensations).toMatchObject([{ summary: 'the summary' }]);
    await conv.close();
  });
});
