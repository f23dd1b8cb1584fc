// PATCH, DELETE and download of one conversation (spec part 4).
import { zipSync, strToU8 } from 'fflate';
import { ConversationKind, type Conversation } from '../api/conversation.ts';
import { AppConversationUpdateRequest } from '../api/app/requests.ts';
import { Invalid, NotFound, type ValidationIssue } from '../api/errors.ts';
import { parseValue } from '../api/events/validate.ts';
import { LABEL_SANDBOX } from '../api/meta.ts';
import { SandboxKind } from '../api/sandbox.ts';
import { SecretKind } from '../api/secret.ts';
import { AgentServerClient } from '../runtime/agent-server-client.ts';
import type { AppUser } from './db/app-db.ts';
import type { FacadeDeps } from './deps.ts';
import { batchConversations } from './queries.ts';
import { deletedByUser, getOwned, listOwned, modify, sandboxNameOf, sessionKeyOf } from './resources.ts';
import { LABEL_PARENT } from './records.ts';
import { agentServerDialUrl } from '../runtime/dial.ts';
import { conversationPrefix } from '../objstore/keys.ts';

async function owned(d: FacadeDeps, user: AppUser, id: string): Promise<Conversation> {
  const conv = await getOwned(d, ConversationKind, user.id, id);
  if (!conv || conv.metadata.deletionTimestamp) throw new NotFound(`Conversation ${id} not found`);
  return conv;
}

async function record(d: FacadeDeps, user: AppUser, name: string): Promise<Record<string, unknown>> {
  const [rec] = await batchConversations(d, user, [name]);
  if (!rec) throw new NotFound(`Conversation ${name} not found`);
  return rec;
}

/**
 * OpenHands' PATCH also takes selected_repository, selected_branch and git_provider and only
 * records them. agentyard does not: here they decide what the controller clones, the agent's
 * working directory, the organization configuration repository and which organization
 * marketplaces apply, all fixed when the conversation starts. A recorded new value would make the
 * record name one repository while the agent works in another (or, mid-start, race the clone), so
 * they are refused with a 422 naming each field, together with any other issue of the body.
 */
export const FIXED_AT_START = ['selected_repository', 'selected_branch', 'git_provider'] as const;

export function refuseFixedAtStart(body: unknown): void {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return;
  const present = FIXED_AT_START.filter((f) => f in body);
  if (present.length === 0) return;
  const issues: ValidationIssue[] = present.map((f) => ({
    loc: ['body', f],
    msg: `${f} is fixed when the conversation starts (it decides what is cloned and where the agent works) and cannot be changed; start a new conversation for another repository`,
    type: 'value_error',
  }));
  const rest = Object.fromEntries(Object.entries(body).filter(([k]) => !present.includes(k as (typeof FIXED_AT_START)[number])));
  try {
    parseValue(AppConversationUpdateRequest, rest, { prefix: ['body'] });
  } catch (err) {
    if (!(err instanceof Invalid)) throw err;
    issues.push(...err.detail);
  }
  throw new Invalid(issues);
}

/** Only the fields present are applied; `title: null` clears it. */
export async function updateConversation(d: FacadeDeps, user: AppUser, id: string, patch: { title?: string | null; public?: boolean | null }): Promise<Record<string, unknown>> {
  const conv = await owned(d, user, id);
  if ('public' in patch) {
    await modify(d, ConversationKind, conv.metadata.name, (c) => {
      const { public: _old, ...fields } = c.spec.clientFields ?? {};
      const next = patch.public === null || patch.public === undefined ? fields : { ...fields, public: patch.public };
      const { clientFields: _f, ...spec } = c.spec;
      c.spec = Object.keys(next).length > 0 ? { ...spec, clientFields: next } : spec;
      return c;
    });
  }
  if ('title' in patch) {
    await modify(d, ConversationKind, conv.metadata.name, (c) => {
      const { title: _old, ...spec } = c.spec;
      c.spec = patch.title === null || patch.title === undefined ? spec : { ...spec, title: patch.title };
      return c;
    });
    await d.db.setConversationMeta(conv.metadata.name, { ...(await d.db.getConversationMeta(conv.metadata.name)), title: patch.title ?? null });
  }
  return record(d, user, conv.metadata.name);
}

/**
 * Deletes the conversation and its stored events; deleting the last conversation of a sandbox
 * removes the sandbox too (spec part 4 rule 4).
 */
