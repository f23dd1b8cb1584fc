// /api/meta-profiles over HTTP: saved (classes, or a direct-routing template with {{ instance_text }}),
// listed, read, deleted as OpenHands 1.58; kept across a restart; the routing rules refused with 422;
// activation records the settings' active_meta_profile (kept across a restart, cleared when that one is deleted).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, tempDir, type TestServer } from '../test-support.ts';

let dir: ReturnType<typeof tempDir>;
let s: TestServer;
beforeEach(async () => {
  dir = tempDir();
  s = await startTestServer(dir.path);
});
afterEach(async () => {
  await s.close();
  dir.remove();
});
const M = '/api/meta-profiles';
const classes = [{ description: 'UI work', model: 'vision' }, { description: 'everything else', model: 'fast' }];

describe('/api/meta-profiles', () => {
  it('saves, lists, reads and deletes; survives a restart; activation is recorded until that one is deleted', async () => {
    expect(await s.api(M)).toEqual({ status: 200, body: { meta_profiles: [], active_meta_profile: null } });
    expect(await s.api(`${M}/router`, { method: 'POST', body: { classifier_model: 'fast', classes } })).toEqual({ status: 201, body: { name: 'router', message: "Meta-profile 'router' saved" } });
    await s.api(`${M}/direct`, { method: 'POST', body: { classifier_model: 'fast', prompt_template: 'Pick for: {{ instance_text }}', model_table: 'fast | vision' } });
    await s.close();
    s = await startTestServer(dir.path);
    expect((await s.api(M)).body).toEqual({ meta_profiles: [{ name: 'direct', classifier_model: 'fast', num_classes: 0 }, { name: 'router', classifier_model: 'fast', num_classes: 2 }], active_meta_profile: null });
    expect((await s.api(`${M}/router`)).body).toEqual({ name: 'router', config: { classifier_model: 'fast', classes, prompt_template: null, model_table: null } });
    expect(await s.api(`${M}/router/activate`, { method: 'POST' })).toEqual({ status: 200, body: { name: 'router', message: "Meta-profile 'router' activated", applied: true } });
    await s.close();
    s = await startTestServer(dir.path);
    expect((await s.api(M)).body.active_meta_profile).toBe('router');
    expect((await s.api('/api/settings')).body.active_meta_profile).toBe('router');
    // Deleting another one leaves the pointer; deleting the active one clears it.
    await s.api(`${M}/direct`, { method: 'DELETE' });
    expect((await s.api(M)).body.active_meta_profile).toBe('router');
    expect((await s.api(`${M}/router`, { method: 'DELETE' })).body).toEqual({ name: 'router', message: "Meta-profile 'router' deleted" });
    expect((await s.api(`${M}/router`)).status).toBe(404);
    expect((await s.api(M)).body).toEqual({ meta_profiles: [], active_meta_profile: null });
    expect((await s.api(`${M}/router/activate`, { method: 'POST' })).status).toBe(404);
  });

  it('refuses what cannot route (422)', async () => {
    const refused = async (body: unknown) => {
      const r = await s.api(`${M}/x`, { method: 'POST', body });
      expect(r.status, JSON.stringify(body)).toBe(422);
      return r.body.detail[0];
    };
    expect((await refused({ classes })).loc).toEqual(['body', 'classifier_model']);
    expect((await refused({ classifier_model: 'fast' })).msg).toMatch(/needs either classes or a prompt_template/);
    expect((await refused({ classifier_model: 'fast', prompt_template: 'no placeholder' })).msg).toMatch(/instance_text/);
    expect((await refused({ classifier_model: 'fast', prompt_template: '{{ instance_text }}', classes })).msg).toMatch(/cannot also define classes/);
    expect((await s.api(`${M}/-x`, { method: 'POST', body: { classifier_model: 'fast', classes } })).status).toBe(422);
  });
});
