// GET /api/v1/app-conversations/{id}/hooks against a real agent server: the workspace's hooks file
// read live through POST /api/hooks, grouped by event type; foreign conversations refused (the
// read rules shared by every workspace read are in workspace.test.ts).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startConversationId, startWorkspaceHarness, type WorkspaceHarness } from './test-support.ts';

describe('conversation hooks through the facade', () => {
  let h: WorkspaceHarness;
  beforeEach(async () => {
    h = await startWorkspaceHarness();
  });
  afterEach(() => h.close());

  it("lists the hooks of the conversation's working directory (relative to the agent server's workspace), read live", async () => {
    const id = await h.conversation('proj');
    expect((await h.call('GET', `/api/v1/app-conversations/${id}/hooks`)).body).toEqual({ hooks: [] });
    mkdirSync(join(h.workspace, 'proj', '.openhands'), { recursive: true });
    writeFileSync(
      join(h.workspace, 'proj', '.openhands', 'hooks.json'),
      JSON.stringify({ PreToolUse: [{ matcher: 'terminal', hooks: [{ command: 'guard.sh', timeout: 5 }] }], Stop: [{ hooks: [{ command: 'on_stop.sh', async: true }] }] }),
    );
    const res = await h.call('GET', `/api/v1/app-conversations/${id}/hooks`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      hooks: [
        { event_type: 'pre_tool_use', matchers: [{ matcher: 'terminal', hooks: [{ type: 'command', command: 'guard.sh', timeout: 5, async: false }] }] },
        { event_type: 'stop', matchers: [{ matcher: '*', hooks: [{ type: 'command', command: 'on_stop.sh', timeout: 60, async: true }] }] },
      ],
    });
    // Another user's conversation does not exist for alice.
    const theirs = await startConversationId(h, {}, h.bob.key);
    expect((await h.call('GET', `/api/v1/app-conversations/${theirs}/hooks`)).status).toBe(404);
  });
});
