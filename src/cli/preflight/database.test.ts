// checkAppDatabase against a real PostgreSQL (Debian's postgresql; skipped without it).
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresAppStore } from '../../facade/db/postgres/app-store.ts';
import { PG_SCHEMA_VERSION } from '../../facade/db/postgres/migrations.ts';
import { postgresBinDir, startPostgres, type PgServer } from '../../testing/postgres/server.ts';
import { checkAppDatabase } from './database.ts';

const binDir = postgresBinDir();

describe.skipIf(!binDir)(`preflight: app database${binDir ? '' : ' (skipped: PostgreSQL server binaries not found under /usr/lib/postgresql; install Debian postgresql)'}`, () => {
  let server: PgServer;
  beforeAll(async () => {
    server = await startPostgres();
  }, 30_000);
  afterAll(() => server?.stop());

  it('reports an empty database, then the schema version; refuses a newer one', async () => {
    expect(await checkAppDatabase(server.url)).toMatchObject({ ok: true, detail: expect.stringContaining('no app tables yet') });
    const store = await PostgresAppStore.open(server.url);
    try {
      expect((await checkAppDatabase(server.url)).detail).toContain(`app schema version ${PG_SCHEMA_VERSION} of ${PG_SCHEMA_VERSION}`);
      await store.pool.query('UPDATE schema_version SET version = version + 1');
      expect(await checkAppDatabase(server.url)).toMatchObject({ ok: false, detail: expect.stringContaining('newer than this build') });
    } finally {
      await store.close();
    }
  });

  it('names the host but never the password of a URL it cannot use', async () => {
    const closed = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const port = (s.address() as { port: number }).port;
        s.close(() => resolve(port));
      });
    });
    const bad = await checkAppDatabase(`postgres://agentyard:s3cret-pw@127.0.0.1:${closed}/agentyard`);
    expect(bad).toMatchObject({ ok: false, detail: expect.stringContaining(`127.0.0.1:${closed}/agentyard`) });
    expect(JSON.stringify(bad)).not.toContain('s3cret-pw');
    expect(await checkAppDatabase('mysql://x@host/db')).toMatchObject({ ok: false, detail: expect.stringContaining('postgres://') });
  });
});
