import { describe, expect, it } from 'vitest';
import { Invalid, type ValidationIssue } from '../errors.ts';
import {
  ConfirmationResponseRequest,
  ExecuteBashRequest,
  ForkConversationRequest,
  parseBody,
  parseStartConversationRequest,
  SendMessageRequest,
  SetConfirmationPolicyRequest,
  toSecretSource,
  UpdateConversationRequest,
  UpdateSecretsRequest,
} from './index.ts';

function issues(fn: () => unknown): ValidationIssue[] {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(Invalid);
    return (err as Invalid).detail;
  }
  throw new Error('expected Invalid');
}

const minimal = {
  workspace: { working_dir: '/workspace/project' },
  agent: { llm: { model: 'openai/gpt-4o', api_key: 'sk-test' }, tools: [{ name: 'terminal' }] },
};

describe('StartConversationRequest', () => {
  it('applies OpenHands defaults', () => {
    const req = parseStartConversationRequest(minimal);
    expect(req).toMatchObject({
      workspace: { kind: 'LocalWorkspace', working_dir: '/workspace/project' },
      agent: { kind: 'Agent', tools: [{ name: 'terminal', params: {} }] },
      confirmation_policy: { kind: 'NeverConfirm' },
      max_iterations: 500,
      stuck_detection: true,
      secrets: {},
      tags: {},
      observability_span_name: 'conversation',
      observability_tags: [],
      autotitle: true,
      worktree: false,
    });
  });

  it('ignores unknown fields, at the top and inside lenient objects', () => {
    const req = parseStartConversationRequest({
      ...minimal,
      stuck_detection_thresholds: { monologue: 3 },
      agent: { ...minimal.agent, llm: { ...minimal.agent.llm, some_future_knob: 1 } },
    });
    expect(req).not.toHaveProperty('stuck_detection_thresholds');
    expect(req.agent?.llm).not.toHaveProperty('some_future_knob');
    expect(req.agent?.llm.api_key).toBe('sk-test');
  });

  it('keeps nested content strict', () => {
    const found = issues(() =>
      parseStartConversationRequest({
        ...minimal,
        initial_message: { role: 'user', content: [{ type: 'text', text: 'hi', bogus: 1 }], run: true },
      }),
    );
    expect(found).toContainEqual({
      loc: ['body', 'initial_message', 'content', 0, 'bogus'],
      msg: 'Extra inputs are not permitted',
      type: 'extra_forbidden',
    });
  });

  it('requires workspace and exactly one agent source', () => {
    expect(issues(() => parseStartConversationRequest({ agent: minimal.agent }))).toEqual([
      { loc: ['body', 'workspace'], msg: 'Field required', type: 'missing' },
    ]);
    expect(issues(() => parseStartConversationRequest({ workspace: minimal.workspace }))[0]?.loc).toEqual(['body']);
    expect(
      issues(() => parseStartConversationRequest({ ...minimal, agent_profile_id: 'p' }))[0]?.type,
    ).toBe('value_error');
  });

  it('validates tags, span name, metadata and plugins', () => {
    expect(issues(() => parseStartConversationRequest({ ...minimal, tags: { 'Bad-Key': 'x' } }))[0]?.loc).toEqual([
      'body',
      'tags',
      'Bad-Key',
    ]);
    expect(issues(() => parseStartConversationRequest({ ...minimal, tags: { ok: 'x'.repeat(257) } }))[0]?.loc).toEqual([
      'body',
      'tags',
      'ok',
    ]);
    // Any readable text is a span name (spec part 2: "string"); control characters are not.
    expect(parseStartConversationRequest({ ...minimal, observability_span_name: 'fix tests nightly' }).observability_span_name).toBe('fix tests nightly');
    expect(issues(() => parseStartConversationRequest({ ...minimal, observability_span_name: 'a\nb' }))[0]?.loc).toEqual([
      'body',
      'observability_span_name',
    ]);
    expect(issues(() => parseStartConversationRequest({ ...minimal, observability_span_name: 'x'.repeat(129) }))[0]?.loc).toEqual([
      'body',
      'observability_span_name',
    ]);
    expect(
      issues(() => parseStartConversationRequest({ ...minimal, observability_metadata: { mixed: ['a', 1] } }))[0]?.loc.slice(0, 3),
    ).toEqual(['body', 'observability_metadata', 'mixed']);
    const ok = parseStartConversationRequest({
      ...minimal,
      observability_metadata: { a: 'x', b: 1, c: [true, false] },
      plugins: [{ source: 'github:acme/plugin', ref: 'v1' }],
      secrets: { OTHER: { kind: 'StaticSecret', value: 'v' } },
    });
    expect(ok.plugins).toEqual([{ source: 'github:acme/plugin', ref: 'v1' }]);
    expect(ok.secrets).toEqual({ OTHER: { kind: 'StaticSecret', value: 'v' } });
    // As 1.58 and 1.44: SecretSource objects only (a plain string or a bare {value} is what the /secrets update alone coerces).
    expect(issues(() => parseStartConversationRequest({ ...minimal, secrets: { GITHUB_TOKEN: 'ghp_x' } })).map((i) => i.loc)).toEqual([['body', 'secrets', 'GITHUB_TOKEN']]);
    expect(issues(() => parseStartConversationRequest({ ...minimal, secrets: { GITHUB_TOKEN: { value: 'ghp_x' } } })).map((i) => i.loc.slice(0, 3))).toContainEqual(['body', 'secrets', 'GITHUB_TOKEN']);
  });

  it('accepts hex and dashed conversation ids, rejects others', () => {
    expect(parseStartConversationRequest({ ...minimal, conversation_id: '0f8e1c2a9b7d4c55a90e2b1f7e6d5c4a' }).conversation_id).toBe(
      '0f8e1c2a9b7d4c55a90e2b1f7e6d5c4a',
    );
    parseStartConversationRequest({ ...minimal, conversation_id: '0f8e1c2a-9b7d-4c55-a90e-2b1f7e6d5c4a' });
    expect(issues(() => parseStartConversationRequest({ ...minimal, conversation_id: 'nope' }))[0]?.loc).toEqual([
      'body',
      'conversation_id',
    ]);
  });
});

