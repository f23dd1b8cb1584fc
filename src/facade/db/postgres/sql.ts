// Small helpers shared by the PostgreSQL app store's parts.
import type { Pool, PoolClient } from 'pg';

/** Rewrites SQLite-style `?` placeholders (as eventFilterSql builds them) to `$1, $2, …`. */
export function numbered(sql: string, offset = 0): string {
  let n = offset;
  return sql.replace(/\?/g, () => `$${++n}`);
}

/** Runs fn in one transaction on one pooled connection. */
export async function inTransaction<T>(pool: Pool, fn: (c: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    try {
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
  } finally {
    client.release();
  }
}
