// The event sink agent servers push to (src/api/event-sink.ts): events stored idempotently by
// (conversation, seq) and event id, acknowledged up to the first gap; conversation summaries
// written to the Conversation status. Authenticated by the sandbox's session key.
import { Value } from 'typebox/value';
import { ConversationKind, ExecutionStatus, UsageMetrics, type Conversation } from '../api/conversation.ts';
import { Conflict, Invalid, NotFound, Unauthorized, type ValidationIssue } from '../api/errors.ts';
import type { SinkAck, SinkConversationUpdate, SinkEventBatch } from '../api/event-sink.ts';
import { parseEvent, type Event } from '../api/events/index.ts';
import { SandboxKind, type Sandbox } from '../api/sandbox.ts';
import type { ActivityRecorder } from './activity.ts';
import type { FacadeDeps } from './deps.ts';
import { isoOf } from './paging.ts';
import { conversationName, keyMatches, modify, normalizeId, normalizeName, sandboxNameOf, sessionKeyOf } from './resources.ts';
import { LABEL_AGENT_CONVERSATION } from '../api/meta.ts';
import { counter, defaultRegistry, type Registry } from '../util/metrics.ts';

/** The sandbox whose session key was presented; 401 for anything else, unknown sandboxes included. */
export async function authenticateSandbox(d: FacadeDeps, sandboxId: string, presented: string): Promise<Sandbox> {
  const name = normalizeName(sandboxId);
  const sb = name ? await d.store.get(SandboxKind, d.namespace, name) : undefined;
  if (!sb || !keyMatches(await sessionKeyOf(d, sb.metadata.name), presented)) throw new Unauthorized('Invalid session API key for this sandbox');
  return sb;
}

/** By resource name, or, for a conversation applied with kubectl under a free name, by the id label the controller set. */
export async function conversationByAgentId(d: FacadeDeps, conversationId: string): Promise<Conversation | undefined> {
  const name = conversationName(conversationId);
  const byName = name ? await d.store.get(ConversationKind, d.namespace, name) : undefined;
  if (byName) return byName;
  const hex = normalizeId(conversationId);
  if (!hex) return undefined;
  const { items } = await d.store.list(ConversationKind, d.namespace, { labelSelector: `${LABEL_AGENT_CONVERSATION}=${hex}` });
  return items[0];
}

/**
 * The conversation, if it exists and is attached to this sandbox. One that is attached elsewhere or
 * owned by someone else is treated exactly like an unknown one (404 for events, a no-op for status
 * updates): a sandbox runs hostile code with its key, and a different answer would tell it which
 * conversation ids exist. Only the owner's own not-yet-placed conversation answers 409 (a start
 * racing its first events; the agent server keeps them and retries).
 */
async function attachedConversation(d: FacadeDeps, sb: Sandbox, conversationId: string): Promise<Conversation | undefined> {
  const conv = await conversationByAgentId(d, conversationId);
  if (!conv || (conv.spec.owner ?? '') !== (sb.spec.owner ?? '')) return undefined;
  const attached = sandboxNameOf(conv);
  if (attached === undefined) throw new Conflict(`Conversation ${conversationId} is not placed on a sandbox yet`);
  return attached === sb.metadata.name ? conv : undefined;
}

function parseItems(batch: SinkEventBatch): { seq: number; event: Event }[] {
  const issues: ValidationIssue[] = [];
  const items = batch.items.flatMap((item, i) => {
    try {
      return [{ seq: item.seq, event: parseEvent(item.event, ['body', 'items', i, 'event']) }];
    } catch (err) {
      if (!(err instanceof Invalid)) throw err;
      issues.push(...err.detail);
      return [];
    }
  });
  if (issues.length > 0) throw new Invalid(issues);
  return items;
}

/** `agentyard_events_ingested_total`; createApiApp registers it at start, so the series exists at 0. */
export const eventsIngested = (registry: Registry) => counter(registry, 'agentyard_events_ingested_total', 'Events agent servers pushed that the event sink stored (re-sent duplicates included)');

export async function ingestEvents(d: FacadeDeps, activity: ActivityRecorder, sb: Sandbox, conversationId: string, batch: SinkEventBatch): Promise<SinkAck> {
  const items = parseItems(batch);
  const conv = await attachedConversation(d, sb, conversationId);
  if (!conv) {
    const name = conversationName(conversationId);
    // Unknown: refuse, so the agent server keeps them and retries (nothing is lost to a race).
    if (!name || !(await d.db.wasDeleted(name))) throw new NotFound(`Conversation ${conversationId} not found`);
    // Deleted for good: nobody can read these any more; acknowledging lets the agent server purge them.
    const last = Math.max(0, ...items.map((i) => i.seq));
    d.log?.info({ conversation: name, sandbox: sb.metadata.name, lastSeq: last }, 'events for a deleted conversation: discarded');
    return { acknowledged_seq: last };
  }
  const result = await d.db.events.ingest(conv.metadata.name, items);
  if (result.mismatched.length > 0) {
    d.log?.warn({ conversation: conv.metadata.name, seqs: result.mismatched }, 'event sink: a seq arrived again with a different event id; kept the first');
  }
  eventsIngested(d.metrics ?? defaultRegistry()).inc(items.length);
  if (items.length > 0) await activity.record(sb.metadata.name);
  return { acknowledged_seq: result.acknowledgedSeq };
}

export async function updateConversation(d: FacadeDeps, sb: Sandbox, update: SinkConversationUpdate): Promise<void> {
  const conv = await attachedConversation(d, sb, update.id);
  if (!conv) return;
  const id = conv.metadata.name;
  const status = Value.Check(ExecutionStatus, update.execution_status) ? update.execution_status : undefined;
  const metrics = update.metrics !== undefined && Value.Check(UsageMetrics, update.metrics) ? update.metrics : undefined;
  // Absent (an agent server that does not report it) is no wait, as null is.
  const limitedUntil = typeof update.rate_limited_until === 'string' && !Number.isNaN(Date.parse(update.rate_limited_until)) ? new Date(update.rate_limited_until).toISOString() : undefined;
  await modify(
    d,
    ConversationKind,
    id,
    (c) => {
      const { rateLimitedUntil: _, ...rest } = c.status ?? {};
      const next = { ...rest, ...(status !== undefined ? { executionStatus: status } : {}), ...(metrics !== undefined ? { metrics } : {}), ...(limitedUntil ? { rateLimitedUntil: limitedUntil } : {}) };
      if (JSON.stringify(next) === JSON.stringify(c.status ?? {})) return undefined;
      c.status = next;
      return c;
    },
    { status: true },
  );
  const prev = await d.db.getConversationMeta(id);
  await d.db.setConversationMeta(id, {
    title: update.title === undefined ? prev.title : update.title,
    updatedAt: isoOf(update.updated_at) || prev.updatedAt,
  });
}
