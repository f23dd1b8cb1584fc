// GET /api/v1/app-conversations/changes: the caller's conversations as they change, pushed as
// Server-Sent Events, so a list shows live sandbox and execution status without polling. Driven by
// the store's watch of the caller's Conversations and Sandboxes (by the owner label, as every read
// of theirs): SQLite's change feed in embedded mode, the API server's watch in cluster mode. The
// route sits behind the same authentication as search, and every record is built by the search's
// own code (queries.ts) for that user.
//
// Events: `snapshot` (the search's first page with the same filters), then `change` (one record,
// when what it shows moved: new, its sandbox's status, its execution status, its title, ...) and
// `remove` ({id}: deleted, or no longer matching the filters). Each event's id is the pair of
// watch positions (Conversations, Sandboxes) it was sent at: a client that comes back with it
// (Last-Event-ID, as EventSource does, or ?after=) gets every change since, computed from the state
// then; when the position is too old for the store (410 Gone), a new snapshot replaces the list.
// Records are computed when sent, so a replayed change never shows an older state than the last one.
//
// A comment every 25 s keeps proxies from closing an idle stream. Every 5 s the stream asks whether
// the request's key or session still holds, and ends when it does not: the client's reconnect then
// gets the 401 (a revoked key, a disabled user, an ended session sign the app out within seconds, as
// the list's polling did). It also ends after 5 minutes; the client reconnects with its last id.
import { PassThrough, type Readable } from 'node:stream';
import { ConversationKind, type Conversation } from '../api/conversation.ts';
import { Gone, Invalid } from '../api/errors.ts';
import { LABEL_OWNER, type KubeObject, type ResourceKind } from '../api/meta.ts';
import { SandboxKind } from '../api/sandbox.ts';
import type { ConversationChangesQuery } from '../api/app/requests.ts';
import type { WatchEvent } from '../store/types.ts';
import type { AppUser } from './db/types.ts';
import type { FacadeDeps } from './deps.ts';
import { conversationRecords, filterConversations, searchConversations } from './queries.ts';
import { getOwned, listOwned, sandboxNameOf } from './resources.ts';
import { sleep } from './watch-loop.ts';

export interface ChangeStreamOptions {
  /** Asked every `authCheckMs` (default 5 s): false (a revoked key, an ended session, a disabled user) ends the stream. */
  authorized?: () => Promise<boolean>;
  authCheckMs?: number;
  pingMs?: number;
  maxStreamMs?: number;
  /** Told to the client (`retry:`): how long to wait before reconnecting. */
  retryMs?: number;
}

/** Watch positions: the Conversation watch's and the Sandbox watch's resourceVersion. */
interface Cursor {
  conversations: string;
  sandboxes: string;
}

export function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify([c.conversations, c.sandboxes])).toString('base64url');
}

/**
 * A cursor a client sent back, or undefined (then: a snapshot). Both stores' resourceVersions are
 * decimal numbers; anything else was not made here.
 */
