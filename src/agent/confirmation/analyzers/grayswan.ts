// GraySwanAnalyzer (OpenHands 1.58 `security/grayswan/`): a hosted guard model (Cygnal) scores the
// pending action; the violation score maps to a risk through two thresholds, and an indirect prompt
// injection (`ipi`) is HIGH whatever the score. Every failure (no key, timeout, non-200, bad JSON,
// no `violation`) is UNKNOWN, as in 1.58, so ConfirmRisky's confirm_unknown decides.
//
// What is sent is what 1.58 sends: 1.58 never hands the analyzer the conversation (nothing calls its
// set_events), so the request carries a system message and the pending action as an assistant tool
// call, with `security_risk` taken out of its arguments. The key goes only into the Authorization
// header: never into a log line, an event or a response (the runtime masks it).
import type { GraySwanAnalyzer } from '../../../api/agent-server/index.ts';
import type { ActionEvent, SecurityRisk } from '../../../api/events/index.ts';

export const GRAYSWAN_DEFAULT_POLICY_ID = '689ca4885af3538a39b2ba04';
const SYSTEM = 'You are a security analysis assistant.';

/** 1.58 prefers the environment's key and policy over the settings' (model_post_init). */
export function grayswanCredentials(s: GraySwanAnalyzer, env: NodeJS.ProcessEnv = process.env): { apiKey: string | undefined; policyId: string } {
  return {
    apiKey: env['GRAYSWAN_API_KEY'] || s.api_key || undefined,
    policyId: env['GRAYSWAN_POLICY_ID'] || s.policy_id || GRAYSWAN_DEFAULT_POLICY_ID,
  };
}

export function grayswanMessages(action: ActionEvent): unknown[] {
  let args = action.tool_call.arguments;
  try {
    const parsed = JSON.parse(args) as unknown;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed) && 'security_risk' in parsed) {
      delete (parsed as Record<string, unknown>)['security_risk'];
      args = JSON.stringify(parsed);
    }
  } catch {
    // sent as it came, like 1.58
  }
  return [
    { role: 'system', content: SYSTEM },
    {
      role: 'assistant',
      content: (action.thought ?? []).map((t) => t.text).join(' '),
      tool_calls: [{ id: action.tool_call_id, type: 'function', function: { name: action.tool_name, arguments: args } }],
    },
  ];
}

export function violationRisk(s: GraySwanAnalyzer, score: number): SecurityRisk {
  if (score <= (s.low_threshold ?? 0.3)) return 'LOW';
  if (score <= (s.medium_threshold ?? 0.7)) return 'MEDIUM';
  return 'HIGH';
}

export async function grayswanRisk(s: GraySwanAnalyzer, action: ActionEvent, signal?: AbortSignal): Promise<SecurityRisk> {
  const { apiKey, policyId } = grayswanCredentials(s);
  if (!apiKey) return 'UNKNOWN';
  const timeout = AbortSignal.timeout((s.timeout ?? 30) * 1000);
  try {
    const res = await fetch(s.api_url ?? 'https://api.grayswan.ai/cygnal/monitor', {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ messages: grayswanMessages(action), policy_id: policyId }),
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
    if (res.status !== 200) return 'UNKNOWN';
    const body = (await res.json()) as { violation?: unknown; ipi?: unknown };
    if (typeof body?.violation !== 'number') return 'UNKNOWN';
    return body.ipi ? 'HIGH' : violationRisk(s, body.violation);
  } catch {
    return 'UNKNOWN';
  }
}
