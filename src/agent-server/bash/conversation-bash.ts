// The one-shot commands of each conversation's runtime (`/api/conversations/{id}/bash/*`): one
// BashService per conversation, made at its first command, running in the conversation's working
// directory, with its events in their own scope of the bash event table. A deleted conversation's
// commands are killed and its events removed, as OpenHands deletes the conversation's directory.
import { isAbsolute, resolve } from 'node:path';
import { Invalid } from '../../api/errors.ts';
import type { Logger } from '../../util/log.ts';
import type { ConversationRuntime } from '../conversation/runtime.ts';
import type { BashScope } from '../routes/bash.ts';
import { isInside } from '../http/paths.ts';
import type { Db } from '../store/db.ts';
import { BashService } from './service.ts';
import { BashEventStore } from './store.ts';

export interface ConversationBashOptions {
  db: Db;
  log: Logger;
  /** Values masked in every output (as the server's own commands: every loaded conversation's secrets). */
  secrets(): Readonly<Record<string, string>>;
  tuning?: { maxChunkChars?: number; killGraceMs?: number };
}

export class ConversationBash {
  readonly #o: ConversationBashOptions;
  readonly #scopes = new Map<string, BashScope>();

  constructor(o: ConversationBashOptions) {
    this.#o = o;
  }

  of(rt: ConversationRuntime): BashScope {
    const id = rt.conversationId;
    let scope = this.#scopes.get(id);
    if (!scope) {
      const store = new BashEventStore(this.#o.db, id);
      const root = rt.workspaceDir;
      scope = {
        store,
        service: new BashService({ store, workspaceDir: root, secrets: this.#o.secrets, log: this.#o.log.child({ conversationId: id }), ...this.#o.tuning }),
        confineCwd: async (cwd) => {
          if (!(await isInside(root, isAbsolute(cwd) ? cwd : resolve(root, cwd)))) {
            throw new Invalid([{ loc: ['body', 'cwd'], msg: 'cwd must be inside the conversation workspace', type: 'value_error' }]);
          }
        },
      };
      this.#scopes.set(id, scope);
    }
    return scope;
  }

  /** The conversation is deleted: what still runs is killed, its command events removed. */
  async drop(conversationId: string): Promise<void> {
    const scope = this.#scopes.get(conversationId);
    this.#scopes.delete(conversationId);
    await scope?.service.close();
    (scope?.store ?? new BashEventStore(this.#o.db, conversationId)).clear();
  }

  async close(): Promise<void> {
    await Promise.all([...this.#scopes.values()].map((s) => s.service.close()));
    this.#scopes.clear();
  }
}
