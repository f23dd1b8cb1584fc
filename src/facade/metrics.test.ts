// GET /metrics on the API, scraped over HTTP as Prometheus does: open without a key, HTTP latency
// labelled by route template (never an id from the path), events ingested by the sink.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sampleValue, scrape, type Sample } from '../util/prometheus-text.ts';
import { makeSandbox, messageEvent, setStartTask, startConversationId, startHarness, type Harness } from './test-support.ts';

describe('API /metrics', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness();
  });
  afterEach(() => h.close());

  const total = (s: Sample[], labels: Record<string, string>) => sampleValue(s, 'http_requests_total', labels) ?? 0;

  it('answers without a key, counts requests by route template and status, and events ingested', async () => {
    await makeSandbox(h.store, h.alice.user, 'sb-1', 'RUNNING', { url: 'http://127.0.0.1:1', key: 'sk-1' });
    const id = await startConversationId(h, { sandbox_id: 'sb-1' });
    await setStartTask(h.store, id, 'READY', 'sb-1');
    const before = await scrape(`${h.server.url}/metrics`);
    expect(sampleValue(before, 'agentyard_events_ingested_total')).toBeTypeOf('number'); // there before the first event
    const route = '/api/v1/conversation/:conversation_id/events/count';

    expect((await h.call('GET', `/api/v1/conversation/${id}/events/count`)).status).toBe(200);
    expect((await h.call('GET', `/api/v1/conversation/${id}/events/count`, { key: null })).status).toBe(401);
    const push = await h.call('POST', `/api/v1/webhooks/sb-1/events/${id}`, {
      key: null,
      headers: { 'x-session-api-key': 'sk-1' },
      body: { items: [1, 2, 3].map((seq) => ({ seq, event: messageEvent(`e${seq}`, `message ${seq}`) })) },
    });
    expect(push.status).toBe(200);
    expect((await h.call('GET', `/no/such/path/${id}`)).status).toBe(404);

    const res = await fetch(`${h.server.url}/metrics`);
    const text = await res.text();
    const after = await scrape(`${h.server.url}/metrics`);
    // The template, not the path: no conversation id, no user data anywhere in the scrape.
    expect(text).not.toContain(id);
    expect(text).not.toContain(h.alice.user.id);
    expect(text).not.toContain(h.alice.key);
    expect(text).not.toContain('sk-1');
    const routeOf = (s: Sample[]) => s.filter((x) => x.name === 'http_requests_total').map((x) => x.labels['route']);
    expect(routeOf(after)).toContain(route);
    expect(total(after, { method: 'GET', route, code: '200' }) - total(before, { method: 'GET', route, code: '200' })).toBe(1);
    // Refused before routing: counted, under the unmatched label (the key check runs before the router).
    expect(total(after, { method: 'GET', route: '<unmatched>', code: '401' }) - total(before, { method: 'GET', route: '<unmatched>', code: '401' })).toBe(1);
    expect(total(after, { method: 'GET', route: '<unmatched>', code: '404' }) - total(before, { method: 'GET', route: '<unmatched>', code: '404' })).toBeGreaterThanOrEqual(1);
    const hist = (s: Sample[]) => sampleValue(s, 'http_request_duration_seconds_count', { method: 'GET', route, code: '200' }) ?? 0;
    expect(hist(after) - hist(before)).toBe(1);
    const ingested = (s: Sample[]) => sampleValue(s, 'agentyard_events_ingested_total') ?? 0;
    expect(ingested(after) - ingested(before)).toBe(3);
    // The process's own figures come with it.
    expect(sampleValue(after, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  });
});
