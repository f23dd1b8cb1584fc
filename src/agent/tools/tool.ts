// What every tool of the agent looks like: a JSON-schema'd function for the model, an action it
// parses the model's arguments into, and an observation it produces (OpenHands wire shapes).
import type { ChatTool } from '../llm/client.ts';

export interface ToolContext {
  workspaceDir: string;
  signal?: AbortSignal;
  /** Replaces every secret value in a text. */
  mask(text: string): string;
}

export interface ToolResult {
  observation: Record<string, unknown> & { kind: string };
  /** Text the model sees next. */
  text: string;
  isError: boolean;
}

/** The model called a tool with arguments it does not accept: an AgentErrorEvent, and the run goes on. */
export class ToolArgumentError extends Error {}

export interface AgentTool {
  /** Name the model calls, e.g. `terminal`. */
  name: string;
  /** Tool definition kind in the SystemPromptEvent, e.g. `TerminalTool`. */
  definitionKind: string;
  actionKind: string;
  observationKind: string;
  description: string;
  parameters: Record<string, unknown>;
  toAction(args: Record<string, unknown>): Record<string, unknown> & { kind: string };
  execute(action: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult>;
  close?(): Promise<void>;
}

export function toChatTool(tool: AgentTool): ChatTool {
  return { type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.parameters } };
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
