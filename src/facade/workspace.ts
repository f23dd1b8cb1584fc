// Workspace reads of a conversation (spec part 4: file, git changes, git diff, skills, hooks),
// proxied to the agent server of its sandbox. Read-only rules (spec part 3): no workspace access
// when the sandbox is in ERROR or gone. A PAUSED sandbox keeps its workspace and is resumed by the
// next access (spec part 3, "pause-resume request or next access"), so a read resumes it and waits
// for it, up to FacadeSettings.resumeWaitSeconds; past that the caller gets 503 with Retry-After.
import { ConversationKind, type Conversation } from '../api/conversation.ts';
import { posix } from 'node:path';
import { BadGateway, Conflict, Gone, Invalid, NotFound, Unavailable } from '../api/errors.ts';
import { SandboxKind, type Sandbox } from '../api/sandbox.ts';
import { AgentServerClient } from '../runtime/agent-server-client.ts';
import type { AppUser } from './db/app-db.ts';
import type { FacadeDeps } from './deps.ts';
import { conversationSandboxStatus, getOwned, sandboxNameOf, sandboxPhase, sessionKeyOf } from './resources.ts';
import { awaitSandbox } from './sandbox-wait.ts';
import { resumeSandbox } from './sandboxes.ts';
import { agentServerDialUrl } from '../runtime/dial.ts';

const DEFAULT_RESUME_WAIT_SECONDS = 30;

export async function agentFor(d: FacadeDeps, user: AppUser, id: string): Promise<{ conv: Conversation; client: AgentServerClient }> {
  const conv = await getOwned(d, ConversationKind, user.id, id);
  if (!conv || conv.metadata.deletionTimestamp) throw new NotFound(`Conversation ${id} not found`);
  const name = sandboxNameOf(conv);
  let sb = name ? await d.store.get(SandboxKind, d.namespace, name) : undefined;
  refuseReadOnly(id, conversationSandboxStatus(conv, sb));
  if (!sb) throw new Conflict(`Conversation ${id} has no sandbox yet (STARTING); read its workspace once its start task is READY`);
  if (!serving(sb)) sb = await resumeForRead(d, user, id, sb);
  return { conv, client: new AgentServerClient(agentServerDialUrl(sb)!, await sessionKeyOf(d, sb.metadata.name)) };
}

function serving(sb: Sandbox | undefined): sb is Sandbox {
  return sandboxPhase(sb) === 'RUNNING' && !!agentServerDialUrl(sb);
}

function refuseReadOnly(id: string, status: ReturnType<typeof sandboxPhase>): void {
  if (status === 'MISSING') throw new Gone(`Conversation ${id} is read-only: its sandbox is gone, and workspace files went with it`);
  if (status === 'ERROR') throw new Conflict(`Conversation ${id} is read-only: its sandbox failed, so its workspace cannot be read`);
}

/** Resumes a paused (or still starting) sandbox and waits until its agent server serves. */
async function resumeForRead(d: FacadeDeps, user: AppUser, id: string, sb: Sandbox): Promise<Sandbox> {
  await resumeSandbox(d, user, sb.metadata.name); // idempotent; 429 past the capacity
  const waitSeconds = d.settings.resumeWaitSeconds ?? DEFAULT_RESUME_WAIT_SECONDS;
  const ready = await awaitSandbox(d, sb, (s) => serving(s) || sandboxPhase(s) === 'ERROR' || sandboxPhase(s) === 'MISSING', waitSeconds * 1000);
  if (ready === null) {
    throw new Unavailable(`The sandbox of conversation ${id} is resuming and did not answer within ${waitSeconds} s; try again shortly`, { retryAfterSeconds: 5 });
  }
  refuseReadOnly(id, sandboxPhase(ready));
  return ready as Sandbox;
}

/**
 * A path in the sandbox: an absolute one as given; a relative one (as the file listing answers
 * them) inside the conversation's working directory. The agent server's own rules apply to either.
 */
async function inSandbox(path: string | undefined, param: string, workingDir: () => Promise<string>): Promise<string> {
  if (!path) throw new Invalid([{ loc: ['query', param], msg: 'Field required (a path in the sandbox: absolute, or relative to the working directory)', type: 'missing' }]);
  return path.startsWith('/') ? path : posix.join(await workingDir(), path);
}

/** The conversation's working directory as an absolute path (the agent server may hold a relative one, inside its workspace). */
async function workingDirOf(client: AgentServerClient, conv: Conversation): Promise<string> {
  const info = await client.getConversation(conv.metadata.name);
  if (!info) throw new NotFound(`Conversation ${conv.metadata.name} is not known to its agent server`);
  const dir = info.workspace.working_dir;
  if (dir.startsWith('/')) return dir;
  const home = (await client.getJson('/api/file/home')) as { locations?: { label: string; path: string }[] };
  const root = home.locations?.find((l) => l.label === 'Workspace')?.path;
  if (!root) throw new BadGateway('The agent server did not say where its workspace is');
  return posix.join(root, dir);
}

/** The file's content as a JSON string, as OpenHands answers it. */
export async function readWorkspaceFile(d: FacadeDeps, user: AppUser, id: string, filePath: string | undefined): Promise<string> {
  const { conv, client } = await agentFor(d, user, id);
  return client.getText('/api/file/download', { path: await inSandbox(filePath, 'file_path', () => workingDirOf(client, conv)) });
}

/** Files under `path` (default: the conversation's working directory), relative to it. */
export async function listWorkspaceFiles(d: FacadeDeps, user: AppUser, id: string, path: string | undefined): Promise<string[]> {
  const { conv, client } = await agentFor(d, user, id);
  let dir = path;
  if (dir === undefined) {
    const info = await client.getConversation(conv.metadata.name);
    if (!info) throw new NotFound(`Conversation ${id} is not known to its agent server`);
    dir = info.workspace.working_dir;
  }
  return (await client.getJson('/api/agentyard/files', { path: dir })) as string[];
}

export async function workspaceGit(d: FacadeDeps, user: AppUser, id: string, what: 'changes' | 'diff', path: string | undefined, ref: string | undefined): Promise<unknown> {
  const { conv, client } = await agentFor(d, user, id);
  return client.getJson(`/api/git/${what}`, { path: await inSandbox(path, 'path', () => workingDirOf(client, conv)), ...(ref ? { ref } : {}) });
}
