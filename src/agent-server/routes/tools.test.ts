// /server_info usable_tools and GET /api/tools/: the same list, with the browser tools only when a
// Chromium is there to drive (AGENTYARD_CHROMIUM names it here, so the test controls both cases).
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestServer, tempDir, type TestServer } from '../test-support.ts';

const BROWSER = ['browser_tool_set', 'browser_navigate', 'browser_click', 'browser_type', 'browser_get_state', 'browser_get_content', 'browser_scroll', 'browser_go_back', 'browser_list_tabs', 'browser_switch_tab', 'browser_close_tab', 'browser_get_storage', 'browser_set_storage', 'browser_start_recording', 'browser_stop_recording'];
const BASE = ['terminal', 'file_editor', 'think', 'finish', 'task_tracker', 'glob', 'grep', 'task_tool_set', 'invoke_skill'];

const saved = process.env['AGENTYARD_CHROMIUM'];
let dir: ReturnType<typeof tempDir> | undefined;
let s: TestServer | undefined;
afterEach(async () => {
  await s?.close();
  dir?.remove();
  if (saved === undefined) delete process.env['AGENTYARD_CHROMIUM'];
  else process.env['AGENTYARD_CHROMIUM'] = saved;
});

async function listings(chromium: string): Promise<{ info: string[]; tools: string[] }> {
  process.env['AGENTYARD_CHROMIUM'] = chromium;
  dir = tempDir();
  s = await startTestServer(dir.path);
  const info = (await s.api('/server_info', { key: null })).body.usable_tools;
  const tools = await s.api('/api/tools/');
  expect(tools.status).toBe(200);
  expect((await s.api('/api/tools/', { key: null })).status).toBe(401);
  return { info, tools: tools.body };
}

describe('usable tools', () => {
  it('lists the browser tools when a browser is available', async () => {
    // Any existing executable stands for the browser: only its presence is checked at start-up.
    const { info, tools } = await listings(process.execPath);
    expect(info).toEqual([...BASE, ...BROWSER]);
    expect(tools).toEqual(info);
  });

  it('leaves them out when none is found, and never lists MCP tools (they are per conversation)', async () => {
    const { info, tools } = await listings(join('/nonexistent', 'chromium'));
    expect(info).toEqual(BASE);
    expect(tools).toEqual(BASE);
    expect(info.some((t) => t.startsWith('browser'))).toBe(false);
  });

  it('describes the selectable ones in /api/tools/catalog, the browser usable only with a browser', async () => {
    for (const [chromium, browserUsable] of [[process.execPath, true], [join('/nonexistent', 'chromium'), false]] as const) {
      const { tools } = await listings(chromium);
      const catalog = await s!.api('/api/tools/catalog');
      expect(catalog.status).toBe(200);
      const byName = Object.fromEntries(catalog.body.tools.map((e: any) => [e.name, e]));
      expect(Object.keys(byName)).toEqual(['terminal', 'file_editor', 'task_tracker', 'glob', 'grep', 'task_tool_set', 'browser_tool_set']);
      expect(byName.browser_tool_set).toMatchObject({ usable: browserUsable, user_selectable: true, in_default_set: false });
      expect(catalog.body.tools.filter((e: any) => e.in_default_set).map((e: any) => e.name)).toEqual(['terminal', 'file_editor']);
      // Every usable catalog entry is a tool this server lists.
      for (const e of catalog.body.tools) if (e.usable) expect(tools).toContain(e.name);
      for (const e of catalog.body.tools) expect(e.description.length).toBeGreaterThan(10);
      await s!.close();
      s = undefined;
      dir!.remove();
      dir = undefined;
    }
  });
});
