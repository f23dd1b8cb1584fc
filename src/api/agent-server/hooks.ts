// Hook configuration (OpenHands `HookConfig`, snake_case keys) and `POST /api/hooks`.
// Files and start requests may also use Claude-Code style PascalCase keys, optionally wrapped in
// {"hooks": {...}}; src/agent/hooks/config.ts normalizes those to this shape before checking.
import Type, { type Static } from 'typebox';
import { LiteralUnion, Nullable, STRICT } from '../events/common.ts';

export const HOOK_TYPES = ['command', 'prompt', 'agent'] as const;

/** One hook. Only `command` hooks run in agentyard; prompt and agent hooks fail open (allow) with an error recorded. */
export const HookDefinition = Type.Object(
  {
    type: Type.Optional(LiteralUnion(HOOK_TYPES, { default: 'command' })),
    name: Nullable(Type.String()),
    /** A shell command, run by /bin/sh in the workspace. Empty for prompt and agent hooks. */
    command: Type.String({ default: '' }),
    prompt: Nullable(Type.String()),
    system_prompt: Nullable(Type.String()),
    tools: Type.Optional(Type.Array(Type.String(), { default: [] })),
    /** Seconds. */
    timeout: Type.Optional(Type.Integer({ minimum: 1, default: 60 })),
    max_iterations: Type.Optional(Type.Integer({ minimum: 1, default: 3 })),
    /** Fire and forget: started, not awaited, never blocks. */
    async: Type.Optional(Type.Boolean({ default: false })),
  },
  STRICT,
);
export type HookDefinition = Static<typeof HookDefinition>;

/** `*` (or empty) matches everything; `/re/` or a matcher with regex metacharacters is a full-match regex; else the exact tool name. */
export const HookMatcher = Type.Object(
  {
    matcher: Type.Optional(Type.String({ default: '*' })),
    hooks: Type.Optional(Type.Array(HookDefinition, { default: [] })),
  },
  STRICT,
);
export type HookMatcher = Static<typeof HookMatcher>;

export const HOOK_EVENT_FIELDS = ['pre_tool_use', 'post_tool_use', 'user_prompt_submit', 'session_start', 'session_end', 'stop'] as const;
export type HookEventField = (typeof HOOK_EVENT_FIELDS)[number];

const matchers = () => Type.Optional(Type.Array(HookMatcher, { default: [] }));

export const HookConfig = Type.Object(
  {
    pre_tool_use: matchers(),
    post_tool_use: matchers(),
    user_prompt_submit: matchers(),
    session_start: matchers(),
    session_end: matchers(),
    stop: matchers(),
  },
  STRICT,
);
export type HookConfig = Static<typeof HookConfig>;

export const HooksRequest = Type.Object({
  /** The workspace (project) directory; only `{project_dir}/.openhands/hooks.json` is read. */
  project_dir: Nullable(Type.String()),
});
export type HooksRequest = Static<typeof HooksRequest>;

export const HooksResponse = Type.Object(
  {
    /** Null when the file is missing or configures no hook. */
    hook_config: Type.Union([HookConfig, Type.Null()]),
  },
  STRICT,
);
export type HooksResponse = Static<typeof HooksResponse>;
