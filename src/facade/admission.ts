// Capacity admission (spec part 8 rule 2): past the installation's tested sandbox capacity a
// request that needs another running sandbox is refused with 429, never served by silently pausing
// someone else's sandbox. The controller checks again when it places; this is the early answer.
import { ConversationKind, type Conversation } from '../api/conversation.ts';
import { TooManyRequests } from '../api/errors.ts';
import { SandboxKind, type Sandbox } from '../api/sandbox.ts';
import type { SandboxGrouping } from '../api/conversation.ts';
import type { FacadeDeps } from './deps.ts';
import { isOwnedBy, sandboxNameOf } from './resources.ts';
import { LABEL_WARM_POOL, SandboxWarmPoolKind } from '../api/warm-pool.ts';
import { isReadyMember, matchesTemplate } from '../controller/warm-pool/members.ts';
import { currentCapacity } from './sandbox-configuration.ts';

/** Holds, or will soon hold, compute: not deleting, not asked to pause, not failed. */
function isActive(sb: Sandbox): boolean {
  if (sb.metadata.deletionTimestamp || sb.spec.paused === true) return false;
  const phase = sb.status?.phase;
  return phase !== 'ERROR' && phase !== 'MISSING';
}

/**
 * A NO_GROUPING conversation not yet placed will get a sandbox of its own (which the controller
 * names after it: once that exists, it is counted as a sandbox instead).
 */
function awaitsNewSandbox(c: Conversation, sandboxNames: ReadonlySet<string>): boolean {
  if (c.metadata.deletionTimestamp || sandboxNameOf(c) !== undefined || sandboxNames.has(c.metadata.name)) return false;
  const task = c.status?.startTask?.status;
  return task !== 'ERROR' && task !== 'READY' && (c.spec.sandboxGrouping ?? 'NO_GROUPING') === 'NO_GROUPING';
}

export async function activeSandboxCount(d: FacadeDeps): Promise<number> {
  const [sandboxes, conversations] = await Promise.all([d.store.list(SandboxKind, d.namespace), d.store.list(ConversationKind, d.namespace)]);
  const names = new Set(sandboxes.items.map((s) => s.metadata.name));
  return sandboxes.items.filter(isActive).length + conversations.items.filter((c) => awaitsNewSandbox(c, names)).length;
}

/**
 * Whether a new conversation's sandbox can come from a warm pool: a ready member of a pool whose
 * template is the default sandbox's. Its claim takes no new slot (members count as active sandboxes
 * while they wait), so such a start is admitted even at capacity. The controller claims or, when
 * another start was quicker, checks the capacity again before it starts one cold.
 */
export async function warmMemberReady(d: FacadeDeps): Promise<boolean> {
  const pools = (await d.store.list(SandboxWarmPoolKind, d.namespace)).items.filter((p) => !p.metadata.deletionTimestamp && matchesTemplate(p, {}));
  if (pools.length === 0) return false;
  const names = pools.map((p) => p.metadata.name).join(',');
  const members = await d.store.list(SandboxKind, d.namespace, { labelSelector: `${LABEL_WARM_POOL} in (${names})` });
  return members.items.some(isReadyMember);
}

/**
 * Throws TooManyRequests when one more active sandbox would exceed the capacity. Warm-pool members
 * count: they hold compute like any sandbox.
 */
export async function admit(d: FacadeDeps, what: string, opts: { warmPool?: boolean } = {}): Promise<void> {
  // The admin console's value when set: a change applies to the next start, without a restart.
  const capacity = await currentCapacity(d);
  if (capacity === Infinity) return;
  const active = await activeSandboxCount(d);
  if (active >= capacity && !(opts.warmPool && (await warmMemberReady(d)))) {
    const retry = d.settings.retryAfterSeconds ?? 30;
    throw new TooManyRequests(`${what} needs a sandbox, and all ${capacity} sandbox slots of this installation are in use; retry later or pause or delete one of your sandboxes`, retry);
  }
}

/** Whether the controller will have to start a sandbox for a new conversation of this user. */
export async function needsNewSandbox(d: FacadeDeps, userId: string, grouping: SandboxGrouping): Promise<boolean> {
  if (grouping === 'NO_GROUPING') return true;
  const own = (await d.store.list(SandboxKind, d.namespace)).items.filter((s) => isOwnedBy(s, userId));
  return !own.some((s) => isActive(s) && s.status?.phase === 'RUNNING');
}
