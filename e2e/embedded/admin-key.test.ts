// `agentyard up` and the admin API key (#18 finding 8): standard output ends up in logs, so the key
// is printed only the one time it is generated; a restart and a key the operator chose
// (AGENTYARD_API_KEY) never put it there. Real `agentyard up` processes, checked over HTTP.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeDataDir, startService, type RunningService } from './harness.ts';

describe('agentyard up: the admin API key at start-up', () => {
  const running: RunningService[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const svc of running.splice(0)) await svc.stop();
    for (const dir of dirs.splice(0)) removeDataDir(dir);
  });

  const start = async (opts: Parameters<typeof startService>[0] = {}) => {
    const svc = await startService(opts);
    running.push(svc);
    if (!dirs.includes(svc.dataDir)) dirs.push(svc.dataDir);
    return svc;
  };
  const everything = (svc: RunningService) => svc.output.join('\n');

  it('prints a generated key once, at the first start; a restart says where it is kept and does not print it', async () => {
    const first = await start();
    const stored = readFileSync(join(first.dataDir, 'api-key'), 'utf8').trim();
    expect(first.output.filter((l) => l.includes(stored))).toEqual([`API key: ${stored}`]);
    expect((await first.api('GET', '/api/v1/users/me')).status).toBe(200);
    await first.stop();

    const second = await start({ dataDir: first.dataDir });
    expect(second.apiKey).toBe(stored); // the harness read it from the file, as an operator would
    expect(everything(second)).not.toContain(stored);
    expect(everything(second)).toContain(`The admin API key is stored in ${join(first.dataDir, 'api-key')}`);
    expect(await second.api('GET', '/api/v1/users/me')).toMatchObject({ status: 200, body: { id: 'admin' } });
  });

  it('never prints a key that came from AGENTYARD_API_KEY, and stores none', async () => {
    const key = 'ay_operator_chosen_admin_key_0123456789';
    const svc = await start({ env: { AGENTYARD_API_KEY: key } });
    expect(await svc.api('GET', '/api/v1/users/me')).toMatchObject({ status: 200, body: { id: 'admin' } });
    expect(everything(svc)).not.toContain(key);
    expect(everything(svc)).toContain('The admin API key is the one AGENTYARD_API_KEY holds');
    expect(() => readFileSync(join(svc.dataDir, 'api-key'))).toThrow(/ENOENT/);
    // The built-in admin is an administrator: it manages users (#18 finding 5).
    expect(await svc.api('GET', '/api/v1/users')).toMatchObject({ status: 200, body: { items: [{ id: 'admin', admin: true, disabled_at: null }] } });
  });
});
