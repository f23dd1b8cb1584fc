// Delivers queued messages (messages.ts) once their conversation's sandbox is RUNNING and the
// conversation is ready: per conversation, in order, each removed from the queue once the agent
// server took it. Woken by Sandbox and Conversation changes, and by a retry tick after a failure.
import { ConversationKind } from '../api/conversation.ts';
import { BadGateway, Conflict, Unavailable } from '../api/errors.ts';
import { SandboxKind } from '../api/sandbox.ts';
import type { FacadeDeps } from './deps.ts';
import { deliver, isDeliverable } from './messages.ts';
import { conversationSandboxStatus, sandboxNameOf } from './resources.ts';
import { watchLoop } from './watch-loop.ts';

/** How long a claimed message stays with the replica delivering it should that replica die. */
const CLAIM_LEASE_MS = 120_000;

/** Failures worth another try: the agent server is unreachable, not ready, or busy. */
function isTransient(err: unknown): boolean {
  return err instanceof BadGateway || err instanceof Unavailable || err instanceof Conflict || !(err instanceof Error && 'code' in err);
}

export class PendingDelivery {
  readonly #d: FacadeDeps;
  readonly #abort = new AbortController();
  readonly #running = new Map<string, Promise<void>>();
  readonly #again = new Set<string>();
  readonly #retryMs: number;
  #retryTimer: NodeJS.Timeout | undefined;
  #loops: Promise<void>[] = [];

  constructor(d: FacadeDeps, opts: { retryMs?: number } = {}) {
    this.#d = d;
    this.#retryMs = opts.retryMs ?? 5000;
  }

  start(): void {
    const signal = this.#abort.signal;
    const wake = () => this.kickAll();
    this.#loops = [
      watchLoop(this.#d, SandboxKind, { signal, onList: wake, onEvent: wake }),
      watchLoop(this.#d, ConversationKind, { signal, onList: wake, onEvent: wake }),
    ];
  }

  kickAll(): void {
    this.#d.db.pending.conversationIds().then(
      (ids) => {
        for (const id of ids) this.kick(id);
      },
      (err: unknown) => {
        this.#d.log?.error({ err }, 'listing queued messages failed; retrying');
        this.#scheduleRetry();
      },
    );
  }

  kick(conversationId: string): void {
    if (this.#abort.signal.aborted) return;
    if (this.#running.has(conversationId)) {
      this.#again.add(conversationId);
      return;
    }
    const run = this.#drain(conversationId)
      .catch((err: unknown) => this.#d.log?.error({ err, conversation: conversationId }, 'delivering queued messages failed'))
      .finally(() => {
        this.#running.delete(conversationId);
        if (this.#again.delete(conversationId)) this.kick(conversationId);
      });
    this.#running.set(conversationId, run);
  }

  /** Resolves once in-flight deliveries are idle; for tests. */
  async idle(): Promise<void> {
    while (this.#running.size > 0) await Promise.all([...this.#running.values()]);
  }

  async close(): Promise<void> {
    this.#abort.abort();
    clearTimeout(this.#retryTimer);
    await Promise.all(this.#loops);
    await this.idle();
  }

  async #drain(id: string): Promise<void> {
    const d = this.#d;
    for (;;) {
      const next = (await d.db.pending.list(id))[0];
      if (!next || this.#abort.signal.aborted) return;
      const conv = await d.store.get(ConversationKind, d.namespace, id);
      if (!conv) {
        await d.db.pending.purge(id);
        return;
      }
      const name = sandboxNameOf(conv);
      const sb = name ? await d.store.get(SandboxKind, d.namespace, name) : undefined;
      const status = conversationSandboxStatus(conv, sb);
      if (status === 'ERROR' || status === 'MISSING' || conv.status?.startTask?.status === 'ERROR') {
        d.log?.warn({ conversation: id, dropped: await d.db.pending.count(id), sandboxStatus: status }, 'conversation became read-only or failed to start; dropping its queued messages');
        await d.db.pending.purge(id);
        return;
      }
      if (!isDeliverable(conv, sb)) return; // a later Sandbox/Conversation change wakes us
      // Another API replica holds it (sharing a PostgreSQL store): that one delivers it and the rest.
      // Look again later in case that replica dies and its claim lapses.
      if (!(await d.db.pending.claim(next.id, CLAIM_LEASE_MS))) {
        this.#scheduleRetry();
        return;
      }
      try {
        await deliver(d, conv, sb, next.body);
        await d.db.pending.remove(next.id);
      } catch (err) {
        if (isTransient(err)) {
          await d.db.pending.release(next.id);
          d.log?.warn({ err, conversation: id }, 'queued message not delivered yet; retrying');
          this.#scheduleRetry();
          return;
        }
        d.log?.error({ err, conversation: id, message: next.id }, 'the agent server refused a queued message; dropping it');
        await d.db.pending.remove(next.id);
      }
    }
  }

  #scheduleRetry(): void {
    if (this.#retryTimer || this.#abort.signal.aborted) return;
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      this.kickAll();
    }, this.#retryMs);
  }
}
