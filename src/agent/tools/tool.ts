// What every tool of the agent looks like: a JSON-schema'd function for the model, an action it
// parses the model's arguments into, and an observation it produces (OpenHands wire shapes).
import type { Action, Observation } from '../../api/events/index.ts';
import type { ChatTool } from '../llm/client.ts';

export interface ToolContext {
  workspaceDir: string;
  /** Aborts when the run is paused, interrupted or the conversation closes. */
  signal?: AbortSignal;
  /** Replaces every secret value in a text. */
  mask(text: string): string;
}

/** The model called a tool with arguments it does not accept: an AgentErrorEvent, and the run goes on. */
export class ToolArgumentError extends Error {}

export interface AgentTool<A extends Action = Action> {
  /** Name the model calls, e.g. `terminal`. */
  name: string;
  /** Tool definition kind in the SystemPromptEvent, e.g. `TerminalTool`. */
  definitionKind: string;
  actionKind: A['kind'];
  observationKind: Observation['kind'];
  description: string;
  /** JSON schema of the arguments (without `summary`, which the agent adds to every tool). */
  parameters: { type: 'object'; properties: Record<string, unknown>; required?: string[] };
  /** Throws ToolArgumentError for arguments it cannot act on. */
  toAction(args: Record<string, unknown>): A;
  /** Observations report tool-level failures with is_error; a throw is a scaffold failure (AgentErrorEvent). */
  execute(action: A, ctx: ToolContext): Promise<Observation>;
  /** Changes nothing outside the conversation (shown as readOnlyHint in the tool definition). */
  readOnly?: boolean;
  /** Ends the run as finished once its observation is recorded. */
  finishes?: boolean;
  /** Extra fields of its SystemPromptEvent definition (MCPToolDefinition's `mcp_tool`, server annotations). */
  definition?: Record<string, unknown>;
}

const SUMMARY = { type: 'string', description: 'A concise summary (approximately 10 words) of what this action does, shown to the user.' };

const SECURITY_RISK = {
  type: 'string',
  enum: ['LOW', 'MEDIUM', 'HIGH'],
  description:
    "The LLM's assessment of the safety risk of this action: LOW (read-only or easily undone), MEDIUM (changes the workspace), HIGH (destructive, irreversible, or reaching outside the workspace). Used by confirmation policies.",
};

/**
 * The function the model sees. OpenHands adds an optional `summary` to every tool, first in the
 * properties, and a `security_risk` prediction to tools that are not read-only (recorded on the
 * ActionEvent; ConfirmRisky policies read it). Both are lifted off the arguments before toAction.
 */
export function toChatTool(tool: AgentTool): ChatTool {
  let properties = 'summary' in tool.parameters.properties ? tool.parameters.properties : { summary: SUMMARY, ...tool.parameters.properties };
  if (!tool.readOnly && !('security_risk' in properties)) properties = { ...properties, security_risk: SECURITY_RISK };
  return { type: 'function', function: { name: tool.name, description: tool.description, parameters: { ...tool.parameters, properties } } };
}

export function textContent(text: string) {
  return [{ type: 'text' as const, text }];
}

export function requireString(args: Record<string, unknown>, name: string): string {
  const v = args[name];
  if (typeof v !== 'string') throw new ToolArgumentError(`Parameter '${name}' is required and must be a string`);
  return v;
}

export function optional<T>(args: Record<string, unknown>, name: string, type: 'string' | 'number' | 'boolean'): T | undefined {
  const v = args[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== type) throw new ToolArgumentError(`Parameter '${name}' must be a ${type}`);
  return v as T;
}
