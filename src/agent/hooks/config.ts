// Hook configuration: reading `.openhands/hooks.json`, accepting the shapes OpenHands accepts
// (snake_case keys, Claude-Code PascalCase keys, an optional {"hooks": {...}} wrapper), checking
// it strictly, merging several sources and picking the hooks for one event.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { HOOK_EVENT_FIELDS, HookConfig, type HookDefinition, type HookEventField } from '../../api/agent-server/hooks.ts';
import { Invalid, type ValidationIssue } from '../../api/errors.ts';
import type { HookEventType } from '../../api/events/index.ts';
import { parseValue } from '../../api/events/validate.ts';

export { HookConfig, type HookDefinition, type HookMatcher } from '../../api/agent-server/hooks.ts';

/** Where a project keeps its hooks, relative to the workspace. */
export const PROJECT_HOOKS_FILE = join('.openhands', 'hooks.json');

const FIELD_OF: Record<HookEventType, HookEventField> = {
  PreToolUse: 'pre_tool_use',
  PostToolUse: 'post_tool_use',
  UserPromptSubmit: 'user_prompt_submit',
  SessionStart: 'session_start',
  SessionEnd: 'session_end',
  Stop: 'stop',
};

const pascalToSnake = (key: string) => key.replace(/(?<!^)(?=[A-Z])/g, '_').toLowerCase();

function issue(where: string, loc: (string | number)[], msg: string, type = 'value_error'): ValidationIssue {
  const field = loc.join('.');
  return { loc: [where, ...loc], msg: `${where}${field ? `: ${field}` : ''}: ${msg}`, type };
}

/**
 * Checks a hook configuration as a file or a start request holds it. `where` names the source
 * (a file path, `hook_config`) in every issue. Throws Invalid; an empty input gives an empty config.
 */
export function parseHookConfig(raw: unknown, where: string): HookConfig {
  if (raw === null || raw === undefined) return emptyHookConfig();
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new Invalid([issue(where, [], 'a hook configuration must be a JSON object')]);
  let data = raw as Record<string, unknown>;
  // The legacy wrapper {"hooks": {...}}; other top-level keys beside it are ignored, as in OpenHands.
  if ('hooks' in data) {
    const inner = data['hooks'];
    if (typeof inner !== 'object' || inner === null || Array.isArray(inner)) throw new Invalid([issue(where, ['hooks'], 'must be an object of event types')]);
    data = inner as Record<string, unknown>;
  }
  const normalized: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) {
    const snake = pascalToSnake(key);
    if (!(HOOK_EVENT_FIELDS as readonly string[]).includes(snake)) {
      throw new Invalid([issue(where, [key], `unknown hook event type; valid types: ${HOOK_EVENT_FIELDS.join(', ')} (or PascalCase: ${Object.keys(FIELD_OF).join(', ')})`, 'extra_forbidden')]);
    }
    if (snake in normalized) throw new Invalid([issue(where, [key], `duplicate hook event: both '${key}' and its snake_case equivalent '${snake}' were given`)]);
    normalized[snake] = value;
  }
  let config: HookConfig;
  try {
    config = parseValue(HookConfig, normalized);
  } catch (err) {
    if (!(err instanceof Invalid)) throw err;
    throw new Invalid(err.detail.map((i) => issue(where, i.loc, i.msg, i.type)));
  }
  // What the schema cannot say: each hook type needs its own field and refuses the others'.
  const problems: ValidationIssue[] = [];
  for (const field of HOOK_EVENT_FIELDS) {
    config[field]?.forEach((m, mi) =>
      m.hooks?.forEach((h, hi) => {
        const loc = [field, mi, 'hooks', hi];
        const type = h.type ?? 'command';
        if (type === 'command' && !h.command) problems.push(issue(where, [...loc, 'command'], "'command' is required when type is 'command'"));
        if (type === 'prompt' && !h.prompt) problems.push(issue(where, [...loc, 'prompt'], "'prompt' is required when type is 'prompt'"));
        if (type !== 'command' && h.command) problems.push(issue(where, [...loc, 'command'], `'command' must not be set when type is '${type}'`));
        if (type !== 'command' && h.async) problems.push(issue(where, [...loc, 'async'], `'async' is not supported for ${type} hooks`));
      }),
    );
  }
  if (problems.length) throw new Invalid(problems);
  return config;
}

export function emptyHookConfig(): HookConfig {
  return { pre_tool_use: [], post_tool_use: [], user_prompt_submit: [], session_start: [], session_end: [], stop: [] };
}

export function isEmptyHookConfig(config: HookConfig): boolean {
  return HOOK_EVENT_FIELDS.every((f) => !config[f]?.length);
}

/**
 * Reads and checks one hooks.json. Null when the file does not exist; Invalid (naming the file and
 * the field) when it is not JSON or not a hook configuration.
 */
export async function loadHookConfigFile(path: string): Promise<HookConfig | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return null;
    throw err;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text) as unknown;
  } catch (err) {
    throw new Invalid([issue(path, [], `not valid JSON (${(err as Error).message})`, 'json_invalid')]);
  }
  return parseHookConfig(raw, path);
}

/** Concatenates the matchers of every config per event type, in argument order (OpenHands `HookConfig.merge`). */
export function mergeHookConfigs(...configs: (HookConfig | null | undefined)[]): HookConfig {
  const merged = emptyHookConfig();
  for (const c of configs) if (c) for (const f of HOOK_EVENT_FIELDS) merged[f]!.push(...(c[f] ?? []));
  return merged;
}

const REGEX_META = /[|.*+?[\]()^$\\]/;

function fullMatch(pattern: string, name: string): boolean | undefined {
  try {
    return new RegExp(`^(?:${pattern})$`).test(name);
  } catch {
    return undefined;
  }
}

/** OpenHands `HookMatcher.matches`: `*`/empty always; otherwise needs a tool name. */
export function matcherMatches(matcher: string | undefined, toolName: string | null): boolean {
  const m = matcher ?? '*';
  if (m === '*' || m === '') return true;
  if (toolName === null) return false;
  if (m.length > 2 && m.startsWith('/') && m.endsWith('/')) return fullMatch(m.slice(1, -1), toolName) ?? false;
  if (REGEX_META.test(m)) {
    const r = fullMatch(m, toolName);
    if (r !== undefined) return r;
  }
  return m === toolName;
}

/** The hooks to run for one event, in configuration order. */
export function hooksFor(config: HookConfig, event: HookEventType, toolName: string | null = null): HookDefinition[] {
  return (config[FIELD_OF[event]] ?? []).filter((m) => matcherMatches(m.matcher, toolName)).flatMap((m) => m.hooks ?? []);
}

/** A start request's `hook_config`, checked at POST /api/conversations so a bad one is a 422 there, not a failed run later. */
export function checkRequestHookConfig(raw: unknown): void {
  try {
    parseHookConfig(raw, 'hook_config');
  } catch (err) {
    if (!(err instanceof Invalid)) throw err;
    throw new Invalid(err.detail.map((i) => ({ ...i, loc: ['body', ...i.loc] })));
  }
}
