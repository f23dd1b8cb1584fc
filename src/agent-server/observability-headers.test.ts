// X-OpenHands-Observability-* headers on POST /api/conversations (OpenHands 1.58): they fill the start
// request's observability fields the body leaves out (metadata merged, the body's keys winning), are
// validated as those fields (422 at the header), and are stored with the conversation's request.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConversationStore } from './store/conversation-store.ts';
import { openDatabase } from './store/db.ts';
import { startRequest, useTestServer } from './test-support.ts';

const ctx = useTestServer();

async function create(body: Record<string, unknown>, headers: Record<string, string>) {
  const res = await fetch(`${ctx.s.url}/api/conversations`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-session-api-key': 'test-session-key', ...headers }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
}

/** The start request as stored (read from the server's own database). */
function stored(id: string) {
  const db = openDatabase(join(ctx.dir.path, 'data'));
  try {
    return new ConversationStore(db).get(id)!.request;
  } finally {
    db.close();
  }
}

describe('observability headers on POST /api/conversations', () => {
  it('fill the fields the body leaves out; metadata is merged with the body winning', async () => {
    const headers = { 'X-OpenHands-Observability-Span-Name': 'nightly fix', 'X-OpenHands-Observability-Tags': 'a, b,,c', 'X-OpenHands-Observability-Metadata': '{"run":3,"team":"header"}' };
    const fromHeaders = await create(startRequest(join(ctx.dir.path, 'w')), headers);
    expect(fromHeaders.status).toBe(201);
    expect(stored(fromHeaders.body.id)).toMatchObject({ observability_span_name: 'nightly fix', observability_tags: ['a', 'b', 'c'], observability_metadata: { run: 3, team: 'header' } });

    const bodyWins = await create(startRequest(join(ctx.dir.path, 'w'), { observability_span_name: 'body span', observability_tags: [], observability_metadata: { team: 'body' } }), headers);
    expect(stored(bodyWins.body.id)).toMatchObject({ observability_span_name: 'body span', observability_tags: [], observability_metadata: { run: 3, team: 'body' } });
  });

  it('are refused with 422 located at the header', async () => {
    const notJson = await create(startRequest(join(ctx.dir.path, 'w')), { 'X-OpenHands-Observability-Metadata': 'nope' });
    expect([notJson.status, notJson.body.detail[0].loc]).toEqual([422, ['header', 'X-OpenHands-Observability-Metadata']]);
    const tooLong = await create(startRequest(join(ctx.dir.path, 'w')), { 'X-OpenHands-Observability-Span-Name': 'x'.repeat(300) });
    expect([tooLong.status, tooLong.body.detail[0].loc]).toEqual([422, ['header', 'X-OpenHands-Observability-Span-Name']]);
  });
});
