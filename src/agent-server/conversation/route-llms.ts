// The routing tool's inline LLMs (1.58's `meta_profile_llms`, carried in the params of the
// ClassifyAndSwitchLLMTool entry of `agent.tools`): LLMs by profile name for a runtime without the
// profile store, which the tool prefers to the stored profiles of the same name (classifier and
// target). Their keys are secrets, kept as the agent's own LLM key is: the stored request carries
// them as null, the values go into the conversation's sealed secrets (with OH_SECRET_KEY; memory
// only without one), the runtime puts them back for the tool (ConversationRuntime.routing), and
// ConversationInfo shows the mask where one is set. 1.58 stores them in plain text in its
// base_state.json and answers them in plain text in every ConversationInfo (a deliberate difference).
import type { ToolSpec } from '../../api/agent-server/agent.ts';
import { MetaProfileLlm } from '../../api/agent-server/settings.ts';
import { Invalid, type ValidationIssue } from '../../api/errors.ts';
import { parseValue } from '../../api/events/validate.ts';
import { ROUTE_TOOL_KIND, ROUTE_TOOL_NAME } from '../../agent/tools/route-task.ts';
import { MASK } from '../secrets.ts';
import { LLM_SECRET_FIELDS } from '../settings-doc.ts';

type Json = Record<string, unknown>;
/** The secret fields of each inline LLM that has any, by profile name: what is sealed. */
export type RouteLlmKeys = Record<string, Record<string, string>>;

const isMap = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const isRouteTool = (t: ToolSpec) => t.name === ROUTE_TOOL_KIND || t.name === ROUTE_TOOL_NAME;

/**
 * Each inline LLM of the routing tool checked as 1.58's LLM (a model required), located at its
 * entry; cleaned of fields the LLM does not have (1.58 ignores them). The tools are returned with
 * the checked LLMs in place.
 */
export function checkRouteLlms(tools: ToolSpec[] | undefined, loc: (string | number)[]): ToolSpec[] | undefined {
  if (!tools) return tools;
  const issues: ValidationIssue[] = [];
  const out = tools.map((t, i) => {
    const llms = t.params?.['meta_profile_llms'];
    if (!isRouteTool(t) || llms === undefined || llms === null) return t;
    const at = [...loc, i, 'params', 'meta_profile_llms'];
    if (!isMap(llms)) {
      issues.push({ loc: at, msg: 'Input should be a valid dictionary', type: 'dict_type' });
      return t;
    }
    const checked: Record<string, MetaProfileLlm> = {};
    for (const [name, llm] of Object.entries(llms)) {
      try {
        checked[name] = parseValue(MetaProfileLlm, llm, { prefix: [...at, name], clean: true });
      } catch (err) {
        if (!(err instanceof Invalid)) throw err;
        issues.push(...(err.detail as ValidationIssue[]));
      }
    }
    return { ...t, params: { ...t.params, meta_profile_llms: checked } };
  });
  if (issues.length) throw new Invalid(issues);
  return out;
}

/** The tools as stored (every secret field of an inline LLM null) and the secret values taken out. */
export function splitRouteLlmKeys(tools: ToolSpec[] | undefined): { stored: ToolSpec[] | undefined; keys: RouteLlmKeys } {
  const keys: RouteLlmKeys = {};
  if (!tools) return { stored: tools, keys };
  const stored = tools.map((t) => {
    const llms = t.params?.['meta_profile_llms'];
    if (!isRouteTool(t) || !isMap(llms)) return t;
    const bare: Json = {};
    for (const [name, llm] of Object.entries(llms)) {
      if (!isMap(llm)) continue;
      const copy = { ...llm };
      for (const f of LLM_SECRET_FIELDS) {
        if (typeof copy[f] !== 'string' || copy[f] === '') continue;
        (keys[name] ??= {})[f] = copy[f] as string;
        copy[f] = null;
      }
      bare[name] = copy;
    }
    return { ...t, params: { ...t.params, meta_profile_llms: bare } };
  });
  return { stored, keys };
}

/** The inline LLMs of the stored request's routing tool with their keys put back; none: undefined. */
export function routeLlms(tools: readonly ToolSpec[] | undefined, keys: Readonly<RouteLlmKeys>): Record<string, MetaProfileLlm> | undefined {
  const llms = tools?.find(isRouteTool)?.params?.['meta_profile_llms'];
  if (!isMap(llms) || Object.keys(llms).length === 0) return undefined;
  return Object.fromEntries(Object.entries(llms).map(([name, llm]) => [name, { ...(llm as MetaProfileLlm), ...keys[name] }]));
}

/** The tools as ConversationInfo shows them: a set secret field of an inline LLM reads as the mask. */
export function maskedRouteTools<T extends ToolSpec>(tools: T[] | undefined, keys: Readonly<RouteLlmKeys>): T[] | undefined {
  if (!tools || Object.keys(keys).length === 0) return tools;
  return tools.map((t) => {
    const llms = t.params?.['meta_profile_llms'];
    if (!isRouteTool(t) || !isMap(llms)) return t;
    const shown = Object.fromEntries(Object.entries(llms).map(([name, llm]) => [name, isMap(llm) ? { ...llm, ...Object.fromEntries(Object.keys(keys[name] ?? {}).map((f) => [f, MASK])) } : llm]));
    return { ...t, params: { ...t.params, meta_profile_llms: shown } };
  });
}
