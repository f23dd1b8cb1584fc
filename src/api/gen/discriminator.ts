// The versioned discriminator mapping of the `kind` unions (spec part 9 rule 3). On the wire `kind`
// is the short class name; OpenAPI documents key the mapping by the OpenHands class path with a
// version suffix (`openhands__sdk__event__condenser__Condensation-Output__1`), as the OpenHands
// agent server publishes it. The keys are derived here from the schemas' own `kind` literals and
// the Python module each kind lives in, so a new kind cannot be published without a mapping entry.
import type { TSchema } from 'typebox';
import { ConfirmationPolicy, SecretSource } from '../agent-server/policy.ts';
import { EnsembleMember, SecurityAnalyzer } from '../agent-server/security-analyzer.ts';
import { BashEvent } from '../agent-server/server.ts';
import { Action, Event, EVENT_KIND_FQCN, isEventKind, namespacedClass, Observation, ToolDefinition } from '../events/index.ts';

export { KIND_SCHEMA_VERSION } from '../events/index.ts';

/** The unions discriminated by `kind` that the OpenAPI documents publish, by component name. */
export const KIND_UNIONS: Record<string, TSchema> = { Event, Action, Observation, ToolDefinition, ConfirmationPolicy, SecretSource, BashEvent, SecurityAnalyzer, EnsembleMember };

// Action, observation and tool kinds of one tool share a module; these tools are the SDK built-ins.
const SDK_BUILTINS = new Set(['Finish', 'InvokeSkill', 'SwitchLLM', 'Think', 'VisionInspect', 'ClassifyAndSwitchLLM']);
// The Gemini-style file tools live one level deeper.
const GEMINI_TOOLS = new Set(['Edit', 'ListDirectory', 'ReadFile', 'WriteFile']);
// Kinds whose class does not sit in a tool's `definition` module.
const MODULE_OF: Record<string, string> = {
  NeverConfirm: 'openhands.sdk.security.confirmation_policy',
  AlwaysConfirm: 'openhands.sdk.security.confirmation_policy',
  ConfirmRisky: 'openhands.sdk.security.confirmation_policy',
  LLMSecurityAnalyzer: 'openhands.sdk.security.llm_analyzer',
  PatternSecurityAnalyzer: 'openhands.sdk.security.defense_in_depth.pattern',
  PolicyRailSecurityAnalyzer: 'openhands.sdk.security.defense_in_depth.policy_rails',
  EnsembleSecurityAnalyzer: 'openhands.sdk.security.ensemble',
  GraySwanAnalyzer: 'openhands.sdk.security.grayswan.analyzer',
  ToolShieldLLMSecurityAnalyzer: 'openhands.sdk.security.toolshield_llm_analyzer',
  StaticSecret: 'openhands.sdk.secret.secrets',
  LookupSecret: 'openhands.sdk.secret.secrets',
  BashCommand: 'openhands.agent_server.models',
  BashOutput: 'openhands.agent_server.models',
  BashError: 'openhands.agent_server.models',
  MCPToolAction: 'openhands.sdk.mcp.definition',
  MCPToolObservation: 'openhands.sdk.mcp.definition',
  MCPToolDefinition: 'openhands.sdk.mcp.tool',
  ClientTool: 'openhands.sdk.tool.client_tool',
  ClientToolObservation: 'openhands.sdk.tool.client_tool',
};

const snake = (s: string) => s.replace(/([a-z0-9])([A-Z])/g, '$1_$2').replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2').toLowerCase();

/** The Python module of a kind other than an event kind. */
function toolModule(kind: string): string {
  if (MODULE_OF[kind]) return MODULE_OF[kind];
  const tool = kind.replace(/(Action|Observation|ToolSet|Tool)$/, '');
  if (SDK_BUILTINS.has(tool)) return `openhands.sdk.tool.builtins.${snake(tool)}`;
  if (tool.startsWith('Browser')) return 'openhands.tools.browser_use.definition';
  if (GEMINI_TOOLS.has(tool)) return `openhands.tools.gemini.${snake(tool)}.definition`;
  return `openhands.tools.${snake(tool)}.definition`;
}

/** The fully-qualified OpenHands class path of any kind of the published unions. */
export function kindClassPath(kind: string): string {
  return isEventKind(kind) ? EVENT_KIND_FQCN[kind] : `${toolModule(kind)}.${kind}`;
}

/** The versioned mapping key of a kind: class path with `__` for dots, then the version suffix. */
export function discriminatorKey(kind: string): string {
  return namespacedClass(kindClassPath(kind));
}

/** The `kind` literal of each member of a union, in order. */
export function unionKinds(union: TSchema): string[] {
  const members = (union as { anyOf?: { properties?: { kind?: { const?: unknown } } }[] }).anyOf ?? [];
  return members.map((m, i) => {
    const kind = m.properties?.kind?.const;
    if (typeof kind !== 'string') throw new Error(`member ${i} of a kind union has no kind literal`);
    return kind;
  });
}
