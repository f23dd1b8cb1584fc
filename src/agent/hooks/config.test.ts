// Hook configuration: the shapes OpenHands accepts, clear errors naming file and field, merging, matching.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Invalid } from '../../api/errors.ts';
import { hooksFor, loadHookConfigFile, matcherMatches, mergeHookConfigs, parseHookConfig, resolveHooks } from './index.ts';
import type { AgentHost } from '../types.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'hooks-cfg-'));
  dirs.push(d);
  return d;
}

function issues(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof Invalid) return err.detail.map((i) => i.msg);
    throw err;
  }
  throw new Error('expected Invalid');
}

describe('parseHookConfig', () => {
  it('accepts snake_case, PascalCase and the {"hooks": {...}} wrapper, filling OpenHands defaults', () => {
    const snake = parseHookConfig({ stop: [{ matcher: '*', hooks: [{ type: 'command', command: 'a.sh', timeout: 600 }] }] }, 'x');
    expect(snake.stop![0]!.hooks![0]).toMatchObject({ type: 'command', command: 'a.sh', timeout: 600, async: false, tools: [] });
    const pascal = parseHookConfig({ hooks: { PreToolUse: [{ matcher: 'terminal', hooks: [{ command: 'b.sh' }] }] } }, 'x');
    expect(pascal.pre_tool_use![0]).toMatchObject({ matcher: 'terminal', hooks: [{ command: 'b.sh', timeout: 60, type: 'command' }] });
    expect(pascal.stop).toEqual([]);
  });

  it('names the source and the field in every error', () => {
    expect(issues(() => parseHookConfig({ PreToolUze: [] }, '/w/.openhands/hooks.json'))[0]).toMatch(/^\/w\/\.openhands\/hooks\.json: PreToolUze: unknown hook event type/);
    expect(issues(() => parseHookConfig({ pre_tool_use: [], PreToolUse: [] }, 'f'))[0]).toMatch(/duplicate hook event/);
    expect(issues(() => parseHookConfig({ stop: [{ hooks: [{ type: 'command' }] }] }, 'f'))[0]).toBe("f: stop.0.hooks.0.command: 'command' is required when type is 'command'");
    expect(issues(() => parseHookConfig({ stop: [{ hooks: [{ command: 'x', timeout: 'soon' }] }] }, 'f'))[0]).toMatch(/^f: .*timeout/);
    expect(issues(() => parseHookConfig({ stop: [{ hooks: [{ command: 'x', colour: 1 }] }] }, 'hook_config'))[0]).toMatch(/^hook_config: stop\.0\.hooks\.0/);
  });

  it('loadHookConfigFile: null when missing, an error naming the file when not JSON', async () => {
    const d = tmp();
    expect(await loadHookConfigFile(join(d, 'none.json'))).toBeNull();
    writeFileSync(join(d, 'bad.json'), '{"stop": [');
    await expect(loadHookConfigFile(join(d, 'bad.json'))).rejects.toMatchObject({ detail: [{ msg: expect.stringContaining(`${join(d, 'bad.json')}: not valid JSON`) }] });
  });
});

describe('matching and merging', () => {
  it('matches *, exact names, /regex/ and bare regexes as full matches; no tool name only for *', () => {
    expect(matcherMatches('*', null)).toBe(true);
    expect(matcherMatches('terminal', 'terminal')).toBe(true);
    expect(matcherMatches('terminal', 'terminal2')).toBe(false);
    expect(matcherMatches('terminal|file_editor', 'file_editor')).toBe(true);
    expect(matcherMatches('/term.*/', 'terminal')).toBe(true);
    expect(matcherMatches('term', 'terminal')).toBe(false);
    expect(matcherMatches('terminal', null)).toBe(false);
  });

  it('merges matchers in order and picks the hooks of one event', () => {
    const a = parseHookConfig({ pre_tool_use: [{ matcher: 'terminal', hooks: [{ command: 'a' }] }] }, 'a');
    const b = parseHookConfig({ PreToolUse: [{ matcher: '*', hooks: [{ command: 'b' }] }] }, 'b');
    const merged = mergeHookConfigs(a, null, b);
    expect(hooksFor(merged, 'PreToolUse', 'terminal').map((h) => h.command)).toEqual(['a', 'b']);
    expect(hooksFor(merged, 'PreToolUse', 'think').map((h) => h.command)).toEqual(['b']);
    expect(hooksFor(merged, 'Stop')).toEqual([]);
  });

  it('resolveHooks: project file, then hook_config, then extra; a matcher given twice runs once', async () => {
    const d = tmp();
    mkdirSync(join(d, '.openhands'));
    writeFileSync(join(d, '.openhands', 'hooks.json'), JSON.stringify({ stop: [{ matcher: '*', hooks: [{ command: 'p' }] }] }));
    const host = { workspaceDir: d, request: { hook_config: { Stop: [{ matcher: '*', hooks: [{ command: 'p' }] }, { hooks: [{ command: 'r' }] }] } } } as unknown as AgentHost;
    const extra = parseHookConfig({ stop: [{ hooks: [{ command: 'plugin' }] }] }, 'plugin');
    const config = await resolveHooks(host, [extra]);
    expect(hooksFor(config, 'Stop').map((h) => h.command)).toEqual(['p', 'r', 'plugin']);
  });
});
