// Reads behind the batch, search and count routes of conversations and start tasks. Everything is
// scoped to the caller by the owner label; foreign ids read exactly like unknown ones (null).
import { ConversationKind, type Conversation } from '../api/conversation.ts';
import { createdAtOf, LABEL_START_TASK } from '../api/meta.ts';
import type { Sandbox } from '../api/sandbox.ts';
import type { AppUser } from './db/types.ts';
import type { FacadeDeps } from './deps.ts';
import { pageOf, timeParam, isoOf, type Page } from './paging.ts';
import { appConversationRecord, LABEL_PARENT, conversationTitle, conversationUpdatedAt, startTaskRecord, startTaskUpdatedAt } from './records.ts';
import { readOwned, normalizeId, sandboxesByName, sandboxNameOf, sessionKeyOf } from './resources.ts';
import type { ConversationCountQuery, ConversationSearchQuery, StartTaskCountQuery, StartTaskSearchQuery } from '../api/app/requests.ts';

type Rec = Record<string, unknown>;

/**
 * Records of a page of conversations. `owned` is every conversation of the caller when the caller
 * has just listed them (their sub-conversations are among them); otherwise they are listed here.
 * The app store is read once per page (titles, newest events), not once per conversation.
 */
export async function conversationRecords(d: FacadeDeps, user: AppUser, convs: Conversation[], owned?: Conversation[]): Promise<Rec[]> {
  if (convs.length === 0) return [];
  const ids = convs.map((c) => c.metadata.name);
  const [sandboxes, children, metas, lastEvents] = await Promise.all([
    sandboxesByName(d, user.id),
    owned ? owned.filter((c) => c.metadata.labels?.[LABEL_PARENT] !== undefined) : readOwned(d, ConversationKind, user.id, LABEL_PARENT),
    d.db.getConversationMetas(ids),
    d.db.events.lastTimestamps(ids),
  ]);
  const subs = new Map<string, string[]>();
  for (const child of children) {
    const parent = child.metadata.labels![LABEL_PARENT]!;
    subs.set(parent, [...(subs.get(parent) ?? []), child.metadata.name]);
  }
  const keys = new Map<string, string | undefined>();
  const out: Rec[] = [];
  for (const conv of convs) {
    const name = sandboxNameOf(conv);
    const sandbox = name ? sandboxes.get(name) : undefined;
    if (sandbox?.status?.phase === 'RUNNING' && !keys.has(sandbox.metadata.name)) keys.set(sandbox.metadata.name, await sessionKeyOf(d, sandbox.metadata.name));
    const id = conv.metadata.name;
    out.push(
      appConversationRecord({
        conv,
        sandbox,
        meta: metas.get(id)!,
        lastEventAt: lastEvents.get(id),
        sessionKey: sandbox ? keys.get(sandbox.metadata.name) : undefined,
        subConversationIds: subs.get(id) ?? [],
      }),
    );
  }
  return out;
}

/** `GET /app-conversations?ids=`: aligned with the input, null for unknown or foreign ids. */
export async function batchConversations(d: FacadeDeps, user: AppUser, ids: string[]): Promise<(Rec | null)[]> {
  const byName = new Map((await readOwned(d, ConversationKind, user.id)).map((c) => [c.metadata.name, c]));
  const wanted = ids.map((id) => {
    const n = normalizeId(id);
    return n ? byName.get(n) : undefined;
  });
  const recs = await conversationRecords(d, user, wanted.filter((c): c is Conversation => c !== undefined), [...byName.values()]);
  let i = 0;
  return wanted.map((c) => (c ? recs[i++]! : null));
}

