// The agent server's API description, readable without a key like OpenHands': the OpenAPI 3.1
// document at /openapi.json (generated from src/api/agent-server/routes.ts), and /docs and /redoc,
// one self-contained page listing its operations (no script or style from another host: a sandbox
// may reach none).
import Router from '@koa/router';
import { COMPATIBLE_VERSION } from './health.ts';

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>agentyard agent server API</title>
<style>body{font:14px system-ui,sans-serif;margin:2em;max-width:70em}code{font-weight:bold}li{margin:.3em 0}.m{display:inline-block;width:4.5em;text-transform:uppercase}</style>
</head><body><h1>agentyard agent server API</h1><p>The OpenAPI 3.1 document: <a href="/openapi.json">/openapi.json</a>.</p><ul id="ops"></ul>
<script>
fetch('/openapi.json').then((r) => r.json()).then((doc) => {
  const ul = document.getElementById('ops');
  for (const [path, ops] of Object.entries(doc.paths)) for (const [method, op] of Object.entries(ops)) {
    const li = document.createElement('li');
    const params = (op.parameters || []).filter((p) => p.in === 'query').map((p) => p.name + (p.required ? '*' : '')).join(', ');
    li.innerHTML = '<span class="m"></span><code></code> <span></span>';
    li.children[0].textContent = method;
    li.children[1].textContent = path;
    li.children[2].textContent = ' ' + op.summary + (params ? ' (query: ' + params + ')' : '');
    ul.appendChild(li);
  }
});
</script></body></html>`;

export function docsRoutes(): Router {
  const router = new Router();
  let document: unknown;
  router.get('/openapi.json', async (ctx) => {
    // The route table and every schema in it load on the first request, not at start-up (issue #16: idle memory).
    document ??= (await import('../../api/gen/agent-server-openapi.ts')).agentServerOpenApiDocument(COMPATIBLE_VERSION);
    ctx.body = document;
  });
  for (const path of ['/docs', '/redoc']) {
    router.get(path, async (ctx) => {
      ctx.type = 'html';
      ctx.set('Content-Security-Policy', "default-src 'self'; script-src 'unsafe-inline' 'self'; style-src 'unsafe-inline'");
      ctx.body = PAGE;
    });
  }
  return router;
}
