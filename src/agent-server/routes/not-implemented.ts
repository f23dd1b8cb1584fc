// Parts of the OpenHands agent-server API that agentyard has not built yet. They answer 501 with
// a clear message (never 404, which would read as "wrong URL", and never a fake success).
import Router from '@koa/router';
import { NotImplemented } from '../../api/errors.ts';

const LATER: [method: 'post' | 'all', path: string, what: string][] = [
  ['post', '/conversations/:conversation_id/security_analyzer', 'Security analyzers'],
  ['post', '/conversations/:conversation_id/ask_agent', 'ask_agent'],
  ['post', '/conversations/:conversation_id/navigate', 'Conversation trees'],
  ['post', '/conversations/:conversation_id/switch_llm', 'Switching the LLM'],
  ['post', '/conversations/:conversation_id/switch_profile', 'LLM profiles'],
  ['post', '/conversations/:conversation_id/load_plugin', 'Loading plugins after start'],
  ['post', '/conversations/:conversation_id/goal{/*rest}', 'Goal loops'],
  ['all', '/git/commits{/*rest}', 'Git history'],
];

export function notImplementedRoutes(): Router {
  const router = new Router();
  for (const [method, path, what] of LATER) {
    const handler = async () => {
      throw new NotImplemented(`${what} is not implemented by this agent server yet`);
    };
    if (method === 'all') router.all(path, handler);
    else router.post(path, handler);
  }
  return router;
}
