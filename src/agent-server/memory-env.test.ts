import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AGENT_SERVER_MEMORY_ENV } from './memory-env.ts';

const memoryEnvModule = join(import.meta.dirname, 'memory-env.ts');

const script = join(import.meta.dirname, '..', '..', 'bin', 'agentyard');

describe('agent server memory settings', () => {
  it('bin/agentyard sets the same defaults for `agent-server` (the sandbox image runs it)', () => {
    const text = readFileSync(script, 'utf8');
    for (const [name, value] of Object.entries(AGENT_SERVER_MEMORY_ENV)) expect(text).toContain(`export ${name}="\${${name}:-${value}}"`);
  });

  it('the settings take effect: under a high allocation rate the young generation stays small', () => {
    // Short-lived garbage makes V8 grow new space to its cap: 128 MiB by default, 4 MiB with a 2 MiB
    // semi-space (V8 may hold a page or two more for a moment: 6.25 MiB was read once, in run ci35,
    // so the bound is 8 MiB, still far under what the default reaches).
    const churn = "let keep = []; for (let i = 0; i < 3e6; i++) { keep.push({ a: i, b: 'x' + i }); if (keep.length > 2e5) keep = []; }" +
      "console.log(require('v8').getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size)";
    const newSpace = (env: NodeJS.ProcessEnv) => Number(String(execFileSync(process.execPath, ['-e', churn], { env })));
    const { NODE_OPTIONS: _, ...without } = process.env;
    expect(newSpace({ ...without, ...AGENT_SERVER_MEMORY_ENV })).toBeLessThanOrEqual(8 * 1024 * 1024);
    expect(newSpace(without)).toBeGreaterThan(16 * 1024 * 1024);
  });

  it('the agent server turns Maglev off for itself (Node refuses the flag in NODE_OPTIONS)', () => {
    // %IsMaglevEnabled reads V8's flag as the compiler does; before and after applying ours.
    const probe = `import { applyAgentServerV8Flags } from ${JSON.stringify(memoryEnvModule)}; const before = %IsMaglevEnabled(); applyAgentServerV8Flags(); console.log(JSON.stringify([before, %IsMaglevEnabled()]));`;
    const out = String(execFileSync(process.execPath, ['--allow-natives-syntax', '--input-type=module', '-e', probe]));
    expect(JSON.parse(out)).toEqual([true, false]);
  });
});
