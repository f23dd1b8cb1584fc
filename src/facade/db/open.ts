// Picks the app store: an external PostgreSQL when a postgres:// URL is given (API may scale out),
// else the bundled SQLite file (one API replica). No data moves between them.
import type { Clock } from '../../controller/clock.ts';
import type { Logger } from '../../util/log.ts';
import { SqliteAppStore } from './app-db.ts';
import { PostgresAppStore } from './postgres/app-store.ts';
import type { AppStore } from './types.ts';

export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url);
}

export async function openAppStore(opts: { databaseUrl?: string | undefined; sqlitePath: string; clock?: Clock; log?: Logger }): Promise<AppStore> {
  const { databaseUrl, sqlitePath, clock, log } = opts;
  if (databaseUrl) {
    if (!isPostgresUrl(databaseUrl)) throw new Error('AGENTYARD_DATABASE_URL must be a postgres:// or postgresql:// URL');
    return PostgresAppStore.open(databaseUrl, { ...(clock ? { clock } : {}), ...(log ? { log } : {}) });
  }
  return new SqliteAppStore(sqlitePath, clock ? { clock } : {});
}
