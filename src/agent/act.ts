// Turning a model response into recorded actions, and recorded actions into observations.
import type { Action, ActionEvent, Event, SecurityRisk } from '../api/events/index.ts';
import { SECURITY_RISKS } from './confirmation/policy.ts';
import { actionEvent, agentError, observationEvent, userReject } from './events.ts';
import type { Rejection } from './gate.ts';
import type { Completion, ToolCall } from './llm/client.ts';
import { ToolArgumentError, type AgentTool, type ToolContext } from './tools/tool.ts';

export interface Planned {
  event: ActionEvent;
  /** Why the call cannot run (unknown tool, arguments that are not JSON or not accepted). */
  error?: string;
}

/**
 * Parses one tool call against the tools; never throws for what the model sent. The predicted risk
 * is kept only when `predictedRisk` (an LLM security analyzer) and for a tool that is not read-only.
 */
function parse(tools: readonly AgentTool[], call: ToolCall, predictedRisk: boolean): { action?: Action; summary?: string; risk?: SecurityRisk; error?: string } {
  const tool = tools.find((t) => t.name === call.name);
  if (!tool) return { error: `Tool '${call.name}' not found. Available tools: ${tools.map((t) => t.name).join(', ')}` };
  let args: Record<string, unknown>;
  try {
    const parsed = JSON.parse(call.arguments.trim() || '{}') as unknown;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new SyntaxError('not a JSON object');
    args = parsed as Record<string, unknown>;
  } catch (err) {
    return { error: `Error parsing the arguments of tool '${call.name}' as a JSON object (${(err as Error).message}): ${call.arguments}` };
  }
  // `summary` (and an LLM-predicted `security_risk`) belong to the event, not to the action.
  const { summary, security_risk: risk, ...rest } = args;
  const counts = predictedRisk && !tool.readOnly;
  const s = {
    ...(typeof summary === 'string' && summary.trim() ? { summary } : {}),
    // A value outside the enum is ignored (UNKNOWN), not an error: the call itself may be fine.
    ...(counts && typeof risk === 'string' && (SECURITY_RISKS as readonly string[]).includes(risk.toUpperCase()) ? { risk: risk.toUpperCase() as SecurityRisk } : {}),
  };
  try {
    return { action: tool.toAction(rest), ...s };
  } catch (err) {
    if (err instanceof ToolArgumentError) return { error: `Invalid arguments for tool '${call.name}': ${err.message}`, ...s };
    throw err;
  }
}

/**
 * One ActionEvent per call, sharing the response's llm_response_id; calls that cannot run have
 * action null. `predictedRisk`: the conversation's analyzer takes the model's security_risk (else UNKNOWN).
 */
export function plan(tools: readonly AgentTool[], completion: Completion, predictedRisk: boolean): Planned[] {
  return completion.toolCalls.map((call, i) => {
    const { action, summary, risk, error } = parse(tools, call, predictedRisk);
    return { event: actionEvent(completion, call, i, action ?? null, summary, risk), ...(error ? { error } : {}) };
  });
}

export type ExecuteOutcome = 'continue' | 'finished' | 'aborted';

/**
 * Runs recorded actions in order, each answered by an ObservationEvent (or an AgentErrorEvent when
 * the tool itself failed), or by its UserRejectObservation when `rejected` holds one for it: as
 * OpenHands 1.58 emits a batch, every answer in the order of the calls, so a blocked action that is
 * not the first of its batch is answered after the observations before it. `real` holds the unmasked actions of this agent's own calls (each entry is
 * dropped once it ran); an action read back from the log (after a restart) runs as recorded. Stops before the next action once
 * `signal` aborts: those stay pending, and the next run executes them.
 */
export async function execute(
  tools: readonly AgentTool[],
  actions: readonly ActionEvent[],
  ctx: ToolContext & { signal: AbortSignal },
  emit: (event: Event) => void,
  real: Map<string, Action>,
  rejected: ReadonlyMap<string, Rejection> = new Map(),
): Promise<ExecuteOutcome> {
  let finished = false;
  for (const [i, event] of actions.entries()) {
    if (ctx.signal.aborted) {
      // A rejection needs nothing to run: the answers of the rest are recorded, only the runs wait.
      for (const rest of actions.slice(i)) {
        const r = rejected.get(rest.id);
        if (r) emit(userReject(rest, r.reason, r.source));
      }
      return 'aborted';
    }
    const rejection = rejected.get(event.id);
    if (rejection) {
      emit(userReject(event, rejection.reason, rejection.source));
      continue;
    }
    const tool = tools.find((t) => t.name === event.tool_name);
    const action = real.get(event.id) ?? event.action;
    real.delete(event.id);
    if (!tool || !action) {
      emit(agentError(event.tool_name, event.tool_call_id, `Tool '${event.tool_name}' cannot run this call.`));
      continue;
    }
    try {
      const observation = await tool.execute(action, ctx);
      emit(observationEvent(event, observation));
      if (tool.finishes && !observation.is_error) finished = true;
    } catch (err) {
      emit(agentError(event.tool_name, event.tool_call_id, `The tool '${event.tool_name}' failed: ${err instanceof Error ? err.message : String(err)}`));
    }
  }
  return finished ? 'finished' : 'continue';
}
