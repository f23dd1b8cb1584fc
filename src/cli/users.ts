// `agentyard users ...`: manage users and API keys in the app database: an embedded installation's
// SQLite file, or the external PostgreSQL of a cluster install (AGENTYARD_DATABASE_URL / --database-url).
import { join, resolve } from 'node:path';
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { openAppStore } from '../facade/index.ts';
import { SingleUserInstallation } from '../facade/db/types.ts';

const USAGE = `Usage:
  agentyard users create <name> [--admin] [--data-dir <dir>] create a user and print its first API key
  agentyard users list [--data-dir <dir>]                     list users (id, name, admin, disabled)
  agentyard users add-key <user-id> [--data-dir <dir>]        issue another API key for a user
  agentyard users keys <user-id> [--data-dir <dir>]           list a user's keys (prefixes only)
  agentyard users revoke-key <user-id> <prefix>               revoke the key shown with that prefix; refused at once
  agentyard users disable <user-id>                           refuse every key of the user at once
  agentyard users enable <user-id>                            accept the user's (unrevoked) keys again
Options:
  --database-url <postgres://...>  use the external PostgreSQL app database (default: AGENTYARD_DATABASE_URL)
`;

export async function runUsersCli(argv: string[], env: NodeJS.ProcessEnv = process.env, out: (s: string) => void = (s) => process.stdout.write(s)): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: { 'data-dir': { type: 'string' }, 'database-url': { type: 'string' }, admin: { type: 'boolean' } }, allowPositionals: true, strict: true });
  const [action, arg, arg2] = positionals;
  const dataDir = resolve(values['data-dir'] ?? env.AGENTYARD_DATA_DIR ?? '.data');
  const path = join(dataDir, 'app.db');
  if (!action || (!arg && action !== 'list') || (action === 'revoke-key' && !arg2)) {
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
        const user = await db.createUser(arg!).catch((err: unknown) => {
          if (err instanceof SingleUserInstallation) return err;
          throw err;
        });
        if (user instanceof SingleUserInstallation) {
          process.stderr.write(`agentyard users: ${user.message}\n`);
          return 1;
        }
        if (values.admin) await db.setUserAdmin(user.id, true);
        out(`user: ${user.id}\nAPI key: ${await db.createApiKey(user.id)}\n`);
        return 0;
      }
      case 'list':
        for (const u of await db.listUsers()) out(`${u.id}  ${u.name}${u.admin ? '  admin' : ''}${u.disabled_at ? `  disabled ${u.disabled_at}` : ''}\n`);
        return 0;
      case 'add-key':
      case 'keys':
      case 'revoke-key':
      case 'disable':
      case 'enable': {
        const id = arg!;
        if (!(await db.getUser(id))) {
          process.stderr.write(`agentyard users: no user with id '${id}'\n`);
          return 2;
        }
        if (action === 'add-key') out(`API key: ${await db.createApiKey(id)}\n`);
        else if (action === 'keys') for (const k of await db.listApiKeys(id)) out(`${k.prefix}…  created ${k.created_at}${k.revoked_at ? `  revoked ${k.revoked_at}` : ''}\n`);
        else if (action === 'revoke-key') {
          const prefix = arg2!.replace(/…$/, '');
          const result = await db.revokeApiKey(id, prefix);
          if (result !== 'revoked') {
            process.stderr.write(result === 'ambiguous' ? `agentyard users: several working keys of '${id}' start with '${prefix}'; nothing revoked\n` : `agentyard users: '${id}' has no working key '${prefix}' (see \`agentyard users keys ${id}\`)\n`);
            return 2;
          }
          out(`revoked ${prefix}…\n`);
        } else {
          await db.setUserDisabled(id, action === 'disable');
          out(`${action}d ${id}\n`);
        }
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