export function decodeCursor(id: string | undefined): Cursor | undefined {
  if (!id) return undefined;
  try {
    const v = JSON.parse(Buffer.from(id, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(v) && v.length === 2 && v.every((x) => typeof x === 'string' && /^[0-9]{1,20}$/.test(x))) return { conversations: v[0], sandboxes: v[1] };
  } catch {
    // not one of ours
  }
  return undefined;
}

type Rec = Record<string, unknown>;

export function conversationChanges(d: FacadeDeps, user: AppUser, q: ConversationChangesQuery, lastEventId: string | undefined, o: ChangeStreamOptions = {}): Readable {
  const out = new PassThrough();
  const abort = new AbortController();
  const stop = () => {
    if (abort.signal.aborted) return;
    abort.abort();
    clearInterval(ping);
    clearInterval(check);
    clearTimeout(cap);
    out.end();
  };
  out.on('close', stop);
  const ping = setInterval(() => out.write(': ping\n\n'), o.pingMs ?? 25_000);
  const check = setInterval(() => {
    void o.authorized?.().then((ok) => ok || stop(), () => undefined);
  }, o.authCheckMs ?? 5_000);
  const cap = setTimeout(stop, o.maxStreamMs ?? 5 * 60_000);
  out.write(`retry: ${o.retryMs ?? 2000}\n\n`);

  const send = (event: 'snapshot' | 'change' | 'remove', data: unknown, at: Cursor) => {
    if (!abort.signal.aborted) out.write(`id: ${encodeCursor(at)}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  const { after: _after, limit, ...filters } = q;
  const owner = `${LABEL_OWNER}=${user.id}`;
  const matches = async (conv: Conversation) => (await filterConversations(d, [conv], filters)).length > 0;
  /** What this stream last sent of each conversation: an unchanged record is not sent again. */
  const sent = new Map<string, string>();

  const snapshot = async (): Promise<Cursor> => {
    // Positions first: whatever changes after them is replayed on top of the page read below.
    const conversations = (await d.store.list(ConversationKind, d.namespace, { labelSelector: owner })).resourceVersion;
    const sandboxes = (await d.store.list(SandboxKind, d.namespace, { labelSelector: owner })).resourceVersion;
    const at = { conversations, sandboxes };
    const page = await searchConversations(d, user, { ...filters, limit: limit ?? 100 });
    sent.clear();
    for (const rec of page.items) sent.set(String(rec['id']), JSON.stringify(rec));
    send('snapshot', page, at);
    return at;
  };

  const show = async (names: string[], at: Cursor) => {
    for (const name of names) {
      const conv = await getOwned(d, ConversationKind, user.id, name);
      if (!conv || !(await matches(conv))) {
        if (sent.delete(name) || !conv) send('remove', { id: name }, at);
        continue;
      }
      const [rec] = (await conversationRecords(d, user, [conv])) as [Rec];
      const json = JSON.stringify(rec);
      if (sent.get(name) === json) continue;
      sent.set(name, json);
      send('change', rec, at);
    }
  };

  /** Both watches from `at`, one event at a time, `at` moving with them; returns when either ends, throws what either threw. */
  const follow = async (at: Cursor) => {
    const inner = new AbortController();
    const onAbort = () => inner.abort();
    abort.signal.addEventListener('abort', onAbort, { once: true });
    let chain = Promise.resolve();
    let failure: unknown;
    const consume = async <T extends KubeObject>(kind: ResourceKind<T>, from: string, handle: (ev: WatchEvent<T>) => Promise<void>) => {
      try {
        for await (const ev of d.store.watch(kind, d.namespace, { resourceVersion: from, labelSelector: owner, signal: inner.signal })) {
          chain = chain.then(() => handle(ev));
          await chain;
        }
      } catch (err) {
        failure ??= err;
      } finally {
        inner.abort(); // one ended: end the other, and start both again from `at`
      }
    };
    await Promise.all([
      // `at` moves once an event is fully shown: a failure midway resumes with that event again.
      consume(ConversationKind, at.conversations, async (ev: WatchEvent<Conversation>) => {
        const next = { ...at, conversations: ev.object.metadata.resourceVersion ?? at.conversations };
        await show([ev.object.metadata.name], next);
        Object.assign(at, next);
      }),
      consume(SandboxKind, at.sandboxes, async (ev) => {
        const next = { ...at, sandboxes: ev.object.metadata.resourceVersion ?? at.sandboxes };
        // The conversations that show its status: placed on it, or asking for it (as records read it).
        const on = (await listOwned(d, ConversationKind, user.id)).filter((c) => sandboxNameOf(c) === ev.object.metadata.name);
        await show(on.map((c) => c.metadata.name), next);
        Object.assign(at, next);
      }),
    ]);
    abort.signal.removeEventListener('abort', onAbort);
    if (failure !== undefined) throw failure;
  };

  void (async () => {
    let at = decodeCursor(lastEventId);
    while (!abort.signal.aborted) {
      let following = false;
      try {
        at ??= await snapshot();
        following = true;
        await follow(at);
      } catch (err) {
        if (abort.signal.aborted) break;
        // A watch position too old for the store, or one it does not know: the list again, as a snapshot.
        if (following && (err instanceof Gone || err instanceof Invalid)) {
          at = undefined;
          continue;
        }
        d.log?.warn({ err, user: user.id }, 'conversation changes: reading the store failed; trying again shortly');
      }
      // A watch that ended or failed: resume from the last position sent, a moment later.
      await sleep(1000, abort.signal);
    }
  })().catch((err: unknown) => {
    d.log?.warn({ err, user: user.id }, 'conversation changes: stream failed');
    stop();
  });
  return out;
}
