// Tool definition kinds carried in SystemPromptEvent.tools (spec part 2, "Tool definition kinds").
// The spec leaves their fields "not shown"; they follow the OpenHands wire (agent-server 1.44 schema).
import Type, { type Static, type TLiteral, type TObject, type TProperties } from 'typebox';
import { JsonObject, kinded, Nullable, STRICT } from './common.ts';

/** MCP-style hints about a tool's behaviour. */
export const ToolAnnotations = Type.Object(
  {
    title: Nullable(Type.String()),
    readOnlyHint: Type.Optional(Type.Boolean({ default: false })),
    destructiveHint: Type.Optional(Type.Boolean({ default: true })),
    idempotentHint: Type.Optional(Type.Boolean({ default: false })),
    openWorldHint: Type.Optional(Type.Boolean({ default: true })),
  },
  STRICT,
);
export type ToolAnnotations = Static<typeof ToolAnnotations>;

// MCP protocol types are open: MCP allows extra properties, so these are not strict.
const McpIcon = Type.Object({
  src: Type.String(),
  mimeType: Nullable(Type.String()),
  sizes: Nullable(Type.Array(Type.String())),
});
const McpToolAnnotations = Type.Object({
  title: Nullable(Type.String()),
  readOnlyHint: Nullable(Type.Boolean()),
  destructiveHint: Nullable(Type.Boolean()),
  idempotentHint: Nullable(Type.Boolean()),
  openWorldHint: Nullable(Type.Boolean()),
});
const McpToolExecution = Type.Object({
  taskSupport: Nullable(Type.Union([Type.Literal('forbidden'), Type.Literal('optional'), Type.Literal('required')])),
});

/** An MCP `Tool` as the MCP server listed it. */
export const McpTool = Type.Object({
  name: Type.String(),
  title: Nullable(Type.String()),
  description: Nullable(Type.String()),
  inputSchema: JsonObject,
  outputSchema: Nullable(JsonObject),
  annotations: Nullable(McpToolAnnotations),
  icons: Nullable(Type.Array(McpIcon)),
  execution: Nullable(McpToolExecution),
  _meta: Nullable(JsonObject),
});
export type McpTool = Static<typeof McpTool>;

const toolFields = {
  description: Type.String(),
  /** Name of the action class the tool accepts, e.g. `TerminalAction`. */
  action_type: Type.String(),
  observation_type: Nullable(Type.String()),
  annotations: Nullable(ToolAnnotations),
  meta: Nullable(JsonObject),
  /** Computed by OpenHands from the tool name; always present on output. */
  title: Type.String(),
};

function tool<K extends string, P extends TProperties>(kind: K, props: P) {
  return kinded(kind, { ...toolFields, ...props });
}

export const MCPToolDefinition = tool('MCPToolDefinition', { mcp_tool: McpTool });
export const ClientTool = tool('ClientTool', { client_tool_name: Type.String(), input_schema: JsonObject });

/** Tool kinds with no fields beyond the common ones. */
export const PLAIN_TOOL_KINDS = [
  'ClassifyAndSwitchLLMTool',
  'FinishTool',
  'InvokeSkillTool',
  'SwitchLLMTool',
  'ThinkTool',
  'VisionInspectTool',
  'AskOracleTool',
  'BrowserClickTool',
  'BrowserCloseTabTool',
  'BrowserGetContentTool',
  'BrowserGetStateTool',
  'BrowserGetStorageTool',
  'BrowserGoBackTool',
  'BrowserListTabsTool',
  'BrowserNavigateTool',
  'BrowserScrollTool',
  'BrowserSetStorageTool',
  'BrowserStartRecordingTool',
  'BrowserStopRecordingTool',
  'BrowserSwitchTabTool',
  'BrowserToolSet',
  'BrowserTypeTool',
  'FileEditorTool',
  'EditTool',
  'ListDirectoryTool',
  'ReadFileTool',
  'WriteFileTool',
  'GlobTool',
  'GrepTool',
  'PlanningFileEditorTool',
  'TaskTool',
  'TaskToolSet',
  'TaskTrackerTool',
  'TerminalTool',
  'WorkflowTool',
  'WorkflowToolSet',
] as const;
export type PlainToolKind = (typeof PLAIN_TOOL_KINDS)[number];

/** One strict schema per plain tool kind (a discriminated union types better than an enum `kind`). */
function plainTools<const T extends readonly string[]>(kinds: T) {
  return kinds.map((k) => tool(k, {})) as unknown as {
    -readonly [I in keyof T]: TObject<typeof toolFields & { kind: TLiteral<T[I]> }>;
  };
}
export const PLAIN_TOOL_SCHEMAS = plainTools(PLAIN_TOOL_KINDS);
export const PlainToolDefinition = Type.Union(PLAIN_TOOL_SCHEMAS);
export type PlainToolDefinition = Static<typeof PlainToolDefinition>;

export const ToolDefinition = Type.Union([MCPToolDefinition, ClientTool, ...PLAIN_TOOL_SCHEMAS]);
export type ToolDefinition = Static<typeof ToolDefinition>;
export type ToolDefinitionKind = ToolDefinition['kind'];
export type MCPToolDefinition = Static<typeof MCPToolDefinition>;
export type ClientTool = Static<typeof ClientTool>;
