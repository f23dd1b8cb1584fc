// How the facade reaches an agent server: the factory from the deps (tests), else the runtime's
// AgentServerClient, which maps HTTP failures to AgentyardError classes (unreachable → 503,
// other upstream failures → 502, 404/409/422 passed on).
import { AgentServerClient } from '../runtime/agent-server-client.ts';
import type { AgentClientFactory, FacadeDeps } from './deps.ts';

export const defaultAgentClient: AgentClientFactory = (baseUrl, sessionKey) => new AgentServerClient(baseUrl, sessionKey);

export function agentClientFor(d: FacadeDeps): AgentClientFactory {
  return d.agentClient ?? defaultAgentClient;
}
