// Test support for the agent: an in-memory AgentHost over the scripted model server that validates
// every event against the strict schema, as the agent server's store does. Not a test file itself.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StartConversationRequest } from '../api/agent-server/index.ts';
import type { ExecutionStatus } from '../api/conversation.ts';
import { newEventBase, parseEvent, type Event } from '../api/events/index.ts';
import { startScriptedLlm, type ScriptStep } from '../testing/scripted-llm/server.ts';
import { createAgentWith, type AgentOptions } from './agent.ts';
import type { AgentHost, ConversationAgent, LlmConfig } from './types.ts';
import { lastStats } from './usage.ts';

type Of<K extends Event['kind']> = Extract<Event, { kind: K }>;

export interface HostSetup {
  secrets?: Record<string, string>;
  maxIterations?: number;
  llm?: Partial<LlmConfig> | null;
  agent?: AgentOptions;
  script?: ScriptStep[];
  request?: Partial<StartConversationRequest>;
}

/** `cleanup` collects what the caller must run after the test (agent close, model server, temp dir). */
export async function setupHost(opts: HostSetup, cleanup: (fn: () => Promise<void> | void) => void) {
  const llm = await startScriptedLlm(opts.script ?? []);
  const dir = mkdtempSync(join(tmpdir(), 'agent-'));
  const events: Event[] = [];
  const statuses: ExecutionStatus[] = [];
  const deltas: { content: string | null; reasoning: string | null }[] = [];
  let status: ExecutionStatus = 'idle';
  const request = { agent: { llm: { model: 'openai/scripted' } }, ...opts.request } as StartConversationRequest;
  const host: AgentHost & { request: StartConversationRequest } = {
    conversationId: 'c1',
    workspaceDir: dir,
    llm: opts.llm === null ? undefined : { model: 'openai/scripted', baseUrl: llm.url, apiKey: 'sk-test', ...opts.llm },
    secrets: opts.secrets ?? {},
    maxIterations: opts.maxIterations ?? 50,
    request,
    stats: () => lastStats(events),
    events: () => events,
    emit: (e) => events.push(parseEvent(e)),
    executionStatus: () => status,
    setExecutionStatus: (s) => {
      status = s;
      statuses.push(s);
    },
    streamDelta: (d) => deltas.push(d),
  };
  const newAgent = (): ConversationAgent => {
    const agent = createAgentWith({ model: { maxRetries: 0 }, ...opts.agent })(host);
    cleanup(() => agent.close());
    return agent;
  };
  const agent = newAgent();
  cleanup(() => llm.close());
  cleanup(() => rmSync(dir, { recursive: true, force: true }));
  const say = (text: string) => events.push(parseEvent({ ...newEventBase('user'), kind: 'MessageEvent', llm_message: { role: 'user', content: [{ type: 'text', text }] } }));
  const of = <K extends Event['kind']>(kind: K) => events.filter((e): e is Of<K> => e.kind === kind);
  const run = async (signal = new AbortController().signal) => {
    await agent.run(signal);
    if (llm.failures.length) throw llm.failures[0];
  };
  return { llm, host, agent, newAgent, events, statuses, deltas, dir, say, of, run, status: () => status };
}
