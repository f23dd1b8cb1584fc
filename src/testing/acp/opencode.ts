// A real ACP agent for tests: opencode (installed by hack/acp-agent.sh, cached outside the clone),
// configured through OPENCODE_CONFIG_CONTENT (a conversation secret, so it reaches the ACP server as
// an environment variable) with two OpenAI-compatible providers: `scripted`, the agent's model (a
// scripted model server), and `titles`, where opencode sends its session-title requests (another
// scripted server, left empty: a failed title is harmless, and the agent's script stays exact).
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { requiredForTests } from '../required/required.ts';

export const OPENCODE_VERSION = '1.18.23';

/** The installed opencode binary, or undefined (the suite skips, with a message, unless the cluster suites are required). */
export function opencodeBinary(): string | undefined {
  const bin = join(opencodeDir(), 'node_modules', '.bin', 'opencode');
  const found = requiredForTests(existsSync(bin) ? bin : undefined, `opencode ${OPENCODE_VERSION} (${bin})`, 'run hack/acp-agent.sh (make test does)');
  if (!found) console.warn(`ACP suites skipped: opencode ${OPENCODE_VERSION} is not installed (${bin}); run hack/acp-agent.sh`);
  return found;
}

/** Where hack/acp-agent.sh installs opencode, in the cache outside the clone. */
function opencodeDir(): string {
  return join(process.env['AGENTYARD_CACHE'] ?? join(homedir(), '.cache/agentyard'), 'acp', `opencode-${OPENCODE_VERSION}`);
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

/**
 * An XDG_CONFIG_HOME for opencode (given to it as a conversation secret, beside its configuration):
 * its `opencode` folder holds a package.json, a lock and a node_modules folder that already name
 * @opencode-ai/plugin, so opencode skips the npm install it otherwise runs in its global config
 * folder at every start (the folder is under HOME, fresh for each conversation with
 * acp_isolate_data_dir). That install fetches about 30 MB from the npm registry and writes 3,800
 * files: seconds of CPU per ACP server, the network from a test, and it serves only user plugins,
 * which no test has. Made once beside the binary (a rename, so no start sees it half written).
 */
export function opencodeConfigHome(): string {
  const home = join(opencodeDir(), 'config-home');
  if (existsSync(join(home, 'opencode', 'node_modules'))) return home;
  mkdirSync(dirname(home), { recursive: true });
  const tmp = mkdtempSync(`${home}.tmp-`);
  const deps = { '@opencode-ai/plugin': OPENCODE_VERSION };
  mkdirSync(join(tmp, 'opencode', 'node_modules'), { recursive: true });
  writeFileSync(join(tmp, 'opencode', 'package.json'), JSON.stringify({ dependencies: deps }));
  writeFileSync(join(tmp, 'opencode', 'package-lock.json'), JSON.stringify({ lockfileVersion: 3, packages: { '': { dependencies: deps } } }));
  try {
    renameSync(tmp, home);
  } catch {
    rmSync(tmp, { recursive: true, force: true }); // another process made it first
  }
  return home;
}
