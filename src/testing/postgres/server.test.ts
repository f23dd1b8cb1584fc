import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresBinDir, startPostgres, type PgServer } from './server.ts';

const bin = postgresBinDir();

describe.skipIf(!bin)(`throwaway PostgreSQL server${bin ? '' : ' (skipped: Debian postgresql not installed)'}`, () => {
  let server: PgServer;
  beforeAll(async () => { server = await startPostgres(); }, 60_000);
  afterAll(async () => { await server?.stop(); });

  it('serves the created database on loopback', async () => {
    const pool = new pg.Pool({ connectionString: server.url, max: 1 });
    try {
      const r = await pool.query<{ db: string }>('select current_database() as db');
      expect(r.rows[0]?.db).toBe('agentyard');
    } finally {
      await pool.end();
    }
  });
});
