// Reading and writing the resources a caller owns. A foreign resource is indistinguishable from
// an unknown one: lookups return undefined and routes answer 404 / null.
import { timingSafeEqual, createHash } from 'node:crypto';
import { ConversationKind, type Conversation } from '../api/conversation.ts';
import { Conflict } from '../api/errors.ts';
import { LABEL_OWNER, LABEL_SANDBOX, type KubeObject, type ResourceKind } from '../api/meta.ts';
import { SandboxKind, type Sandbox, type SandboxPhase } from '../api/sandbox.ts';
import { SecretKind } from '../api/secret.ts';
import type { TombstoneKind } from './db/types.ts';
import type { FacadeDeps } from './deps.ts';

/** Ids are 32-char lowercase hex UUIDs; dashed or upper-case input is accepted. Undefined when not a UUID. */
export function normalizeId(id: string): string | undefined {
  const hex = id.trim().replaceAll('-', '').toLowerCase();
  return /^[0-9a-f]{32}$/.test(hex) ? hex : undefined;
}

/** Resource names a caller may name (Kubernetes object names); undefined otherwise. */
export function normalizeName(name: string): string | undefined {
  const n = name.trim();
  return /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(n) ? n : undefined;
}

/** A conversation id as its resource name: UUIDs in any spelling become 32-char hex (agent servers send dashed ones). */
export function conversationName(id: string): string | undefined {
  return normalizeId(id) ?? normalizeName(id);
}

export function isOwnedBy(obj: KubeObject, userId: string): boolean {
  return obj.metadata.labels?.[LABEL_OWNER] === userId;
}

export async function getOwned<T extends KubeObject>(d: FacadeDeps, kind: ResourceKind<T>, userId: string, name: string): Promise<T | undefined> {
  const n = kind.kind === 'Conversation' ? conversationName(name) : normalizeName(name);
  if (n === undefined) return undefined;
  const obj = await d.store.get(kind, d.namespace, n);
  return obj && isOwnedBy(obj, userId) ? obj : undefined;
}

/**
 * True when `userId` itself deleted this resource through the API (a tombstone in the app store).
 * Only a repeated DELETE (idempotent) and pause/resume (410) look at it; every other route answers
 * 404, and so does everything for any other user.
 */
export async function deletedByUser(d: FacadeDeps, kind: TombstoneKind, userId: string, id: string): Promise<boolean> {
  const n = kind === 'Conversation' ? conversationName(id) : normalizeName(id);
  return n !== undefined && (await d.db.deletedBy(kind, n)) === userId;
}

export async function listOwned<T extends KubeObject>(d: FacadeDeps, kind: ResourceKind<T>, userId: string, extra?: string): Promise<T[]> {
  const selector = `${LABEL_OWNER}=${userId}` + (extra ? `,${extra}` : '');
  return (await d.store.list(kind, d.namespace, { labelSelector: selector })).items;
}

/**
 * The sandbox a conversation was placed on (or asked for); undefined while not yet placed. The
 * controller labels the Conversation when it places it, before status.sandboxName is written.
 */
export function sandboxNameOf(conv: Conversation): string | undefined {
  return conv.status?.sandboxName ?? conv.metadata.labels?.[LABEL_SANDBOX] ?? conv.spec.sandboxName;
}

/** The status a client sees for a sandbox object (or its absence). */
export function sandboxPhase(sb: Sandbox | undefined): SandboxPhase {
  if (!sb || sb.metadata.deletionTimestamp) return 'MISSING';
  return sb.status?.phase ?? 'STARTING';
}

/** A conversation's `sandbox_status`: its sandbox's, or STARTING/ERROR while it has none yet. */
export function conversationSandboxStatus(conv: Conversation, sb: Sandbox | undefined): SandboxPhase {
  if (sandboxNameOf(conv) === undefined) return conv.status?.startTask?.status === 'ERROR' ? 'ERROR' : 'STARTING';
  return sandboxPhase(sb);
}

/**
 * Execution statuses in which the agent has paused itself — for the user's confirmation, or paused
 * by a client — while its sandbox keeps running (spec part 3: RUNNING → PAUSED "when the agent
 * pauses for user confirmation"). The record reads PAUSED then, and RUNNING again once it goes on.
 */
const AGENT_PAUSED = new Set(['waiting_for_confirmation', 'paused']);

/**
 * The agent waits: paused by itself or a client, or its run waits for the model provider's rate
 * limit (spec part 3: RUNNING → PAUSED "due to rate limits"; the execution status stays running).
 */
export function agentWaits(conv: Conversation): boolean {
  const exec = conv.status?.executionStatus ?? '';
  return AGENT_PAUSED.has(exec) || (exec === 'running' && conv.status?.rateLimitedUntil !== undefined);
}

/** The `sandbox_status` an app-conversation record shows: the conversation's, PAUSED while its agent waits on a running sandbox. */
export function shownSandboxStatus(conv: Conversation, sb: Sandbox | undefined): SandboxPhase {
  const status = conversationSandboxStatus(conv, sb);
  return status === 'RUNNING' && agentWaits(conv) ? 'PAUSED' : status;
}

/** Sandboxes by name, for records that show many conversations at once. */
export async function sandboxesByName(d: FacadeDeps, userId: string): Promise<Map<string, Sandbox>> {
  return new Map((await listOwned(d, SandboxKind, userId)).map((s) => [s.metadata.name, s]));
}

export function sessionSecretName(sandboxName: string): string {
  return `${sandboxName}-session`;
}

/** The sandbox's session key from the Secret the controller keeps; undefined until it exists. */
export async function sessionKeyOf(d: FacadeDeps, sandboxName: string): Promise<string | undefined> {
  const secret = await d.store.get(SecretKind, d.namespace, sessionSecretName(sandboxName));
  const b64 = secret?.data?.['key'];
  return b64 === undefined ? undefined : Buffer.from(b64, 'base64').toString('utf8');
}

/** Constant-time comparison of a presented key with the expected one. */
export function keyMatches(expected: string | undefined, presented: string): boolean {
  if (!expected || presented === '') return false;
  const a = createHash('sha256').update(expected).digest();
  const b = createHash('sha256').update(presented).digest();
  return timingSafeEqual(a, b);
}

/**
 * Read-modify-write of one object, retried on a stale resourceVersion. `change` returns the new
 * object, or undefined when nothing needs writing. Undefined when the object does not exist.
 */
export async function modify<T extends KubeObject>(
  d: FacadeDeps,
  kind: ResourceKind<T>,
  name: string,
  change: (obj: T) => T | undefined,
  opts: { status?: boolean } = {},
): Promise<T | undefined> {
  for (let attempt = 0; ; attempt++) {
    const obj = await d.store.get(kind, d.namespace, name);
    if (!obj) return undefined;
    const next = change(structuredClone(obj));
    if (!next) return obj;
    try {
      return opts.status ? await d.store.updateStatus(kind, next) : await d.store.update(kind, next);
    } catch (err) {
      if (!(err instanceof Conflict) || attempt >= 4) throw err;
    }
  }
}

export { ConversationKind, SandboxKind, SecretKind };
