// Wire compatibility of the agent-server API schemas with @openhands/typescript-client.
// Requests: literals typed with the client's types (so tsc checks them) must parse with our schemas.
// Responses: what we emit must be assignable to the client's types (checked by tsc below).
import type * as OH from '../../../node_modules/@openhands/typescript-client/dist/generated/agent-server-schema.js';
import type * as Client from '@openhands/typescript-client';
import { ConversationExecutionStatus as ClientStatus } from '@openhands/typescript-client';
import { Value } from 'typebox/value';
import { describe, expect, it } from 'vitest';
import { EXAMPLE_EVENTS } from '../events/examples.ts';
import {
  AskAgentRequest,
  AskAgentResponse,
  BashCommand,
  BashOutput,
  ConfirmationResponseRequest,
  ConversationInfo,
  EXECUTION_STATUSES,
  EventPage,
  ExecuteBashRequest,
  ForkConversationRequest,
  GitChange,
  GitCommit,
  GitCommitsPage,
  GitDiff,
  parseBody,
  parseStartConversationRequest,
  SendMessageRequest,
  ServerInfo,
  Success,
  UpdateConversationRequest,
  UpdateSecretsRequest,
} from './index.ts';

type Extends<A, B> = [A] extends [B] ? true : false;
type Assert<T extends true> = T;
type BothWays<A, B> = Extends<A, B> extends true ? Extends<B, A> : false;

// Fields the client code reads from ConversationInfo (remote-state.js), minus execution_status,
// which the client types as a TS enum (same string values; checked at runtime below).
type ReadByClient = 'id' | 'agent' | 'workspace' | 'persistence_dir' | 'confirmation_policy' | 'activated_knowledge_skills';

export type _checks = [
  Assert<Extends<Pick<ConversationInfo, ReadByClient>, Pick<Client.ConversationInfo, ReadByClient>>>,
  Assert<Extends<ConversationInfo['tags'], Client.ConversationInfo['tags']>>,
  Assert<Extends<ConversationInfo['execution_status'], OH.ConversationExecutionStatus>>,
  Assert<Extends<OH.ConversationExecutionStatus, ConversationInfo['execution_status']>>,
  Assert<Extends<SendMessageRequest, OH.SendMessageRequest>>,
  Assert<Extends<OH.SendMessageRequest & { role?: 'user' }, SendMessageRequest>>,
  // Client.SendMessageRequest types content items loosely ({type: string, text?}); checked at runtime instead.
  Assert<BothWays<ForkConversationRequest, OH.ForkConversationRequest>>,
  Assert<Extends<Client.ForkConversationRequest, ForkConversationRequest>>,
  Assert<BothWays<UpdateConversationRequest, OH.UpdateConversationRequest>>,
  Assert<Extends<Client.UpdateConversationRequest, UpdateConversationRequest>>,
  Assert<BothWays<ConfirmationResponseRequest, OH.ConfirmationResponseRequest>>,
  Assert<BothWays<AskAgentRequest, OH.AskAgentRequest>>,
  Assert<BothWays<AskAgentResponse, OH.AskAgentResponse>>,
  Assert<BothWays<ExecuteBashRequest, OH.ExecuteBashRequest>>,
  Assert<Extends<BashCommand, OH.BashCommand>>,
  Assert<Extends<BashOutput, OH.BashOutput>>,
  Assert<BothWays<GitChange, OH.GitChange>>,
  Assert<BothWays<GitDiff, OH.GitDiff>>,
  Assert<BothWays<GitCommit, OH.GitCommit>>,
  Assert<BothWays<GitCommitsPage, OH.GitCommitsPage>>,
  Assert<Extends<ServerInfo, Client.ServerInfo>>,
  Assert<Extends<Success, Client.Success>>,
  Assert<Extends<Success, OH.Success>>,
  Assert<Extends<EventPage['next_page_id'], OH.ConversationPage['next_page_id']>>,
];

