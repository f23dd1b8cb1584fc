import { describe, expect, it } from 'vitest';
import type { Event } from '../../api/events/index.ts';
import { activeBranch, ROOT_PARENT_ID } from './tree.ts';

const ev = (id: string, kind: string, parent_id?: string | null) => ({ id, kind, timestamp: '2026-01-01T00:00:00Z', source: 'environment', ...(parent_id !== undefined ? { parent_id } : {}) }) as unknown as Event;
const ids = (events: Event[]) => events.map((e) => e.id);

describe('activeBranch', () => {
  it('keeps a state update recorded before the first node (a switch_llm before the first message)', () => {
    const log = [ev('u0', 'ConversationStateUpdateEvent', null), ev('sp', 'SystemPromptEvent', null), ev('m1', 'MessageEvent', 'sp')];
    expect(ids(activeBranch(log, 'm1'))).toEqual(['u0', 'sp', 'm1']);
    expect(ids(activeBranch(log.slice(0, 1), null))).toEqual(['u0']);
  });

  it('reads the path from HEAD to the root: a sibling branch leaves out the other one, with its state updates', () => {
    const log = [
      ev('a', 'MessageEvent'),
      ev('b', 'MessageEvent'),
      ev('ub', 'ConversationStateUpdateEvent'),
      ev('c', 'MessageEvent', 'a'),
      ev('uc', 'ConversationStateUpdateEvent', 'c'),
    ];
    expect(ids(activeBranch(log, 'c'))).toEqual(['a', 'c', 'uc']);
    expect(ids(activeBranch(log, 'b'))).toEqual(['a', 'b', 'ub']);
  });

  it('starts a new root after HEAD moved to the empty tree', () => {
    const log = [ev('a', 'MessageEvent'), ev('r', 'MessageEvent', ROOT_PARENT_ID), ev('s', 'MessageEvent', 'r')];
    expect(ids(activeBranch(log, 's'))).toEqual(['r', 's']);
  });
});
