// Workspace reads of a conversation (spec part 4: file, git changes, git diff), proxied to the
// agent server of its sandbox. Read-only rules (spec part 3): no workspace access when the sandbox
// is in ERROR or gone; a paused sandbox has to be resumed first.
import { ConversationKind, type Conversation } from '../api/conversation.ts';
import { BadRequest, Conflict, Gone, NotFound } from '../api/errors.ts';
import { SandboxKind } from '../api/sandbox.ts';
import { AgentServerClient } from '../runtime/agent-server-client.ts';
import type { AppUser } from './db/app-db.ts';
import type { FacadeDeps } from './deps.ts';
import { conversationSandboxStatus, getOwned, sandboxNameOf, sessionKeyOf } from './resources.ts';

export async function agentFor(d: FacadeDeps, user: AppUser, id: string): Promise<{ conv: Conversation; client: AgentServerClient }> {
  const conv = await getOwned(d, ConversationKind, user.id, id);
  if (!conv || conv.metadata.deletionTimestamp) throw new NotFound(`Conversation ${id} not found`);
  const name = sandboxNameOf(conv);
  const sb = name ? await d.store.get(SandboxKind, d.namespace, name) : undefined;
  const status = conversationSandboxStatus(conv, sb);
  if (status === 'MISSING') throw new Gone(`Conversation ${id} is read-only: its sandbox is gone, and workspace files went with it`);
  if (status === 'ERROR') throw new Conflict(`Conversation ${id} is read-only: its sandbox failed, so its workspace cannot be read`);
  if (status !== 'RUNNING' || !sb?.status?.url) throw new Conflict(`The sandbox of conversation ${id} is ${status}; resume it (POST /api/v1/sandboxes/${name}/resume) to read its workspace`);
  return { conv, client: new AgentServerClient(sb.status.url, await sessionKeyOf(d, sb.metadata.name)) };
}

function absolute(path: string | undefined, param: string): string {
  if (!path) throw new BadRequest(`Query parameter ${param} is required (an absolute path in the sandbox)`);
  if (!path.startsWith('/')) throw new BadRequest(`${param} must be an absolute path in the sandbox, got '${path}'`);
  return path;
}

/** The file's content as a JSON string, as OpenHands answers it. */
export async function readWorkspaceFile(d: FacadeDeps, user: AppUser, id: string, filePath: string | undefined): Promise<string> {
  const { client } = await agentFor(d, user, id);
  return client.getText('/api/file/download', { path: absolute(filePath, 'file_path') });
}

export async function workspaceGit(d: FacadeDeps, user: AppUser, id: string, what: 'changes' | 'diff', path: string | undefined, ref: string | undefined): Promise<unknown> {
  const { client } = await agentFor(d, user, id);
  return client.getJson(`/api/git/${what}`, { path: absolute(path, 'path'), ...(ref ? { ref } : {}) });
}
