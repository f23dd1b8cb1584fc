// The API's probes: liveness says the process serves, readiness that its database answers too, so
// the chart can restart a stuck Pod without restarting one that only waits for its database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './test-support.ts';

describe('the API probes', () => {
  let h: Harness;
  beforeAll(async () => (h = await startHarness()));
  afterAll(() => h.close().catch(() => undefined)); // the database is already closed

  it('answers both without a key while the database answers', async () => {
    expect(await h.call('GET', '/alive', { key: null })).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(await h.call('GET', '/health', { key: null })).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(await h.call('GET', '/ready', { key: null })).toMatchObject({ status: 200, body: { status: 'ok' } });
  });

  it('is alive but not ready once the database is gone', async () => {
    await h.db.close();
    expect(await h.call('GET', '/ready', { key: null })).toMatchObject({ status: 503, body: { status: 'unavailable', detail: 'The app database does not answer' } });
    expect(await h.call('GET', '/health', { key: null })).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(await h.call('GET', '/alive', { key: null })).toMatchObject({ status: 200, body: { status: 'ok' } });
  });
});