describe('other request bodies', () => {
  it('SendMessageRequest defaults and only allows role user', () => {
    expect(parseBody(SendMessageRequest, { content: [{ type: 'text', text: 'hi' }] })).toEqual({
      role: 'user',
      content: [{ type: 'text', text: 'hi', cache_prompt: false }],
      run: false,
    });
    expect(issues(() => parseBody(SendMessageRequest, { role: 'assistant', content: [] }))[0]?.loc).toEqual([
      'body',
      'role',
    ]);
  });

  it('ForkConversationRequest: empty body, defaults, from_event_id', () => {
    expect(parseBody(ForkConversationRequest, undefined)).toEqual({ reset_metrics: true });
    expect(parseBody(ForkConversationRequest, { title: 'x', from_event_id: 'e1', reset_metrics: false })).toEqual({
      title: 'x',
      from_event_id: 'e1',
      reset_metrics: false,
    });
    expect(issues(() => parseBody(ForkConversationRequest, { title: 'x'.repeat(201) }))[0]?.loc).toEqual(['body', 'title']);
  });

  it('UpdateConversationRequest title bounds', () => {
    expect(parseBody(UpdateConversationRequest, { title: 'T', tags: { a: 'b' } })).toEqual({ title: 'T', tags: { a: 'b' } });
    expect(issues(() => parseBody(UpdateConversationRequest, { title: '' }))[0]?.loc).toEqual(['body', 'title']);
  });

  it('ConfirmationResponseRequest default reason', () => {
    expect(parseBody(ConfirmationResponseRequest, { accept: false })).toEqual({
      accept: false,
      reason: 'User rejected the action.',
    });
  });

  it('confirmation policies', () => {
    expect(parseBody(SetConfirmationPolicyRequest, { policy: { kind: 'ConfirmRisky' } })).toEqual({
      policy: { kind: 'ConfirmRisky', threshold: 'HIGH', confirm_unknown: true },
    });
    expect(issues(() => parseBody(SetConfirmationPolicyRequest, { policy: { kind: 'ConfirmRisky', threshold: 'UNKNOWN' } }))).toEqual([
      expect.objectContaining({ loc: ['body', 'policy', 'threshold'] }),
    ]);
    expect(issues(() => parseBody(SetConfirmationPolicyRequest, { policy: { kind: 'Sometimes' } }))[0]).toMatchObject({
      loc: ['body', 'policy', 'kind'],
      type: 'union_tag_invalid',
    });
  });

  it('secrets: string, {value} and typed sources', () => {
    const body = parseBody(UpdateSecretsRequest, {
      secrets: { A: 'x', B: { value: 'y' }, C: { kind: 'LookupSecret', url: 'http://127.0.0.1/s' } },
    });
    expect(Object.fromEntries(Object.entries(body.secrets).map(([k, v]) => [k, toSecretSource(v)]))).toEqual({
      A: { kind: 'StaticSecret', value: 'x' },
      B: { kind: 'StaticSecret', value: 'y' },
      C: { kind: 'LookupSecret', url: 'http://127.0.0.1/s' },
    });
  });

  it('ExecuteBashRequest default timeout', () => {
    expect(parseBody(ExecuteBashRequest, { command: 'ls' })).toEqual({ command: 'ls', timeout: 300 });
  });
});
