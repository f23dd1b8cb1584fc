// What the model reads of a conversation, kept up to date one step at a time: the view (condenser/
// view.ts) and its chat messages (messages.ts) follow the host's append-only event list by taking
// only the events added since the last step. A step then costs the same at event 30,000 as at
// event 30, where rebuilding both from the whole history made every step slower than the last.
// A Condensation, or a list that is not the one followed (a restart, a fork), rebuilds from scratch.
import type { Event } from '../api/events/index.ts';
import { buildView, IN_VIEW, type View } from './condenser/view.ts';
import type { ChatMessage } from './llm/client.ts';
import { MessageBuilder } from './messages.ts';

export class ModelView {
  #source: readonly Event[] | undefined;
  #seen = 0;
  #events: Event[] = [];
  #unhandledRequest = false;
  #messages = new MessageBuilder();

  /** The view of `all`, which is the list given last time with events appended, or another list. */
  update(all: readonly Event[]): View {
    const appended = all === this.#source && all.length >= this.#seen;
    if (!appended || all.slice(this.#seen).some((e) => e.kind === 'Condensation')) this.#rebuild(all);
    else {
      for (let i = this.#seen; i < all.length; i++) {
        const e = all[i]!;
        if (e.kind === 'CondensationRequest') this.#unhandledRequest = true;
        else if (IN_VIEW.has(e.kind)) {
          this.#events.push(e);
          this.#messages.add(e);
        }
      }
      this.#seen = all.length;
    }
    // A copy: the caller may hold it while the next step appends.
    return { events: [...this.#events], unhandledRequest: this.#unhandledRequest };
  }

  /** The chat messages of the view the last update() returned. */
  messages(): ChatMessage[] {
    return this.#messages.messages();
  }

  #rebuild(all: readonly Event[]): void {
    const view = buildView(all);
    this.#source = all;
    this.#seen = all.length;
    this.#events = view.events;
    this.#unhandledRequest = view.unhandledRequest;
    this.#messages = new MessageBuilder();
    for (const e of view.events) this.#messages.add(e);
  }
}
