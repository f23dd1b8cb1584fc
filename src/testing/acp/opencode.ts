// A real ACP agent for tests: opencode (installed by hack/acp-agent.sh, cached outside the clone),
// configured through OPENCODE_CONFIG_CONTENT (a conversation secret, so it reaches the ACP server as
// an environment variable) with two OpenAI-compatible providers: `scripted`, the agent's model (a
// scripted model server), and `titles`, where opencode sends its session-title requests (another
// scripted server, left empty: a failed title is harmless, and the agent's script stays exact).
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { requiredForTests } from '../required/required.ts';

export const OPENCODE_VERSION = '1.18.23';

/** The installed opencode binary, or undefined (the suite skips, with a message, unless the cluster suites are required). */
export function opencodeBinary(): string | undefined {
  const cache = process.env['AGENTYARD_CACHE'] ?? join(homedir(), '.cache/agentyard');
  const bin = join(cache, 'acp', `opencode-${OPENCODE_VERSION}`, 'node_modules', '.bin', 'opencode');
  const found = requiredForTests(existsSync(bin) ? bin : undefined, `opencode ${OPENCODE_VERSION} (${bin})`, 'run hack/acp-agent.sh (make test does)');
  if (!found) console.warn(`ACP suites skipped: opencode ${OPENCODE_VERSION} is not installed (${bin}); run hack/acp-agent.sh`);
  return found;
}

/** opencode's configuration: models `scripted/m1` and `scripted/m2` at `modelUrl`, titles at `titleUrl`. */
export function opencodeConfig(modelUrl: string, titleUrl: string, apiKey = 'sk-scripted'): string {
  const provider = (name: string, url: string, models: string[]) => ({
    npm: '@ai-sdk/openai-compatible',
    name,
    options: { baseURL: url, apiKey },
    models: Object.fromEntries(models.map((m) => [m, { name: m.toUpperCase() }])),
  });
  return JSON.stringify({
    provider: { scripted: provider('Scripted', modelUrl, ['m1', 'm2']), titles: provider('Titles', titleUrl, ['t']) },
    model: 'scripted/m1',
    small_model: 'titles/t',
    autoupdate: false,
    share: 'disabled',
  });
}
