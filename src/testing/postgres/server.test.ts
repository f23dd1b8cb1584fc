import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresBinDir, startPostgres, type PgServer } from './server.ts';

const bin = postgresBinDir();

describe.skipIf(!bin)(`throwaway PostgreSQL server${bin ? '' : ' (skipped: Debian postgresql not installed)'}`, () => {
  let server: PgServer;
  beforeAll(async () => { server = await startPostgres(); }, 60_000);
  afterAll(async () => { await server?.stop(); });

  it('serves the created database on loopback', async () => {
    // A Client rather than a Pool: Client.end() resolves only once the socket closed, so the
    // server's shutdown in afterAll cannot reach a half-closed connection as an uncaught error.
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    try {
      const r = await client.query<{ db: string }>('select current_database() as db');
      expect(r.rows[0]?.db).toBe('agentyard');
    } finally {
      await client.end();
    }
  });
});
