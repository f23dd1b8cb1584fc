import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PostgresAppStore, SqliteAppStore } from '../facade/index.ts';
import { postgresBinDir, startPostgres } from '../testing/postgres/server.ts';
import { runUsersCli } from './users.ts';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('agentyard users', () => {
  it('creates a user whose printed key authenticates, and issues more keys', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'users-'));
    dirs.push(dir);
    await new SqliteAppStore(join(dir, 'app.db')).close();
    let out = '';
    expect(await runUsersCli(['create', 'carol', '--data-dir', dir], {}, (s) => (out += s))).toBe(0);
    const userId = /user: (\S+)/.exec(out)![1]!;
    const key = /API key: (\S+)/.exec(out)![1]!;
    const db = new SqliteAppStore(join(dir, 'app.db'));
    expect((await db.findUserByApiKey(key))?.name).toBe('carol');
    await db.close();
    out = '';
    expect(await runUsersCli(['add-key', userId, '--data-dir', dir], {}, (s) => (out += s))).toBe(0);
    out = '';
    await runUsersCli(['keys', userId, '--data-dir', dir], {}, (s) => (out += s));
    expect(out.trim().split('\n')).toHaveLength(2);
    expect(out).not.toContain(key);
    expect(await runUsersCli(['add-key', 'nobody', '--data-dir', dir], {}, () => {})).toBe(2);
  });

  it('refuses a data dir with no installation', async () => {
    expect(await runUsersCli(['create', 'x', '--data-dir', '/nonexistent/agentyard'], {}, () => {})).toBe(2);
  });

  it.skipIf(!postgresBinDir())(`manages users in an external PostgreSQL with --database-url${postgresBinDir() ? '' : ' (skipped: PostgreSQL server binaries not found; install Debian postgresql)'}`, async () => {
    const pg = await startPostgres();
    try {
      let out = '';
      expect(await runUsersCli(['create', 'dave', '--database-url', pg.url, '--data-dir', '/nonexistent/agentyard'], {}, (s) => (out += s))).toBe(0);
      const key = /API key: (\S+)/.exec(out)![1]!;
      const db = await PostgresAppStore.open(pg.url);
      expect((await db.findUserByApiKey(key))?.name).toBe('dave');
      await db.close();
    } finally {
      await pg.stop();
    }
  });
});
