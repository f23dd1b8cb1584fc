// Conversation records: the start request (without secret values), status, title, tags, usage.
import type { ExecutionStatus } from '../../api/conversation.ts';
import type { ConversationStats, StartConversationRequest } from '../../api/agent-server/index.ts';
import { Invalid } from '../../api/errors.ts';
import type { Db } from './db.ts';
import type { StorageHealth } from './storage-health.ts';

export interface ConversationRow {
  id: string;
  createdAt: string;
  updatedAt: string;
  executionStatus: ExecutionStatus;
  title: string | null;
  /** The start request with `secrets` emptied and `agent.llm.api_key` removed. */
  request: StartConversationRequest;
  tags: Record<string, string>;
  stats: ConversationStats | null;
  lastUserMessageId: string | null;
  sealedSecrets: string | null;
  deletedAt: string | null;
  forkedFromConversationId: string | null;
  forkedFromEventId: string | null;
  /** SkillInfo objects of the conversation's plugins, as the agent last loaded them; null before it ever did. */
  pluginSkills: Record<string, unknown>[] | null;
  /**
   * HEAD set by navigate: an event id, or '' for the empty tree (OpenHands head_is_empty). Null: HEAD
   * is the last event that is not a state update (cleared again by the next such event).
   */
  headEventId?: string | null;
}

interface Raw {
  id: string;
  created_at: string;
  updated_at: string;
  execution_status: string;
  title: string | null;
  request: string;
  tags: string;
  stats: string | null;
  last_user_message_id: string | null;
  sealed_secrets: string | null;
  deleted_at: string | null;
  forked_from_conversation_id: string | null;
  forked_from_event_id: string | null;
  plugin_skills: string | null;
  head_event_id?: string | null;
}

function fromRaw(r: Raw): ConversationRow {
  return {
    id: r.id,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    executionStatus: r.execution_status as ExecutionStatus,
    title: r.title,
    request: JSON.parse(r.request) as StartConversationRequest,
    tags: JSON.parse(r.tags) as Record<string, string>,
    stats: r.stats === null ? null : (JSON.parse(r.stats) as ConversationStats),
    lastUserMessageId: r.last_user_message_id,
    sealedSecrets: r.sealed_secrets,
    deletedAt: r.deleted_at,
    forkedFromConversationId: r.forked_from_conversation_id,
    forkedFromEventId: r.forked_from_event_id,
    pluginSkills: r.plugin_skills === null ? null : (JSON.parse(r.plugin_skills) as Record<string, unknown>[]),
    headEventId: r.head_event_id ?? null,
  };
}

export const CONVERSATION_SORT_ORDERS = ['CREATED_AT', 'UPDATED_AT', 'CREATED_AT_DESC', 'UPDATED_AT_DESC'] as const;
export type ConversationSortOrder = (typeof CONVERSATION_SORT_ORDERS)[number];

export interface ConversationSearch {
  status?: string;
  sortOrder: ConversationSortOrder;
  /** Id of the first row of the page (inclusive cursor). */
  pageId?: string;
  limit: number;
}

/** `request` changes only for settings OpenHands lets a client change after start (the confirmation policy). */
export type ConversationPatch = Partial<Pick<ConversationRow, 'executionStatus' | 'title' | 'tags' | 'stats' | 'lastUserMessageId' | 'sealedSecrets' | 'deletedAt' | 'request' | 'pluginSkills' | 'headEventId'>>;

const COLUMN: Record<keyof ConversationPatch, string> = {
  executionStatus: 'execution_status',
  title: 'title',
  tags: 'tags',
  stats: 'stats',
  lastUserMessageId: 'last_user_message_id',
  sealedSecrets: 'sealed_secrets',
  deletedAt: 'deleted_at',
  request: 'request',
  pluginSkills: 'plugin_skills',
  headEventId: 'head_event_id',
};

export class ConversationStore {
  readonly #db: Db;
  readonly #storage: StorageHealth | undefined;
  /** Changes the disk refused (storage fault), merged per conversation; reads see them, writeHeld() saves them. */
  readonly #held = new Map<string, { patch: ConversationPatch; updatedAt: string }>();

  constructor(db: Db, storage?: StorageHealth) {
    this.#db = db;
    this.#storage = storage;
  }

