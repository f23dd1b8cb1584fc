// The event tree of a conversation (OpenHands 1.58): every event names its parent; HEAD
// (leaf_event_id) is the parent of the next event; POST /navigate moves HEAD to any event, so the
// next events start a sibling branch. The log keeps every branch; the agent works on the active
// branch only: the path from HEAD to the root, read root-first.
import type { Event } from '../../api/events/index.ts';

/** OpenHands' ROOT_PARENT_ID: the parent of the first event after HEAD moved to the empty tree. */
export const ROOT_PARENT_ID = '__root__';

const isNode = (e: Event) => e.kind !== 'ConversationStateUpdateEvent';

/**
 * The events of the active branch, in log order: the nodes on the path from `leaf` to the root, and
 * the state updates recorded while HEAD was on that path. An event without parent_id (recorded
 * before trees) hangs on the node before it, as OpenHands reads a linear log. When the path is the
 * whole log (no navigation ever), that is the log itself.
 */
export function activeBranch(log: readonly Event[], leaf: string | null): Event[] {
  // No early return for a null leaf: state updates recorded before the first node (a switch_llm
  // before the first message) hang on the root and stay on every branch.
  const parentOf = new Map<string, string | null>();
  let previous: string | null = null;
  for (const e of log) {
    const parent = e.parent_id === ROOT_PARENT_ID ? null : (e.parent_id ?? previous);
    parentOf.set(e.id, parent);
    if (isNode(e)) previous = e.id;
  }
  const onPath = new Set<string>();
  for (let id: string | null | undefined = leaf; id != null && !onPath.has(id); id = parentOf.get(id)) onPath.add(id);
  return log.filter((e) => (isNode(e) ? onPath.has(e.id) : parentOf.get(e.id) == null || onPath.has(parentOf.get(e.id)!)));
}
