// Conversation → Sandbox wake-ups, only when what a Sandbox takes from its conversations changes:
// which sandbox a conversation is on, whether it is being deleted, or that it is gone (the
// conversation count). A start writes the Conversation's status at each of its eight steps, and the
// facade writes execution status and usage all along; none of those changes the count, and each
// used to cost a Sandbox pass (runtime observe, conversation list) on the same event loop as the
// start itself — a warm-pool start paid for eight of them.
import type { KubeObject } from '../api/meta.ts';
import { objectKey } from './keys.ts';
import { sandboxKeysOfConversation } from './manager.ts';

export function sandboxKeysOnPlacementChange(): (obj: KubeObject, deleted: boolean) => string[] {
  const seen = new Map<string, { keys: string[]; state: string }>();
  return (obj, deleted) => {
    const convKey = objectKey(obj.metadata.namespace, obj.metadata.name);
    const keys = sandboxKeysOfConversation(obj);
    const before = seen.get(convKey);
    if (deleted) {
      seen.delete(convKey);
      return [...new Set([...(before?.keys ?? []), ...keys])];
    }
    const state = `${keys.join(',')}|${obj.metadata.deletionTimestamp ? 'deleting' : ''}`;
    if (before?.state === state) return [];
    seen.set(convKey, { keys, state });
    return [...new Set([...(before?.keys ?? []), ...keys])];
  };
}
