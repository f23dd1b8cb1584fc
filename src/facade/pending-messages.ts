// POST /api/v1/conversations/{id}/pending-messages (OpenHands): queue a message for a conversation
// that may still be starting; it is delivered, in order, once the conversation is READY and its
// sandbox RUNNING (the same queue send-message uses for a paused sandbox, PendingDelivery).
// The id may be the conversation's, or `task-<start task id>` before the client knows the former.
import { ConversationKind, type Conversation } from '../api/conversation.ts';
import { Conflict, Invalid, NotFound, TooManyRequests } from '../api/errors.ts';
import { LABEL_START_TASK } from '../api/meta.ts';
import { SandboxKind } from '../api/sandbox.ts';
import { messageSizeIssue } from '../api/app/requests.ts';
import type { PendingMessageRequest } from '../api/app/compat.ts';
import type { AppUser } from './db/types.ts';
import type { FacadeDeps } from './deps.ts';
import { assertWritable, deliver, isDeliverable } from './messages.ts';
import { conversationSandboxStatus, getOwned, listOwned, normalizeId, sandboxNameOf } from './resources.ts';

async function conversationFor(d: FacadeDeps, user: AppUser, id: string): Promise<Conversation | undefined> {
  if (!id.startsWith('task-')) return getOwned(d, ConversationKind, user.id, id);
  const task = normalizeId(id.slice('task-'.length));
  if (!task) return undefined;
  return (await listOwned(d, ConversationKind, user.id, `${LABEL_START_TASK}=${task}`))[0];
}

export async function queuePendingMessage(d: FacadeDeps, user: AppUser, id: string, req: PendingMessageRequest): Promise<{ id: string; queued: boolean; position: number }> {
  const conv = await conversationFor(d, user, id);
  if (!conv) throw new NotFound(`Conversation ${id} not found`);
  const tooLong = messageSizeIssue(req.content, ['body', 'content']);
  if (tooLong) throw new Invalid([tooLong]);
  const name = conv.metadata.name;
  const sandboxName = sandboxNameOf(conv);
  const sb = sandboxName ? await d.store.get(SandboxKind, d.namespace, sandboxName) : undefined;
  assertWritable(name, conversationSandboxStatus(conv, sb));
  if (conv.status?.startTask?.status === 'ERROR') throw new Conflict(`Conversation ${name} failed to start (${conv.status.startTask.detail ?? 'no detail'}) and cannot take messages`);
  const max = d.settings.maxPendingMessages ?? 10;
  const waiting = await d.db.pending.count(name);
  // Ready now and nothing ahead of it: delivered at once (no later change would wake the queue).
  if (waiting === 0 && isDeliverable(conv, sb)) {
    await deliver(d, conv, sb, { role: 'user', content: req.content, run: true });
    return { id: `delivered-${d.clock.now().toMillis()}`, queued: false, position: 0 };
  }
  if (waiting >= max) throw new TooManyRequests(`Conversation ${name} already has ${max} messages waiting`, 5);
  const rowId = await d.db.pending.add(name, { role: 'user', content: req.content, run: true }, d.clock.now().toUTC().toISO()!);
  return { id: String(rowId), queued: true, position: waiting + 1 };
}
