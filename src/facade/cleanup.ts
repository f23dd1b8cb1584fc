// When a Conversation is gone for good (the controller's Deletion Time, or a delete), the app
// forgets it: events, queued messages, metadata, and its secrets Secret (garbage collection
// removes that too when its owner reference was set). Restart-safe: every (re)list also purges
// data of conversations that no longer exist.
import { ConversationKind, type Conversation } from '../api/conversation.ts';
import { NotFound } from '../api/errors.ts';
import { SecretKind } from '../api/secret.ts';
import type { FacadeDeps } from './deps.ts';
import { watchLoop } from './watch-loop.ts';
import { conversationPrefix } from '../objstore/keys.ts';

export class ConversationCleanup {
  readonly #d: FacadeDeps;
  readonly #abort = new AbortController();
  #loop: Promise<void> | undefined;

  constructor(d: FacadeDeps) {
    this.#d = d;
  }

  start(): void {
    this.#loop = watchLoop(this.#d, ConversationKind, {
      signal: this.#abort.signal,
      onList: (items) => this.#sweep(items),
      onEvent: async (ev) => {
        if (ev.type === 'DELETED') await this.forget(ev.object.metadata.name);
      },
    });
  }

  async forget(conversationId: string): Promise<void> {
    // Objects first: if the store is down this throws with the rows still there, and the next
    // sweep (which walks the database's conversation ids) tries again.
    await this.#d.objects?.deletePrefix(conversationPrefix(conversationId));
    await this.#d.db.purgeConversation(conversationId);
    try {
      await this.#d.store.delete(SecretKind, this.#d.namespace, `${conversationId}-secrets`);
    } catch (err) {
      if (!(err instanceof NotFound)) this.#d.log?.warn({ err, conversation: conversationId }, 'removing a conversation secret failed');
    }
  }

  async #sweep(items: Conversation[]): Promise<void> {
    const live = new Set(items.map((c) => c.metadata.name));
    for (const id of await this.#d.db.conversationIds()) {
      if (live.has(id)) continue;
      // Created after the list was taken? Then it is not gone.
      if (await this.#d.store.get(ConversationKind, this.#d.namespace, id)) continue;
      await this.forget(id);
    }
  }

  async close(): Promise<void> {
    this.#abort.abort();
    await this.#loop;
  }
}
