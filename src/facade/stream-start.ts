// POST /api/v1/app-conversations/stream-start (OpenHands): the start task as it moves, streamed
// as one JSON array of snapshots (`[\n{...},\n{...}\n]`), the connection held until READY or ERROR.
// Driven by the Conversation watch, so every step the controller records is seen. As in OpenHands,
// a snapshot goes out per step (status), not per write: fields filled within a step (its sandbox id)
// arrive with the next one.
import { PassThrough, type Readable } from 'node:stream';
import { ConversationKind, type Conversation } from '../api/conversation.ts';
import { LABEL_START_TASK } from '../api/meta.ts';
import { SandboxKind } from '../api/sandbox.ts';
import type { AppUser } from './db/types.ts';
import type { FacadeDeps } from './deps.ts';
import { startTaskRecord } from './records.ts';
import { isOwnedBy, sandboxNameOf } from './resources.ts';
import { watchLoop } from './watch-loop.ts';

/** A client that waits longer than this gets the array closed on the last snapshot; it can poll on. */
const MAX_STREAM_MS = 15 * 60_000;

type Rec = Record<string, unknown>;

export function streamStartTask(d: FacadeDeps, user: AppUser, first: Rec): Readable {
  const out = new PassThrough();
  const abort = new AbortController();
  const taskId = String(first['id']);
  let lastStatus = first['status'];
  out.write(`[\n${JSON.stringify(first)}`);
  const finish = () => {
    if (abort.signal.aborted) return;
    abort.abort();
    clearTimeout(cap);
    out.end('\n]');
  };
  const cap = setTimeout(finish, MAX_STREAM_MS);
  out.on('close', () => {
    clearTimeout(cap);
    abort.abort();
  });

  const check = async (conv: Conversation | undefined) => {
    if (abort.signal.aborted) return;
    if (!conv) return finish(); // deleted meanwhile: the last snapshot stands
    const sbName = sandboxNameOf(conv);
    const sb = sbName ? await d.store.get(SandboxKind, d.namespace, sbName) : undefined;
    const rec = startTaskRecord(conv, sb);
    if (rec['status'] !== lastStatus && !abort.signal.aborted) {
      lastStatus = rec['status'];
      out.write(`,\n${JSON.stringify(rec)}`);
    }
    if (rec['status'] === 'READY' || rec['status'] === 'ERROR') finish();
  };
  // Serialised: snapshots go out in the order the store changed.
  let chain = Promise.resolve();
  const wake = (conv: Conversation | undefined) => {
    chain = chain.then(() => check(conv)).catch((err: unknown) => d.log?.warn({ err, startTask: taskId }, 'stream-start: reading the start task failed'));
    return chain;
  };
  // The conversation comes with the list and with each of its watch events: other conversations'
  // changes wake nothing (each used to cost a list by label, per stream, on every start's writes).
  const ours = (c: Conversation) => c.metadata.labels?.[LABEL_START_TASK] === taskId && isOwnedBy(c, user.id);
  void watchLoop(d, ConversationKind, {
    signal: abort.signal,
    onList: (items) => wake(items.find(ours)),
    onEvent: (ev) => (ours(ev.object) ? wake(ev.type === 'DELETED' ? undefined : ev.object) : undefined),
  });
  return out;
}
