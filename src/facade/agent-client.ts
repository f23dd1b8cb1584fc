// How the facade reaches an agent server: the factory from the deps, else a minimal client for
// the one call the facade makes (POST /api/conversations/{id}/events).
import { BadGateway, Conflict, Invalid, NotFound, Unavailable } from '../api/errors.ts';
import type { AgentClientFactory, AgentMessage, FacadeDeps } from './deps.ts';

const TIMEOUT_MS = 30_000;

export const httpAgentClient: AgentClientFactory = (baseUrl, sessionKey) => ({
  async sendMessage(conversationId: string, message: AgentMessage): Promise<unknown> {
    const url = `${baseUrl.replace(/\/+$/, '')}/api/conversations/${encodeURIComponent(conversationId)}/events`;
    let res: Response;
    try {
      res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-session-api-key': sessionKey },
        body: JSON.stringify(message),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (err) {
      throw new BadGateway('The agent server could not be reached', { cause: err });
    }
    const text = await res.text();
    if (res.ok) return text === '' ? undefined : (JSON.parse(text) as unknown);
    if (res.status === 404) throw new NotFound(`The agent server does not know conversation ${conversationId}`);
    if (res.status === 409) throw new Conflict('The agent server refused the message (conflict)');
    if (res.status === 422) throw new Invalid([{ loc: ['body'], msg: 'The agent server rejected the message', type: 'value_error' }]);
    if (res.status === 503) throw new Unavailable('The agent server is not ready');
    throw new BadGateway(`The agent server answered ${res.status}`);
  },
});

export function agentClientFor(d: FacadeDeps): AgentClientFactory {
  return d.agentClient ?? httpAgentClient;
}
