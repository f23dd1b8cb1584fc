// The app database check of `agentyard preflight` (external PostgreSQL, AGENTYARD_DATABASE_URL):
// reachable with these credentials, and not already at a schema newer than this build. The URL
// holds a password, so only its host and database name are ever printed.
import pg from 'pg';
import { isPostgresUrl } from '../../facade/db/open.ts';
import { PG_SCHEMA_VERSION } from '../../facade/db/postgres/migrations.ts';

export interface DatabaseOutcome {
  ok: boolean;
  detail: string;
  fix?: string;
}

function where(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}${u.port ? `:${u.port}` : ''}${u.pathname}`;
  } catch {
    return '(unparsable URL)';
  }
}

export async function checkAppDatabase(url: string, timeoutMs = 5000): Promise<DatabaseOutcome> {
  if (!isPostgresUrl(url)) {
    return { ok: false, detail: 'AGENTYARD_DATABASE_URL is not a postgres:// or postgresql:// URL', fix: 'Put postgres://user:password@host:5432/database in the database Secret (secrets.database)' };
  }
  const at = where(url);
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  client.on('error', () => undefined); // a dropped connection after the check is not its result
  try {
    await client.connect();
  } catch (err) {
    return {
      ok: false,
      detail: `cannot connect to PostgreSQL at ${at}: ${(err as Error).message}`,
      fix: 'Check the host, port, database name and credentials in the database Secret, and that the API Pods may reach the server',
    };
  }
  try {
    const version = (await client.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0]!.v;
    const table = (await client.query<{ t: string | null }>("SELECT to_regclass('schema_version')::text AS t")).rows[0]!.t;
    const schema = table ? (await client.query<{ version: number }>('SELECT version FROM schema_version')).rows[0]?.version : undefined;
    if (schema !== undefined && schema > PG_SCHEMA_VERSION) {
      return {
        ok: false,
        detail: `PostgreSQL ${version} at ${at} holds app schema version ${schema}, newer than this build understands (${PG_SCHEMA_VERSION})`,
        fix: 'Install the agentyard version that last migrated this database, or a newer one',
      };
    }
    const state = schema === undefined ? 'no app tables yet (the API creates them at start)' : `app schema version ${schema} of ${PG_SCHEMA_VERSION}`;
    return { ok: true, detail: `PostgreSQL ${version} at ${at}: ${state}` };
  } catch (err) {
    return { ok: false, detail: `connected to ${at} but could not read it: ${(err as Error).message}`, fix: 'Grant the database user the right to create and use tables in its database' };
  } finally {
    await client.end().catch(() => undefined);
  }
}
