// One MCP tool as an agent tool, in OpenHands' shapes: the model sees the server's input schema
// (plus `summary`/`security_risk`), the call is recorded as MCPToolAction {data}, the answer as
// MCPToolObservation {tool_name, content, is_error}. A failing server answers with an error
// observation; the conversation goes on.
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { MCPToolAction, Observation } from '../../api/events/index.ts';
import { ToolArgumentError, type AgentTool } from '../tools/tool.ts';
import type { McpConnection } from './connection.ts';

type McpObservation = Extract<Observation, { kind: 'MCPToolObservation' }>;
type Content = NonNullable<McpObservation['content']>;

export interface McpToolOptions {
  /** The name the model calls (the MCP name, prefixed with the server name when several servers are configured). */
  name: string;
  tool: Tool;
  connection: McpConnection;
  /** Current secrets: `$NAME` / `${NAME}` in call arguments are filled from them (never from the environment). */
  secrets: () => Readonly<Record<string, string>>;
}

export function mcpTool(o: McpToolOptions): AgentTool<MCPToolAction> {
  const schema = o.tool.inputSchema as Record<string, unknown>;
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
  return {
    name: o.name,
    definitionKind: 'MCPToolDefinition',
    actionKind: 'MCPToolAction',
    observationKind: 'MCPToolObservation',
    description: o.tool.description || 'No description provided',
    parameters: { ...schema, type: 'object', properties: (schema.properties as Record<string, unknown> | undefined) ?? {} },
    readOnly: o.tool.annotations?.readOnlyHint === true,
    definition: { mcp_tool: o.tool, ...(o.tool.annotations ? { annotations: annotations(o.name, o.tool.annotations) } : {}) },
    toAction(args) {
      // Nulls are "not given" (OpenHands drops them before validating against the schema).
      const data = Object.fromEntries(Object.entries(args).filter(([, v]) => v !== null && v !== undefined));
      const missing = required.filter((r) => !(r in data));
      if (missing.length) throw new ToolArgumentError(`Missing required argument(s) for MCP tool '${o.name}': ${missing.join(', ')}`);
      return { kind: 'MCPToolAction', data };
    },
    async execute(action, ctx) {
      const data = expandSecrets(action.data ?? {}, o.secrets());
      try {
        const result = await o.connection.call(o.tool.name, data, ctx.signal);
        return observation(o.name, result.content, result.isError === true);
      } catch (err) {
        return { kind: 'MCPToolObservation', tool_name: o.name, is_error: true, content: [{ type: 'text', text: ctx.mask(`Error calling MCP tool ${o.name}: ${err instanceof Error ? err.message : String(err)}`) }] };
      }
    },
  };
}

/** The server's hints, as OpenHands copies them onto the tool definition (only the known keys). */
function annotations(name: string, a: NonNullable<Tool['annotations']>): Record<string, unknown> {
  const out: Record<string, unknown> = { title: a.title ?? name };
  for (const k of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) if (typeof a[k] === 'boolean') out[k] = a[k];
  return out;
}

function observation(name: string, blocks: readonly unknown[] | undefined, isError: boolean): McpObservation {
  const content: Content = [{ type: 'text', text: `[Tool '${name}' executed.]` }];
  for (const b of blocks ?? []) {
    const block = b as { type?: string; text?: string; data?: string; mimeType?: string; resource?: { text?: string; uri?: string } };
    if (block.type === 'text' && typeof block.text === 'string') content.push({ type: 'text', text: block.text });
    else if (block.type === 'image' && block.data) content.push({ type: 'image', image_urls: [`data:${block.mimeType ?? 'image/png'};base64,${block.data}`] });
    // OpenHands ignores other block kinds; an embedded text resource is still worth showing.
    else if (block.type === 'resource' && typeof block.resource?.text === 'string') content.push({ type: 'text', text: block.resource.text });
  }
  return { kind: 'MCPToolObservation', tool_name: name, is_error: isError, content };
}

const REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g;

/** `$NAME`, `${NAME}`, `${NAME:-default}` in string values, from secrets only; unknown references stay as written. */
export function expandSecrets<T>(value: T, secrets: Readonly<Record<string, string>>): T {
  if (typeof value === 'string') {
    return value.replace(REF, (m, braced: string | undefined, fallback: string | undefined, bare: string | undefined) => {
      const name = braced ?? bare!;
      return Object.hasOwn(secrets, name) ? secrets[name]! : braced && fallback !== undefined ? fallback : m;
    }) as T;
  }
  if (Array.isArray(value)) return value.map((v) => expandSecrets(v, secrets)) as T;
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, expandSecrets(v, secrets)])) as T;
  return value;
}