  #withHeld(row: ConversationRow): ConversationRow {
    const h = this.#held.get(row.id);
    return h ? { ...row, ...h.patch, updatedAt: h.updatedAt } : row;
  }

  insert(row: ConversationRow): void {
    this.#db
      .prepare(
        `INSERT INTO conversations (id, created_at, updated_at, execution_status, title, request, tags, stats,
           last_user_message_id, sealed_secrets, deleted_at, forked_from_conversation_id, forked_from_event_id, plugin_skills)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        row.id,
        row.createdAt,
        row.updatedAt,
        row.executionStatus,
        row.title,
        JSON.stringify(row.request),
        JSON.stringify(row.tags),
        row.stats === null ? null : JSON.stringify(row.stats),
        row.lastUserMessageId,
        row.sealedSecrets,
        row.deletedAt,
        row.forkedFromConversationId,
        row.forkedFromEventId,
        row.pluginSkills === null ? null : JSON.stringify(row.pluginSkills),
      );
  }

  /** A live (not deleted) conversation. */
  get(id: string): ConversationRow | undefined {
    const r = this.#db.prepare('SELECT * FROM conversations WHERE id = ? AND deleted_at IS NULL').get(id) as Raw | undefined;
    return r && this.#withHeld(fromRaw(r));
  }

  /** Whether the id is taken, deleted rows included (they still await the event sink). */
  exists(id: string): boolean {
    return this.#db.prepare('SELECT 1 FROM conversations WHERE id = ?').get(id) !== undefined;
  }

  all(): ConversationRow[] {
    return (this.#db.prepare('SELECT * FROM conversations WHERE deleted_at IS NULL').all() as Raw[]).map((r) => this.#withHeld(fromRaw(r)));
  }

  deletedIds(): string[] {
    return (this.#db.prepare('SELECT id FROM conversations WHERE deleted_at IS NOT NULL').all() as { id: string }[]).map((r) => r.id);
  }

  /** Saves the change; when the disk refuses it (storage fault), holds it for writeHeld(). */
  update(id: string, patch: ConversationPatch, updatedAt: string): void {
    const held = this.#held.get(id);
    if (held) {
      held.patch = { ...held.patch, ...patch };
      held.updatedAt = updatedAt;
      return;
    }
    try {
      this.#write(id, patch, updatedAt);
    } catch (err) {
      if (!this.#storage?.report(err)) throw err;
      this.#held.set(id, { patch: { ...patch }, updatedAt });
    }
  }

  /** Writes the held changes; inside the caller's transaction, followed by heldWritten() once it committed. */
  writeHeld(): void {
    for (const [id, h] of this.#held) this.#write(id, h.patch, h.updatedAt);
  }

  heldWritten(): void {
    this.#held.clear();
  }

  #write(id: string, patch: ConversationPatch, updatedAt: string): void {
    const sets = ['updated_at = ?'];
    const args: unknown[] = [updatedAt];
    for (const [k, v] of Object.entries(patch) as [keyof ConversationPatch, unknown][]) {
      sets.push(`${COLUMN[k]} = ?`);
      args.push(k === 'tags' || k === 'request' || ((k === 'stats' || k === 'pluginSkills') && v !== null) ? JSON.stringify(v) : v);
    }
    this.#db.prepare(`UPDATE conversations SET ${sets.join(', ')} WHERE id = ?`).run(...args, id);
  }

  count(status?: string): number {
    const sql = 'SELECT COUNT(*) AS n FROM conversations WHERE deleted_at IS NULL' + (status ? ' AND execution_status = ?' : '');
    return (this.#db.prepare(sql).get(...(status ? [status] : [])) as { n: number }).n;
  }

  /** One page plus the id of the first row of the next page. */
  search(q: ConversationSearch): { rows: ConversationRow[]; nextId: string | null } {
    const key = q.sortOrder.startsWith('UPDATED') ? 'updated_at' : 'created_at';
    const desc = q.sortOrder.endsWith('_DESC');
    const where = ['deleted_at IS NULL'];
    const args: unknown[] = [];
    if (q.status) {
      where.push('execution_status = ?');
      args.push(q.status);
    }
    if (q.pageId !== undefined) {
      const start = this.#db.prepare(`SELECT ${key} AS k FROM conversations WHERE id = ?`).get(q.pageId) as { k: string } | undefined;
      if (!start) throw new Invalid([{ loc: ['query', 'page_id'], msg: 'Unknown page_id', type: 'value_error' }]);
      const op = desc ? '<' : '>';
      where.push(`(${key} ${op} ? OR (${key} = ? AND id ${op}= ?))`);
      args.push(start.k, start.k, q.pageId);
    }
    const dir = desc ? 'DESC' : 'ASC';
    const sql = `SELECT * FROM conversations WHERE ${where.join(' AND ')} ORDER BY ${key} ${dir}, id ${dir} LIMIT ?`;
    const raws = this.#db.prepare(sql).all(...args, q.limit + 1) as Raw[];
    const next = raws.length > q.limit ? raws.pop() : undefined;
    return { rows: raws.map((r) => this.#withHeld(fromRaw(r))), nextId: next ? next.id : null };
  }
}

export class SinkCursorStore {
  readonly #db: Db;
  readonly #storage: StorageHealth | undefined;
  /** Acknowledgements the disk refused; the sink is idempotent, so losing them costs only a re-push. */
  readonly #held = new Map<string, number>();

  constructor(db: Db, storage?: StorageHealth) {
    this.#db = db;
    this.#storage = storage;
  }

  get(conversationId: string): number {
    const held = this.#held.get(conversationId);
    if (held !== undefined) return held;
    const r = this.#db.prepare('SELECT acked_seq FROM sink_cursor WHERE conversation_id = ?').get(conversationId) as { acked_seq: number } | undefined;
    return r?.acked_seq ?? 0;
  }

  set(conversationId: string, seq: number): void {
    if (this.#held.size === 0) {
      try {
        this.#write(conversationId, seq);
        return;
      } catch (err) {
        if (!this.#storage?.report(err)) throw err;
      }
    }
    this.#held.set(conversationId, seq);
  }

  writeHeld(): void {
    for (const [id, seq] of this.#held) this.#write(id, seq);
  }

  heldWritten(): void {
    this.#held.clear();
  }

  #write(conversationId: string, seq: number): void {
    this.#db
      .prepare('INSERT INTO sink_cursor (conversation_id, acked_seq) VALUES (?, ?) ON CONFLICT (conversation_id) DO UPDATE SET acked_seq = excluded.acked_seq')
      .run(conversationId, seq);
  }

  delete(conversationId: string): void {
    this.#held.delete(conversationId);
    this.#db.prepare('DELETE FROM sink_cursor WHERE conversation_id = ?').run(conversationId);
  }
}
