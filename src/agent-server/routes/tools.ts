// GET /api/tools/: the names of the tools a conversation on this server can have (the same list as
// /server_info usable_tools; see src/agent/tools/catalog.ts for what is and is not in it).
// GET /api/tools/catalog: the ones a client offers for `agent.tools`, described (OpenHands 1.58);
// the browser tools are usable when the list above has them (a Chromium was found).
import Router from '@koa/router';
import type { ToolCatalogResponse } from '../../api/agent-server/runtime.ts';
import { toolCatalogEntries } from '../../agent/tools/catalog.ts';

export function toolRoutes(usableTools: readonly string[]): Router {
  const r = new Router();
  r.get('/tools/', async (ctx) => {
    ctx.body = [...usableTools];
  });
  const catalog: ToolCatalogResponse = { tools: toolCatalogEntries({ browser: usableTools.includes('browser_tool_set') }) };
  r.get('/tools/catalog', (ctx) => {
    ctx.body = catalog;
  });
  return r;
}
