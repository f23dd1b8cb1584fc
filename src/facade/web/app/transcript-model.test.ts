// The transcript's rows built incrementally: a tool call and its result are one row (in either
// arrival order), hidden kinds are skipped, a change replaces only the block it is in.
import { describe, expect, it } from 'vitest';
import type { AgentEvent } from './api.ts';
import { BLOCK_ROWS, TranscriptModel } from './transcript-model.ts';

const msg = (id: string, role = 'user'): AgentEvent => ({ id, kind: 'MessageEvent', llm_message: { role, content: [{ type: 'text', text: id }] } });
const action = (id: string, call: string): AgentEvent => ({ id, kind: 'ActionEvent', tool_name: 'terminal', tool_call_id: call });
const obs = (id: string, call: string, actionId: string): AgentEvent => ({ id, kind: 'ObservationEvent', tool_name: 'terminal', tool_call_id: call, action_id: actionId, observation: {} });

describe('TranscriptModel', () => {
  it('pairs each tool call with its result, whichever comes first, and lists the calls still waiting', () => {
    const m = new TranscriptModel();
    m.add([msg('m1'), action('a1', 'c1'), action('a2', 'c2'), obs('o2', 'c2', 'a2')]);
    expect(m.blocks[0]!.map((r) => [r.type, r.e.id, r.type === 'tool' ? r.result?.id : undefined])).toEqual([
      ['message', 'm1', undefined],
      ['tool', 'a1', undefined],
      ['tool', 'a2', 'o2'],
    ]);
    expect(m.pendingActions().map((e) => e.id)).toEqual(['a1']);
    m.add([{ id: 'r1', kind: 'UserRejectObservation', tool_call_id: 'c1', action_id: 'a1' }]);
    expect(m.pendingActions()).toEqual([]);
    const early = new TranscriptModel();
    early.add([obs('o9', 'c9', 'a9'), action('a9', 'c9')]);
    expect(early.blocks[0]).toEqual([{ type: 'tool', e: action('a9', 'c9'), result: obs('o9', 'c9', 'a9') }]);
  });

  it('skips hidden kinds, takes the execution status and info from state updates', () => {
    const m = new TranscriptModel();
    expect(m.add([{ id: 's', kind: 'SystemPromptEvent' }, { id: 't', kind: 'TokenEvent' }, { id: 'd', kind: 'StreamingDeltaEvent', content: 'Hel' }])).toBe(false);
    m.add([{ id: 'f', kind: 'ConversationStateUpdateEvent', key: 'full_state', value: { execution_status: 'idle', workspace: { working_dir: '/w' } } }]);
    expect([m.executionStatus, m.rowCount, (m.info?.['workspace'] as { working_dir: string }).working_dir]).toEqual(['idle', 0, '/w']);
    m.add([{ id: 'u', kind: 'ConversationStateUpdateEvent', key: 'execution_status', value: 'running' }]);
    expect([m.executionStatus, m.rowCount, m.blocks[0]![0]!.type]).toEqual(['running', 1, 'state']);
  });

  it('replaces only the block a change is in', () => {
    const m = new TranscriptModel();
    m.add([action('a0', 'c0')]);
    m.add(Array.from({ length: BLOCK_ROWS * 2 }, (_, i) => msg(`m${i}`)));
    const [b0, b1, b2] = m.blocks;
    m.add([obs('o0', 'c0', 'a0')]);
    expect(m.blocks[0]).not.toBe(b0);
    expect(m.blocks[1]).toBe(b1);
    expect(m.blocks[2]).toBe(b2);
    m.add([msg('last')]);
    expect(m.blocks[1]).toBe(b1);
    expect(m.blocks[2]).not.toBe(b2);
    expect(m.rowCount).toBe(BLOCK_ROWS * 2 + 2);
  });

  it('a SecurityAnalysisEvent is its own row: the risk of each action it judged, with the tool and summary of that action', () => {
    const m = new TranscriptModel();
    const a1 = { ...action('a1', 'c1'), summary: 'list files' };
    const analysis: AgentEvent = { id: 's1', kind: 'SecurityAnalysisEvent', analyzer: 'PatternSecurityAnalyzer', policy: 'ConfirmRisky', risks: { a1: 'LOW', a2: 'HIGH', gone: 'UNKNOWN' }, details: { a2: 'pipes a download into a shell' } };
    expect(m.add([a1, action('a2', 'c2'), analysis])).toBe(true);
    const row = m.blocks[0]![2]!;
    expect(row.type).toBe('analysis');
    expect(row.type === 'analysis' && row.verdicts).toEqual([
      { actionId: 'a1', risk: 'LOW', tool: 'terminal', summary: 'list files' },
      { actionId: 'a2', risk: 'HIGH', tool: 'terminal', details: 'pipes a download into a shell' },
      { actionId: 'gone', risk: 'UNKNOWN' },
    ]);
    // Not a result: the tool calls still wait for theirs.
    expect(m.pendingActions().map((e) => e.id)).toEqual(['a1', 'a2']);
  });
});

