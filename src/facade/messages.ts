// POST /api/v1/app-conversations/{id}/send-message. A RUNNING, ready conversation gets the
// message at once (proxied to its agent server); a PAUSED sandbox is resumed and the message is
// queued, as it is while the sandbox or the conversation is still starting; the delivery loop
// (delivery.ts) hands queued messages over in order once the sandbox runs. ERROR and MISSING
// conversations are read-only.
import { ConversationKind, type Conversation } from '../api/conversation.ts';
import { Conflict, Gone, Invalid, NotFound, TooManyRequests } from '../api/errors.ts';
import { SandboxKind, type Sandbox, type SandboxPhase } from '../api/sandbox.ts';
import type { ActivityRecorder } from './activity.ts';
import { admit } from './admission.ts';
import type { AppUser } from './db/app-db.ts';
import type { AgentMessage, FacadeDeps } from './deps.ts';
import { agentClientFor } from './agent-client.ts';
import { conversationSandboxStatus, getOwned, modify, sandboxNameOf, sessionKeyOf } from './resources.ts';
import { messageSizeIssue, type AppSendMessageRequest } from '../api/app/requests.ts';
import { agentServerDialUrl } from '../runtime/dial.ts';

export interface AppSendMessageResponse {
  success: boolean;
  sandbox_status: SandboxPhase;
  message: string | null;
}

/** Refuses new input for read-only conversations (spec part 3 and part 7 rule 3). */
export function assertWritable(id: string, status: SandboxPhase): void {
  if (status === 'ERROR') throw new Conflict(`Conversation ${id} is read-only: its sandbox is in ERROR. Its events can still be read.`);
  if (status === 'MISSING') throw new Gone(`Conversation ${id} is read-only: its sandbox is MISSING (deleted or cleaned up). Its events can still be read.`);
}

/** Whether a message can go to the agent server right now. */
export function isDeliverable(conv: Conversation, sb: Sandbox | undefined): sb is Sandbox {
  return (
    sb !== undefined &&
    conversationSandboxStatus(conv, sb) === 'RUNNING' &&
    sb.spec.paused !== true &&
    agentServerDialUrl(sb) !== undefined &&
    conv.status?.startTask?.status === 'READY'
  );
}

export async function deliver(d: FacadeDeps, conv: Conversation, sb: Sandbox, message: AgentMessage): Promise<void> {
  const key = await sessionKeyOf(d, sb.metadata.name);
  if (key === undefined) throw new Conflict(`Sandbox ${sb.metadata.name} has no session key yet`);
  await agentClientFor(d)(agentServerDialUrl(sb)!, key).sendMessage(conv.metadata.name, message);
}

export async function sendMessage(
  d: FacadeDeps,
  activity: ActivityRecorder,
  user: AppUser,
  id: string,
  req: AppSendMessageRequest,
): Promise<AppSendMessageResponse> {
  const conv = await getOwned(d, ConversationKind, user.id, id);
  if (!conv) throw new NotFound(`Conversation ${id} not found`);
  const tooLong = messageSizeIssue(req.content, ['body', 'content']);
  if (tooLong) throw new Invalid([tooLong]);
  const sandboxName = sandboxNameOf(conv);
  const sb = sandboxName ? await d.store.get(SandboxKind, d.namespace, sandboxName) : undefined;
  const status = conversationSandboxStatus(conv, sb);
  assertWritable(conv.metadata.name, status);
  if (conv.status?.startTask?.status === 'ERROR') {
    throw new Conflict(`Conversation ${conv.metadata.name} failed to start (${conv.status.startTask.detail ?? 'no detail'}) and cannot take messages`);
  }
  if (status === 'STARTING') {
    // Spec part 3: a STARTING sandbox takes no messages. A PAUSED one does (it resumes and the
    // message waits), and so does a RUNNING one whose conversation is still starting.
    throw new Conflict(
      `Conversation ${conv.metadata.name} cannot take messages while its sandbox is STARTING; send it once the start task is READY and the sandbox RUNNING`,
    );
  }
  const message: AgentMessage = { role: 'user', content: req.content, run: req.run ?? true };
  if (sandboxName) await activity.record(sandboxName);

  if (isDeliverable(conv, sb) && (await d.db.pending.count(conv.metadata.name)) === 0) {
    await deliver(d, conv, sb, message);
    return { success: true, sandbox_status: 'RUNNING', message: null };
  }

  const max = d.settings.maxPendingMessages ?? 10;
  if ((await d.db.pending.count(conv.metadata.name)) >= max) {
    throw new TooManyRequests(`Conversation ${conv.metadata.name} already has ${max} messages waiting for its sandbox`, 5);
  }
  if (sb && sb.spec.paused === true) {
    // Resuming a paused sandbox takes a slot again; one that is still pausing never gave it up.
    if (sb.status?.phase === 'PAUSED') await admit(d, 'Resuming this sandbox');
    await modify(d, SandboxKind, sb.metadata.name, (s) => (s.spec.paused === true ? ((s.spec.paused = false), s) : undefined));
  }
  const note = sb?.spec.paused === true || status === 'PAUSED' ? 'queued until the sandbox resumes' : 'queued until the conversation is ready';
  await d.db.pending.add(conv.metadata.name, { role: 'user', content: req.content, run: req.run ?? true }, d.clock.now().toUTC().toISO()!);
  return { success: true, sandbox_status: status, message: note };
}
