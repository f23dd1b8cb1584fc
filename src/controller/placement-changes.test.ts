import { describe, expect, it } from 'vitest';
import type { Conversation } from '../api/conversation.ts';
import { sandboxKeysOnPlacementChange } from './placement-changes.ts';

const conv = (sandbox: string | undefined, extra: Partial<Conversation['metadata']> = {}, step = 'WORKING'): Conversation =>
  ({ apiVersion: 'agentyard.dev/v1alpha1', kind: 'Conversation', metadata: { name: 'c1', namespace: 'ns', ...extra }, spec: {}, status: { ...(sandbox ? { sandboxName: sandbox } : {}), startTask: { status: step } } }) as Conversation;

describe('sandboxKeysOnPlacementChange', () => {
  it('wakes the sandbox when a conversation is placed, starts deleting or is gone; not for its start steps', () => {
    const map = sandboxKeysOnPlacementChange();
    expect(map(conv(undefined), false)).toEqual([]);
    expect(map(conv('sb'), false)).toEqual(['ns/sb']);
    for (const step of ['PREPARING_REPOSITORY', 'STARTING_CONVERSATION', 'READY']) expect(map(conv('sb', {}, step), false)).toEqual([]);
    expect(map(conv('sb', { deletionTimestamp: '2026-01-01T00:00:00Z' }), false)).toEqual(['ns/sb']);
    expect(map(conv('sb', { deletionTimestamp: '2026-01-01T00:00:00Z' }), true)).toEqual(['ns/sb']);
    // Seen again after it was gone (a relist): a wake-up again.
    expect(map(conv('sb'), false)).toEqual(['ns/sb']);
  });

  it('wakes both sandboxes when a conversation moves', () => {
    const map = sandboxKeysOnPlacementChange();
    map(conv('a'), false);
    expect(map(conv('b'), false).sort()).toEqual(['ns/a', 'ns/b']);
  });
});