export async function deleteConversation(d: FacadeDeps, user: AppUser, id: string): Promise<{ success: true }> {
  const conv = await getOwned(d, ConversationKind, user.id, id);
  if (!conv) {
    // Idempotent: the caller deleted it before. Never seen, or someone else's: unknown.
    if (await deletedByUser(d, 'Conversation', user.id, id)) return { success: true };
    throw new NotFound(`Conversation ${id} not found`);
  }
  // Every step below tolerates an earlier, interrupted attempt (a conversation already being deleted).
  const name = conv.metadata.name;
  // Written first, so a DELETE retried after a failure part-way still answers 200 once it is gone.
  await d.db.recordDeletion('Conversation', name, user.id);
  // Sub-conversations go with their parent (as in OpenHands), first: the last conversation of a
  // shared sandbox is then the parent, which takes the sandbox as any last conversation does.
  for (const child of await listOwned(d, ConversationKind, user.id, `${LABEL_PARENT}=${name}`)) {
    await deleteConversation(d, user, child.metadata.name);
  }
  const sandboxName = sandboxNameOf(conv);
  const sb = sandboxName ? await d.store.get(SandboxKind, d.namespace, sandboxName) : undefined;
  const dialUrl = sb?.status?.phase === 'RUNNING' ? agentServerDialUrl(sb) : undefined;
  if (sb && dialUrl) {
    // Best effort: the agent server forgets it now; the sandbox may be shared with others.
    await new AgentServerClient(dialUrl, await sessionKeyOf(d, sb.metadata.name)).deleteConversation(name).catch((err: unknown) => {
      d.log?.warn({ err, conversation: name }, 'the agent server did not delete the conversation');
    });
  }
  // Before the resource: a store that is down fails the DELETE (503, retried by the caller) while
  // the conversation can still be found, instead of leaving its objects behind unreachable.
  await d.objects?.deletePrefix(conversationPrefix(name));
  await ignoreNotFound(d.store.delete(ConversationKind, d.namespace, name));
  await d.db.purgeConversation(name);
  await ignoreNotFound(d.store.delete(SecretKind, d.namespace, `${name}-secrets`));
  if (sb && !sb.metadata.deletionTimestamp) {
    const { items } = await d.store.list(ConversationKind, d.namespace, { labelSelector: `${LABEL_SANDBOX}=${sb.metadata.name}` });
    if (items.every((c) => c.metadata.name === name || c.metadata.deletionTimestamp)) {
      // The caller's delete took the sandbox with it: a later DELETE of the sandbox is a repeat too.
      await d.db.recordDeletion('Sandbox', sb.metadata.name, user.id);
      await ignoreNotFound(d.store.delete(SandboxKind, d.namespace, sb.metadata.name));
    }
  }
  return { success: true };
}

/**
 * A zip of every stored event (`event_000001_<id>.json`, in order) plus `meta.json` (the record),
 * plus the conversation's files kept in the object store (`files/...`: browser recordings of a
 * sandbox that is gone). Only the conversation's own prefix is read: the internal workspace
 * archives are never part of it.
 * The record's `session_api_key` is left out: a download is an archive that gets passed around and
 * outlives the sandbox, and that key opens the live sandbox (commands, files) while it runs.
 */
export async function downloadConversation(d: FacadeDeps, user: AppUser, id: string): Promise<{ filename: string; body: Buffer }> {
  const conv = await owned(d, user, id);
  const name = conv.metadata.name;
  const { session_api_key: _liveKey, ...meta } = await record(d, user, name);
  const files: Record<string, Uint8Array> = { 'meta.json': strToU8(JSON.stringify(meta, null, 2)) };
  let fromSeq: number | undefined;
  let index = 0;
  do {
    const page = await d.db.events.search(name, { limit: 500, ...(fromSeq !== undefined ? { fromSeq } : {}) });
    for (const json of page.items) {
      const eventId = (JSON.parse(json) as { id: string }).id;
      files[`event_${String(++index).padStart(6, '0')}_${eventId}.json`] = strToU8(json);
    }
    fromSeq = page.nextSeq ?? undefined;
  } while (fromSeq !== undefined);
  const prefix = `${conversationPrefix(name)}files/`;
  for (const o of (await d.objects?.list(prefix)) ?? []) {
    const body = await d.objects!.get(o.key);
    if (body) files[`files/${o.key.slice(prefix.length)}`] = body;
  }
  return { filename: `conversation_${name}.zip`, body: Buffer.from(zipSync(files, { level: 6 })) };
}

async function ignoreNotFound(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (err) {
    if (!(err instanceof NotFound)) throw err;
  }
}