describe('agent-server API compatibility with @openhands/typescript-client', () => {
  it('accepts the start request RemoteConversation.start() sends', () => {
    // Verbatim shape of remote-conversation.js start(): note `workspace.type`, no `kind`, no `run`.
    const sent = {
      agent: { kind: 'Agent', llm: { model: 'openai/gpt-4o', api_key: 'sk-x', base_url: 'http://127.0.0.1:9' }, name: 'agent', tools: [{ name: 'terminal' }] },
      initial_message: { role: 'user', content: [{ type: 'text', text: 'hello' }] },
      max_iterations: 500,
      stuck_detection: true,
      workspace: { type: 'local', working_dir: '/workspace/project' },
      hook_config: null,
      user_id: null,
    };
    const req = parseStartConversationRequest(sent);
    expect(req.workspace).toEqual({ kind: 'LocalWorkspace', working_dir: '/workspace/project' });
    expect(req.initial_message).toEqual({ role: 'user', content: [{ type: 'text', text: 'hello', cache_prompt: false }], run: false });
    expect(req.agent).not.toHaveProperty('name');
  });

  it('accepts a start request typed with the generated StartConversationRequest', () => {
    const sent: OH.StartConversationRequest = {
      workspace: { kind: 'LocalWorkspace', working_dir: '/w' },
      // `agent` is typed `never` by the generated union (see events/client-compat.test.ts); use a profile.
      agent_profile_id: 'default',
      conversation_id: '3f1c2a9e-8b7d-4c55-9a0e-2b1f7e6d5c4a',
      initial_message: { role: 'user', content: [{ type: 'text', text: 'go' }], run: true },
      max_iterations: 50,
      plugins: [{ source: 'github:acme/p', ref: 'main', repo_path: null }],
      tags: { team: 'core' },
      observability_metadata: { run: 1, flags: ['a', 'b'] },
      observability_tags: ['t'],
      observability_span_name: 'ci.run',
      autotitle: false,
    };
    expect(parseStartConversationRequest(sent)).toMatchObject({ max_iterations: 50, tags: { team: 'core' } });
  });

  it('accepts the other client request bodies', () => {
    const fork: OH.ForkConversationRequest = { id: null, title: 'fork', tags: { a: 'b' }, reset_metrics: false, from_event_id: 'e1' };
    expect(parseBody(ForkConversationRequest, fork)).toEqual(fork);
    const msg: Client.SendMessageRequest = { role: 'user', content: [{ type: 'text', text: 'hi' }], run: true };
    expect(parseBody(SendMessageRequest, msg).run).toBe(true);
    const secrets: Client.UpdateSecretsRequest = {
      secrets: { A: { kind: 'StaticSecret', value: 'v' }, B: { kind: 'LookupSecret', url: 'http://127.0.0.1/x', headers: {} } },
    };
    expect(Object.keys(parseBody(UpdateSecretsRequest, secrets).secrets)).toEqual(['A', 'B']);
    const confirm: Client.ConfirmationResponseRequest = { accept: true };
    expect(parseBody(ConfirmationResponseRequest, confirm).accept).toBe(true);
    const patch: Client.UpdateConversationRequest = { title: 'New', tags: { x: 'y' } };
    expect(parseBody(UpdateConversationRequest, patch)).toEqual(patch);
  });

  it('uses the same execution status strings as the client enum', () => {
    expect([...EXECUTION_STATUSES].sort()).toEqual(Object.values(ClientStatus).sort());
  });

  it('a ConversationInfo we build validates and has what the client reads', () => {
    const info: ConversationInfo = {
      id: '3f1c2a9e-8b7d-4c55-9a0e-2b1f7e6d5c4a',
      agent: { kind: 'Agent', llm: { model: 'openai/gpt-4o', api_key: '**********' }, tools: [{ name: 'terminal' }] },
      workspace: { kind: 'LocalWorkspace', working_dir: '/workspace/project' },
      persistence_dir: '/data/conversations/3f1c2a9e8b7d4c559a0e2b1f7e6d5c4a',
      execution_status: 'idle',
      confirmation_policy: { kind: 'NeverConfirm' },
      activated_knowledge_skills: [],
      stats: { usage_to_metrics: { agent: { model_name: 'openai/gpt-4o', accumulated_cost: 0 } } },
      tags: { title: 'x' },
      created_at: '2026-08-22T10:15:30.123Z',
    };
    expect(Value.Check(ConversationInfo, info)).toBe(true);
    // The hand-written client type differs from the wire in stats (its own counters), hook_config
    // (a typed HookConfig) and title (no null); the generated type matches the wire.
    const asClient: Client.ConversationInfo = { ...info, execution_status: info.execution_status as ClientStatus, stats: undefined, hook_config: undefined, title: undefined };
    expect(asClient.agent.kind).toBe('Agent');
  });

  it('event pages hold our events', () => {
    expect(Value.Check(EventPage, { items: Object.values(EXAMPLE_EVENTS), next_page_id: null })).toBe(true);
  });
});