/** The conversations the query selects; titles and newest events are read for all of them at once, and only when filtered on. */
export async function filterConversations(d: FacadeDeps, convs: Conversation[], q: ConversationCountQuery): Promise<Conversation[]> {
  const createdGte = timeParam(q.created_at__gte, 'created_at__gte');
  const createdLt = timeParam(q.created_at__lt, 'created_at__lt');
  const updatedGte = timeParam(q.updated_at__gte, 'updated_at__gte');
  const updatedLt = timeParam(q.updated_at__lt, 'updated_at__lt');
  const title = q.title__contains?.toLowerCase();
  // Conversation ids are written with or without dashes, as everywhere in the app API.
  const only = q.id__eq === undefined ? undefined : (normalizeId(q.id__eq) ?? '');
  const cheap = convs.filter((c) => {
    const created = isoOf(createdAtOf(c));
    if (createdGte !== undefined && created < createdGte) return false;
    if (createdLt !== undefined && created >= createdLt) return false;
    if (only !== undefined && c.metadata.name !== only) return false;
    if (q.sandbox_id__eq !== undefined && sandboxNameOf(c) !== q.sandbox_id__eq) return false;
    // OpenHands lists sub-conversations only when asked to.
    return q.include_sub_conversations === true || c.spec.parentConversation === undefined;
  });
  const byUpdate = updatedGte !== undefined || updatedLt !== undefined;
  if (cheap.length === 0 || (title === undefined && !byUpdate)) return cheap;
  const ids = cheap.map((c) => c.metadata.name);
  const [metas, lastEvents] = await Promise.all([d.db.getConversationMetas(ids), byUpdate ? d.db.events.lastTimestamps(ids) : new Map<string, string>()]);
  return cheap.filter((c) => {
    const id = c.metadata.name;
    const meta = metas.get(id)!;
    if (title !== undefined && !conversationTitle(c, meta.title).toLowerCase().includes(title)) return false;
    if (byUpdate) {
      const updated = isoOf(conversationUpdatedAt({ conv: c, meta, lastEventAt: lastEvents.get(id) }));
      if (updatedGte !== undefined && updated < updatedGte) return false;
      if (updatedLt !== undefined && updated >= updatedLt) return false;
    }
    return true;
  });
}

export async function searchConversations(d: FacadeDeps, user: AppUser, q: ConversationSearchQuery): Promise<Page<Rec>> {
  const owned = await readOwned(d, ConversationKind, user.id);
  const convs = await filterConversations(d, owned, q);
  // Newest first (OpenHands' CREATED_AT_DESC); the cursor is (creation time, name).
  const page = pageOf(
    convs.map((c) => ({ key: isoOf(createdAtOf(c)), name: c.metadata.name, item: c })),
    { pageId: q.page_id, limit: q.limit ?? 100, descending: true },
  );
  return { items: await conversationRecords(d, user, page.items, owned), next_page_id: page.next_page_id };
}

export async function countConversations(d: FacadeDeps, user: AppUser, q: ConversationCountQuery): Promise<number> {
  return (await filterConversations(d, await readOwned(d, ConversationKind, user.id), q)).length;
}

async function startTaskRecords(d: FacadeDeps, user: AppUser, convs: Conversation[]): Promise<Rec[]> {
  const sandboxes: Map<string, Sandbox> = convs.length > 0 ? await sandboxesByName(d, user.id) : new Map();
  return convs.map((c) => {
    const name = sandboxNameOf(c);
    return startTaskRecord(c, name ? sandboxes.get(name) : undefined);
  });
}

/** `GET /app-conversations/start-tasks?ids=`: aligned, null for unknown or foreign ids. */
export async function batchStartTasks(d: FacadeDeps, user: AppUser, ids: string[]): Promise<(Rec | null)[]> {
  const norm = ids.map(normalizeId);
  const valid = [...new Set(norm.filter((n): n is string => n !== undefined))];
  const convs = valid.length === 0 ? [] : await readOwned(d, ConversationKind, user.id, `${LABEL_START_TASK} in (${valid.join(',')})`);
  const recs = await startTaskRecords(d, user, convs);
  const byTask = new Map(convs.map((c, i) => [c.metadata.labels?.[LABEL_START_TASK], recs[i]!]));
  return norm.map((n) => (n ? (byTask.get(n) ?? null) : null));
}

function startTaskFilter(q: StartTaskCountQuery): (c: Conversation) => boolean {
  const createdGte = timeParam(q.created_at__gte, 'created_at__gte');
  const conv = q.conversation_id__eq === undefined ? undefined : (normalizeId(q.conversation_id__eq) ?? '-');
  return (c) => (conv === undefined || c.metadata.name === conv) && (createdGte === undefined || isoOf(createdAtOf(c)) >= createdGte);
}

export async function searchStartTasks(d: FacadeDeps, user: AppUser, q: StartTaskSearchQuery): Promise<Page<Rec>> {
  const convs = (await readOwned(d, ConversationKind, user.id)).filter(startTaskFilter(q));
  const sort = q.sort_order ?? 'CREATED_AT_DESC';
  const byUpdated = sort.startsWith('UPDATED_AT');
  const page = pageOf(
    convs.map((c) => ({ key: isoOf(byUpdated ? startTaskUpdatedAt(c) : createdAtOf(c)), name: c.metadata.name, item: c })),
    { pageId: q.page_id, limit: q.limit ?? 100, descending: sort.endsWith('_DESC') },
  );
  return { items: await startTaskRecords(d, user, page.items), next_page_id: page.next_page_id };
}

export async function countStartTasks(d: FacadeDeps, user: AppUser, q: StartTaskCountQuery): Promise<number> {
  return (await readOwned(d, ConversationKind, user.id)).filter(startTaskFilter(q)).length;
}
