// The model gateway's usage record in the bundled SQLite app store: one row per forwarded call,
// summed on read. The PostgreSQL store (postgres/model-usage.ts) runs the same SQL.
import type Database from 'better-sqlite3';
import type { ModelUsageRecord, ModelUsageStore, UsageGroup, UsageTotals } from './types.ts';

/** Column per group: a fixed table, so no caller's text ever reaches the SQL. */
export const USAGE_GROUP_COLUMN: Record<UsageGroup, string> = { user: 'user_id', sandbox: 'sandbox_id', conversation: 'conversation_id', model: 'model' };

export const USAGE_INSERT =
  'INSERT INTO model_usage (user_id, sandbox_id, conversation_id, model, prompt_tokens, completion_tokens, cache_read_tokens, reasoning_tokens, cost, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)';

export const USAGE_SUMS =
  'COUNT(*) AS calls, COALESCE(SUM(prompt_tokens), 0) AS prompt_tokens, COALESCE(SUM(completion_tokens), 0) AS completion_tokens, ' +
  'COALESCE(SUM(cache_read_tokens), 0) AS cache_read_tokens, COALESCE(SUM(reasoning_tokens), 0) AS reasoning_tokens, COALESCE(SUM(cost), 0) AS cost';

export function usageValues(r: ModelUsageRecord): unknown[] {
  return [r.userId, r.sandboxId, r.conversationId, r.model, r.promptTokens, r.completionTokens, r.cacheReadTokens, r.reasoningTokens, r.cost, r.at];
}

/** Drivers return sums as strings (PostgreSQL bigint) or numbers: totals are numbers. */
export function toTotals(row: Record<string, unknown>): UsageTotals {
  const n = (k: string) => Number(row[k] ?? 0);
  return { calls: n('calls'), prompt_tokens: n('prompt_tokens'), completion_tokens: n('completion_tokens'), cache_read_tokens: n('cache_read_tokens'), reasoning_tokens: n('reasoning_tokens'), cost: n('cost') };
}

export class SqliteModelUsage implements ModelUsageStore {
  readonly #db: Database.Database;

  constructor(db: Database.Database) {
    this.#db = db;
  }

  async record(r: ModelUsageRecord): Promise<void> {
    this.#db.prepare(USAGE_INSERT).run(...usageValues(r));
  }

  async summary(group: UsageGroup, filter: { userId?: string } = {}): Promise<(UsageTotals & { key: string | null })[]> {
    const col = USAGE_GROUP_COLUMN[group];
    const where = filter.userId !== undefined ? 'WHERE user_id = ?' : '';
    const rows = this.#db.prepare(`SELECT ${col} AS key, ${USAGE_SUMS} FROM model_usage ${where} GROUP BY ${col} ORDER BY calls DESC, ${col} IS NULL, ${col}`).all(...(filter.userId !== undefined ? [filter.userId] : [])) as Record<string, unknown>[];
    return rows.map((row) => ({ key: (row.key as string | null) ?? null, ...toTotals(row) }));
  }

  async total(filter: { userId?: string } = {}): Promise<UsageTotals> {
    const where = filter.userId !== undefined ? 'WHERE user_id = ?' : '';
    return toTotals(this.#db.prepare(`SELECT ${USAGE_SUMS} FROM model_usage ${where}`).get(...(filter.userId !== undefined ? [filter.userId] : [])) as Record<string, unknown>);
  }
}
