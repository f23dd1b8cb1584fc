// The security analyzers' settings (OpenHands 1.58 `security/`). Apart from policy.ts because the
// ToolShield analyzer embeds an LLM (agent.ts), which would make an import cycle there.
import Type, { type Static } from 'typebox';
import { Nullable, STRICT } from '../events/common.ts';
import { LLM } from './agent.ts';

/**
 * The security analyzers of OpenHands 1.58 (`security/`), by kind, with their own settings: what
 * gives each action the risk a ConfirmRisky policy compares (src/agent/confirmation/analyzers/).
 * Field names, defaults and bounds are 1.58's pydantic models'.
 */
export const SECURITY_ANALYZER_KINDS = [
  'LLMSecurityAnalyzer',
  'PatternSecurityAnalyzer',
  'PolicyRailSecurityAnalyzer',
  'EnsembleSecurityAnalyzer',
  'GraySwanAnalyzer',
  'ToolShieldLLMSecurityAnalyzer',
] as const;

/** The risk the model predicts with each call (`security_risk` argument). */
export const LLMSecurityAnalyzer = Type.Object({ kind: Type.Literal('LLMSecurityAnalyzer') }, STRICT);

/** One signature: [regex (Python syntax, compiled case-insensitive), description, detector id]. */
const PatternRow = Type.Tuple([Type.String(), Type.String(), Type.String()]);
/** Regex signatures; omitted lists take 1.58's default tables (src/agent/confirmation/analyzers/pattern.ts). */
export const PatternSecurityAnalyzer = Type.Object(
  {
    kind: Type.Literal('PatternSecurityAnalyzer'),
    high_patterns: Type.Optional(Type.Array(PatternRow)),
    medium_patterns: Type.Optional(Type.Array(PatternRow)),
    injection_high_patterns: Type.Optional(Type.Array(PatternRow)),
    injection_medium_patterns: Type.Optional(Type.Array(PatternRow)),
  },
  STRICT,
);
export type PatternSecurityAnalyzer = Static<typeof PatternSecurityAnalyzer>;

/** Composed shell rules (fetch-to-exec, raw-disk-op, catastrophic-delete); no settings. */
export const PolicyRailSecurityAnalyzer = Type.Object({ kind: Type.Literal('PolicyRailSecurityAnalyzer') }, STRICT);

/**
 * A hosted guard model (GraySwan Cygnal). `api_key` is a secret: never in a response, an event or a
 * log (masked like an LLM key). As in 1.58, GRAYSWAN_API_KEY / GRAYSWAN_POLICY_ID in the agent
 * server's environment win over the fields; `api_url` is 1.58's own field (no env var).
 */
export const GraySwanAnalyzer = Type.Object(
  {
    kind: Type.Literal('GraySwanAnalyzer'),
    history_limit: Type.Optional(Type.Integer({ default: 20 })),
    max_message_chars: Type.Optional(Type.Integer({ default: 30000 })),
    timeout: Type.Optional(Type.Number({ default: 30, exclusiveMinimum: 0 })),
    low_threshold: Type.Optional(Type.Number({ default: 0.3 })),
    medium_threshold: Type.Optional(Type.Number({ default: 0.7 })),
    api_url: Type.Optional(Type.String({ default: 'https://api.grayswan.ai/cygnal/monitor' })),
    api_key: Nullable(Type.String()),
    policy_id: Nullable(Type.String()),
  },
  STRICT,
);
export type GraySwanAnalyzer = Static<typeof GraySwanAnalyzer>;

/** A separate guardrail model judges each action with the recent ones (`llm.api_key` is a secret). */
export const ToolShieldLLMSecurityAnalyzer = Type.Object(
  {
    kind: Type.Literal('ToolShieldLLMSecurityAnalyzer'),
    llm: LLM,
    history_window: Type.Optional(Type.Integer({ default: 20, minimum: 1 })),
    safety_experiences: Type.Optional(Type.String({ default: '' })),
  },
  STRICT,
);
export type ToolShieldLLMSecurityAnalyzer = Static<typeof ToolShieldLLMSecurityAnalyzer>;

/** What an ensemble may combine: every kind but another ensemble. */
export const EnsembleMember = Type.Union([LLMSecurityAnalyzer, PatternSecurityAnalyzer, PolicyRailSecurityAnalyzer, GraySwanAnalyzer, ToolShieldLLMSecurityAnalyzer]);

/**
 * The worst concrete risk of its children. Decision: a child may be any kind but another ensemble
 * (1.58 allows nesting; max over max is the same max, and a bounded schema keeps 422s precise).
 */
export const EnsembleSecurityAnalyzer = Type.Object(
  {
    kind: Type.Literal('EnsembleSecurityAnalyzer'),
    analyzers: Type.Array(EnsembleMember, { minItems: 1 }),
    propagate_unknown: Type.Optional(Type.Boolean({ default: false })),
  },
  STRICT,
);
export type EnsembleSecurityAnalyzer = Static<typeof EnsembleSecurityAnalyzer>;

export const SecurityAnalyzer = Type.Union([
  LLMSecurityAnalyzer,
  PatternSecurityAnalyzer,
  PolicyRailSecurityAnalyzer,
  EnsembleSecurityAnalyzer,
  GraySwanAnalyzer,
  ToolShieldLLMSecurityAnalyzer,
]);
export type SecurityAnalyzer = Static<typeof SecurityAnalyzer>;
export type LeafSecurityAnalyzer = EnsembleSecurityAnalyzer['analyzers'][number];

/** `POST /api/conversations/{id}/security_analyzer`; null removes the analyzer. */
export const SetSecurityAnalyzerRequest = Type.Object({ security_analyzer: Type.Union([SecurityAnalyzer, Type.Null()]) });
export type SetSecurityAnalyzerRequest = Static<typeof SetSecurityAnalyzerRequest>;
