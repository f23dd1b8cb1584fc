import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONTROLLER_MEMORY_ENV } from './memory-env.ts';

const script = join(import.meta.dirname, '..', '..', 'bin', 'agentyard');
const deployment = join(import.meta.dirname, '..', '..', 'charts', 'agentyard', 'templates', 'controller-deployment.yaml');

describe('controller memory settings', () => {
  it('bin/agentyard sets them for `controller`', () => {
    const text = readFileSync(script, 'utf8');
    const block = [...text.matchAll(/^if (.*); then\n((?:  export .*\n)+)fi$/gm)].find((m) => m[1]!.includes('[ "$1" = controller ]'));
    expect(block).toBeDefined();
    for (const [name, value] of Object.entries(CONTROLLER_MEMORY_ENV)) expect(block?.[2]).toContain(`export ${name}="\${${name}:-${value}}"`);
  });

  it("the chart's controller Deployment sets them (its image runs node directly, not bin/agentyard)", () => {
    const text = readFileSync(deployment, 'utf8');
    for (const [name, value] of Object.entries(CONTROLLER_MEMORY_ENV)) expect(text).toContain(`- {name: ${name}, value: "${value}"}`);
  });
});
