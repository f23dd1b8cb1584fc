// POST /app-conversations/{id}/fork (spec part 4, "fork a conversation"): a new conversation of
// the same owner in the same sandbox, started by the controller as a fork on the agent server
// (ConversationSpec.forkOf): the source's events and state are copied, the source is not changed,
// and the fork goes on from there. Answers a start task, as a start does; the fork's own events
// reach the app's event log through the sink like any conversation's.
import { API_VERSION, LABEL_OWNER, LABEL_START_TASK } from '../api/meta.ts';
import { ConversationKind, type Conversation, type ConversationSpec } from '../api/conversation.ts';
import { Conflict } from '../api/errors.ts';
import type { AppForkRequest } from '../api/app/requests.ts';
import type { AppUser } from './db/app-db.ts';
import type { FacadeDeps } from './deps.ts';
import { startTaskRecord } from './records.ts';
import { sandboxNameOf } from './resources.ts';
import { newId } from './start.ts';
import { agentFor } from './workspace.ts';

export async function forkConversation(d: FacadeDeps, user: AppUser, sourceId: string, req: AppForkRequest): Promise<Record<string, unknown>> {
  // The source's sandbox must serve (a paused one is resumed, as a workspace read does): the
  // fork is made there. A read-only source (sandbox gone or failed) cannot be forked: 410 / 409.
  const { conv: src } = await agentFor(d, user, sourceId);
  const sandboxName = sandboxNameOf(src);
  if (!sandboxName || src.status?.startTask?.status !== 'READY') throw new Conflict(`Conversation ${sourceId} is still starting; fork it once its start task is READY`);
  const s = src.spec;
  const spec: ConversationSpec = {
    owner: user.id,
    title: req.title ?? `Fork of ${s.title ?? src.metadata.name}`.slice(0, 200),
    sandboxName,
    forkOf: src.metadata.name,
    ...(s.selectedRepository ? { selectedRepository: s.selectedRepository } : {}),
    ...(s.selectedBranch ? { selectedBranch: s.selectedBranch } : {}),
    ...(s.gitProvider ? { gitProvider: s.gitProvider } : {}),
    ...(s.llmModel ? { llmModel: s.llmModel } : {}),
    ...(s.agentType ? { agentType: s.agentType } : {}),
  };
  const draft: Conversation = {
    apiVersion: API_VERSION,
    kind: 'Conversation',
    metadata: { name: newId(), namespace: d.namespace, labels: { [LABEL_OWNER]: user.id, [LABEL_START_TASK]: newId() } },
    spec,
  };
  return startTaskRecord(await d.store.create(ConversationKind, draft), undefined);
}
