// GET /api/vscode/url and GET /api/vscode/status (also under a conversation's runtime routes): no
// VS Code server runs in an agentyard sandbox, so both say so the way OpenHands 1.58 does when its
// `enable_vscode` is off: the URL is a 503 with a message, the status `enabled: false`. Never a URL
// to a VS Code that is not there. GET /api/desktop/url (OpenHands before 1.58; 1.58 has no desktop
// routes, a 404): no remote desktop runs either, so a 503 with a message, as those servers answered
// with the desktop off and as the official TypeScript client's tests accept (e2e/parity/deliberate.ts).
import Router from '@koa/router';
import type { VSCodeStatus } from '../../api/agent-server/runtime.ts';
import { Unavailable } from '../../api/errors.ts';

export const DESKTOP_ABSENT = 'A remote desktop is not available: this agent server runs none in the sandbox';
export const VSCODE_ABSENT = 'VS Code is not available: this agent server runs no VS Code server in the sandbox';

export function vscodeRoutes(): Router {
  const r = new Router({ prefix: '/vscode' });
  r.get('/url', () => {
    throw new Unavailable(VSCODE_ABSENT);
  });
  r.get('/status', (ctx) => {
    const body: VSCodeStatus = { running: false, enabled: false, message: VSCODE_ABSENT };
    ctx.body = body;
  });
  return r;
}

export function desktopRoutes(): Router {
  const r = new Router({ prefix: '/desktop' });
  r.get('/url', () => {
    throw new Unavailable(DESKTOP_ABSENT);
  });
  return r;
}
