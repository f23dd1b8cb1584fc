// `agentyard up` serves the Plugin Directory from the catalog file AGENTYARD_PLUGIN_CATALOG names,
// and launch links; the pages' behaviour in a browser is tested in src/facade/web/pages.test.ts.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeLaunchPlugins } from '../../src/facade/web/launch-link.ts';
import { removeDataDir, startService, type RunningService } from './harness.ts';

describe('agentyard up: web pages', () => {
  let dir: string;
  let svc: RunningService;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agentyard-web-'));
    const catalog = join(dir, 'catalog.yaml');
    writeFileSync(catalog, 'plugins:\n  - name: Changelog\n    description: Writes the changelog\n    source: github:acme/changelog\n    ref: v3\n');
    svc = await startService({ env: { AGENTYARD_PLUGIN_CATALOG: catalog } });
  });

  afterAll(async () => {
    await svc?.stop();
    if (svc) removeDataDir(svc.dataDir);
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists the administrator catalog at /plugins', async () => {
    const res = await fetch(`${svc.url}/plugins`);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('Changelog');
    expect(html).toContain('github:acme/changelog');
  });

  it('reviews a launch link, and explains a broken one', async () => {
    const link = `${svc.url}/launch?plugins=${encodeLaunchPlugins([{ source: 'github:acme/x', ref: 'main' }])}&message=hello`;
    const ok = await fetch(link);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('github:acme/x');
    const bad = await fetch(link.slice(0, link.indexOf('plugins=') + 20));
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('This launch link does not work');
  });

  it('refuses to start with a catalog file it cannot use, naming the variable', async () => {
    const broken = join(dir, 'broken.yaml');
    writeFileSync(broken, 'plugins:\n  - name: X\n');
    await expect(startService({ dataDir: join(dir, 'data-broken'), env: { AGENTYARD_PLUGIN_CATALOG: broken } })).rejects.toThrow(/AGENTYARD_PLUGIN_CATALOG/);
  });
});
