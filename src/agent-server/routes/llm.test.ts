// /api/llm over HTTP: providers, models (all, of a provider, of an unknown one), verified models and
// the subscription routes, behind the session key; the lists are the generated catalog's.
import { describe, expect, it } from 'vitest';
import { catalog } from '../llm/catalog.ts';
import { useTestServer } from '../test-support.ts';

const t = useTestServer();

describe('/api/llm', () => {
  it('lists providers and models from the catalog, filtered by provider', async () => {
    const providers = await t.s.api('/api/llm/providers');
    expect(providers).toEqual({ status: 200, body: { providers: catalog().providers } });
    expect(providers.body.providers).toContain('anthropic');
    const all = (await t.s.api('/api/llm/models')).body.models as string[];
    expect(all).toEqual(Object.keys(catalog().models));
    expect(all).toEqual([...all].sort());
    const anthropic = (await t.s.api('/api/llm/models?provider=anthropic')).body.models as string[];
    expect(anthropic.length).toBeGreaterThan(0);
    expect(anthropic.length).toBeLessThan(all.length);
    expect(anthropic.every((m) => catalog().models[m] === 'anthropic' || catalog().verified['anthropic']!.includes(m))).toBe(true);
    expect(await t.s.api('/api/llm/models?provider=no-such-provider')).toEqual({ status: 200, body: { models: [] } });
    expect(await t.s.api('/api/llm/models/verified')).toEqual({ status: 200, body: { models: catalog().verified } });
    expect((await t.s.api('/api/llm/providers', { key: null })).status).toBe(401);
  });

  it('lists subscription models; with nobody signed in the status and a logout say not connected (sign-in itself: subscription.test.ts)', async () => {
    expect((await t.s.api('/api/llm/subscription/openai/models')).body).toEqual({ vendor: 'openai', models: catalog().subscription_models.openai });
    const disconnected = { vendor: 'openai', connected: false, account_email: null, expires_at: null };
    expect(await t.s.api('/api/llm/subscription/openai/status')).toEqual({ status: 200, body: disconnected });
    expect(await t.s.api('/api/llm/subscription/openai/logout', { method: 'POST' })).toEqual({ status: 200, body: disconnected });
    expect(await t.s.api('/api/llm/subscription/openai/device/poll', { method: 'POST', body: { device_code: 'never-started' } })).toEqual({ status: 404, body: { detail: 'Subscription device login not found or expired' } });
    expect((await t.s.api('/api/llm/subscription/openai/device/start', { method: 'POST', key: null })).status).toBe(401);
  });
});
