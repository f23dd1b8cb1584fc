// The model gateway's usage record in PostgreSQL: the same rows and sums as the SQLite store.
import type { Pool } from 'pg';
import { toTotals, USAGE_GROUP_COLUMN, USAGE_INSERT, USAGE_SUMS, usageValues } from '../model-usage.ts';
import type { ModelUsageRecord, ModelUsageStore, UsageGroup, UsageTotals } from '../types.ts';
import { numbered } from './sql.ts';

export class PgModelUsage implements ModelUsageStore {
  readonly #pool: Pool;

  constructor(pool: Pool) {
    this.#pool = pool;
  }

  async record(r: ModelUsageRecord): Promise<void> {
    await this.#pool.query(numbered(USAGE_INSERT), usageValues(r));
  }

  async summary(group: UsageGroup, filter: { userId?: string } = {}): Promise<(UsageTotals & { key: string | null })[]> {
    const col = USAGE_GROUP_COLUMN[group];
    const where = filter.userId !== undefined ? 'WHERE user_id = $1' : '';
    const { rows } = await this.#pool.query<Record<string, unknown>>(`SELECT ${col} AS key, ${USAGE_SUMS} FROM model_usage ${where} GROUP BY ${col} ORDER BY calls DESC, ${col} IS NULL, ${col}`, filter.userId !== undefined ? [filter.userId] : []);
    return rows.map((row) => ({ key: (row.key as string | null) ?? null, ...toTotals(row) }));
  }

  async total(filter: { userId?: string } = {}): Promise<UsageTotals> {
    const where = filter.userId !== undefined ? 'WHERE user_id = $1' : '';
    const { rows } = await this.#pool.query<Record<string, unknown>>(`SELECT ${USAGE_SUMS} FROM model_usage ${where}`, filter.userId !== undefined ? [filter.userId] : []);
    return toTotals(rows[0] ?? {});
  }
}
