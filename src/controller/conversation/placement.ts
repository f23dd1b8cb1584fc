// Placement (spec part 1): which Sandbox a new conversation runs in. Pure selection over the
// candidates; the reconciler does the I/O and serialises placements so two starts cannot race.
import { DateTime } from 'luxon';
import type { SandboxGrouping } from '../../api/conversation.ts';
import type { Sandbox } from '../../api/sandbox.ts';
import { lastActivity } from '../lifecycle.ts';
import { createdAtOf } from '../../api/meta.ts';

/** A sandbox can take more conversations while it runs and nobody wants it paused or gone. */
export function isAvailable(sb: Sandbox): boolean {
  return sb.status?.phase === 'RUNNING' && !sb.spec.paused && !sb.metadata.deletionTimestamp;
}

/** Sandboxes that hold capacity: starting or running, not being deleted. */
export function holdsCapacity(sb: Sandbox): boolean {
  if (sb.metadata.deletionTimestamp || sb.spec.paused) return false;
  const phase = sb.status?.phase;
  return phase === undefined || phase === 'STARTING' || phase === 'RUNNING';
}

/** Creation time in ms: agentyard's own annotation, else creationTimestamp (kubectl-made sandboxes). */
function created(sb: Sandbox): number {
  return DateTime.fromISO(createdAtOf(sb) ?? '', { zone: 'utc' }).toMillis() || 0;
}

function byName(a: Sandbox, b: Sandbox): number {
  return a.metadata.name.localeCompare(b.metadata.name);
}

/**
 * Picks an available sandbox for the strategy, or undefined when a new one is needed.
 * `conversationCounts` maps sandbox name → conversations placed on it.
 */
export function chooseSandbox(
  strategy: SandboxGrouping,
  candidates: readonly Sandbox[],
  conversationCounts: ReadonlyMap<string, number>,
): Sandbox | undefined {
  const available = candidates.filter(isAvailable).sort(byName);
  if (strategy === 'NO_GROUPING' || available.length === 0) return undefined;
  switch (strategy) {
    case 'GROUP_BY_NEWEST':
      return available.reduce((best, sb) => (created(sb) > created(best) ? sb : best));
    case 'LEAST_RECENTLY_USED': {
      const used = (sb: Sandbox) => lastActivity(sb)?.toMillis() ?? created(sb);
      return available.reduce((best, sb) => (used(sb) < used(best) ? sb : best));
    }
    case 'FEWEST_CONVERSATIONS': {
      const count = (sb: Sandbox) => conversationCounts.get(sb.metadata.name) ?? 0;
      return available.reduce((best, sb) => (count(sb) < count(best) ? sb : best));
    }
    case 'ADD_TO_ANY':
      return available.reduce((best, sb) => (created(sb) < created(best) ? sb : best));
  }
}
