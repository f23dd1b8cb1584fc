// Hooks (OpenHands / Claude Code compatible): the public face of src/agent/hooks.
//   HookConfig                         the OpenHands shape (snake_case event keys)
//   loadHookConfigFile(path)           one hooks.json, checked; null when missing
//   mergeHookConfigs(...configs)       matchers concatenated per event type
//   resolveHooks(host, extra?)         everything one conversation runs (the agent calls it once)
import { join } from 'node:path';
import { HOOK_EVENT_FIELDS } from '../../api/agent-server/hooks.ts';
import type { AgentHost } from '../types.ts';
import { loadHookConfigFile, mergeHookConfigs, parseHookConfig, PROJECT_HOOKS_FILE, type HookConfig } from './config.ts';

export { HookConfig, type HookDefinition, type HookMatcher } from '../../api/agent-server/hooks.ts';
export { checkRequestHookConfig, emptyHookConfig, hooksFor, isEmptyHookConfig, loadHookConfigFile, matcherMatches, mergeHookConfigs, parseHookConfig, PROJECT_HOOKS_FILE } from './config.ts';
export { HookRunner, STOP_FEEDBACK_PREFIX, type HookOutcome } from './runner.ts';
export { runCommandHook, type HookEventInput, type HookResult } from './executor.ts';

/** The project's hooks file of a workspace: `{projectDir}/.openhands/hooks.json`. */
export function loadProjectHooks(projectDir: string): Promise<HookConfig | null> {
  return loadHookConfigFile(join(projectDir, PROJECT_HOOKS_FILE));
}

/**
 * The hooks of one conversation: the workspace's `.openhands/hooks.json`, then the start request's
 * `hook_config`, then `extra` (plugins), in that order. A matcher given by two sources (a client
 * that already copied the project file into hook_config) runs once. Throws Invalid naming the
 * file or `hook_config` and the field when a source is not a valid hook configuration.
 */
export async function resolveHooks(host: AgentHost, extra: readonly (HookConfig | null | undefined)[] = []): Promise<HookConfig> {
  const project = await loadProjectHooks(host.workspaceDir);
  const requested = parseHookConfig(host.request.hook_config ?? null, 'hook_config');
  const merged = mergeHookConfigs(project, requested, ...extra);
  for (const field of HOOK_EVENT_FIELDS) {
    const seen = new Set<string>();
    merged[field] = merged[field]!.filter((m) => {
      const key = JSON.stringify(m);
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  }
  return merged;
}
