// `agentyard users ...`: manage users and API keys in the app database: an embedded installation's
// SQLite file, or the external PostgreSQL of a cluster install (AGENTYARD_DATABASE_URL / --database-url).
import { join, resolve } from 'node:path';
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { openAppStore } from '../facade/index.ts';
import { SingleUserInstallation } from '../facade/db/types.ts';

const USAGE = `Usage:
  agentyard users create <name> [--data-dir <dir>]     create a user and print its first API key
  agentyard users add-key <user-id> [--data-dir <dir>] issue another API key for a user
  agentyard users keys <user-id> [--data-dir <dir>]    list a user's keys (prefixes only)
Options:
  --database-url <postgres://...>  use the external PostgreSQL app database (default: AGENTYARD_DATABASE_URL)
`;

export async function runUsersCli(argv: string[], env: NodeJS.ProcessEnv = process.env, out: (s: string) => void = (s) => process.stdout.write(s)): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: { 'data-dir': { type: 'string' }, 'database-url': { type: 'string' } }, allowPositionals: true, strict: true });
  const [action, arg] = positionals;
  const dataDir = resolve(values['data-dir'] ?? env.AGENTYARD_DATA_DIR ?? '.data');
  const path = join(dataDir, 'app.db');
  if (!action || !arg) {
    process.stderr.write(USAGE);
    return 2;
  }
  const databaseUrl = values['database-url'] ?? env.AGENTYARD_DATABASE_URL;
  if (!databaseUrl && !existsSync(path)) {
    process.stderr.write(`agentyard users: no installation at ${dataDir} (run \`agentyard up --data-dir ${dataDir}\` once first)\n`);
    return 2;
  }
  const db = await openAppStore({ databaseUrl, sqlitePath: path });
  try {
    switch (action) {
      case 'create': {
        const user = await db.createUser(arg).catch((err: unknown) => {
          if (err instanceof SingleUserInstallation) return err;
          throw err;
        });
        if (user instanceof SingleUserInstallation) {
          process.stderr.write(`agentyard users: ${user.message}\n`);
          return 1;
        }
        out(`user: ${user.id}\nAPI key: ${await db.createApiKey(user.id)}\n`);
        return 0;
      }
      case 'add-key':
      case 'keys': {
        if (!(await db.getUser(arg))) {
          process.stderr.write(`agentyard users: no user with id '${arg}'\n`);
          return 2;
        }
        if (action === 'add-key') out(`API key: ${await db.createApiKey(arg)}\n`);
        else for (const k of await db.listApiKeys(arg)) out(`${k.prefix}…  created ${k.created_at}\n`);
        return 0;
      }
      default:
        process.stderr.write(`agentyard users: unknown action '${action}'\n${USAGE}`);
        return 2;
    }
  } finally {
    await db.close();
  }
}
