// The committed catalog is what hack/gen-llm-catalog.py makes of the installed OpenHands release, and
// modelsOf filters it as OpenHands' GET /api/llm/models does (asked of OpenHands' own function for a
// few providers). Needs the OpenHands virtualenv (hack/openhands-server.sh, which make test runs):
// skips without it unless the cluster suites are required.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { requiredForTests } from '../../testing/required/required.ts';
import { catalog, modelsOf } from './catalog.ts';

const VENV = join(process.env['AGENTYARD_CACHE'] ?? join(homedir(), '.cache/agentyard'), 'venv', 'openhands-agent-server-1.58.2');
const python = requiredForTests(existsSync(join(VENV, 'bin/python')) ? join(VENV, 'bin/python') : undefined, `the OpenHands virtualenv (${VENV})`, 'run hack/openhands-server.sh (make test does)');
const root = fileURLToPath(new URL('../../../', import.meta.url));
const env = { ...process.env, LITELLM_LOCAL_MODEL_COST_MAP: 'True', OPENHANDS_SUPPRESS_BANNER: '1' };
const PROVIDERS = ['openai', 'openrouter', 'anthropic', 'deepseek', 'gemini', 'mistral', 'no-such-provider'];

/** One Python process (its imports take seconds): the generator's output, and list_models for PROVIDERS. */
function askOpenHands(): { generated: string; models: Record<string, string[]> } {
  const script = `
import asyncio, contextlib, io, json, runpy, sys
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    runpy.run_path(sys.argv[1], run_name="__main__")
    from openhands.agent_server.llm_router import list_models, list_providers
out = {p: asyncio.run(list_models(provider=p)).models for p in json.loads(sys.argv[2])}
out["*"] = asyncio.run(list_models(provider=None)).models
out["providers"] = asyncio.run(list_providers()).providers
print(json.dumps({"generated": buf.getvalue(), "models": out}))`;
  const text = execFileSync(python!, ['-c', script, join(root, 'hack/gen-llm-catalog.py'), JSON.stringify(PROVIDERS)], { env, encoding: 'utf8', maxBuffer: 64 << 20 });
  return JSON.parse(text.trim().split('\n').pop()!) as { generated: string; models: Record<string, string[]> };
}

describe.skipIf(!python)('LLM catalog', () => {
  it("is what the generator makes of the installed OpenHands release, and is filtered by provider as OpenHands' list_models does", () => {
    const theirs = askOpenHands();
    const committed = readFileSync(join(root, 'src/agent-server/llm/catalog.gen.json'), 'utf8');
    // The marker names the releases: a virtualenv built before hack/openhands-server.sh pinned litellm may hold another one.
    const marker = (text: string) => /"x-generated": "([^"]*)"/.exec(text)?.[1];
    expect(marker(theirs.generated), `the virtualenv differs from the catalog's source: rebuild it (rm -rf ${VENV}; hack/openhands-server.sh)`).toBe(marker(committed));
    expect(theirs.generated === committed, 'src/agent-server/llm/catalog.gen.json is stale: regenerate it with hack/gen-llm-catalog.py').toBe(true);
    for (const p of PROVIDERS) expect(modelsOf(p), p).toEqual(theirs.models[p]);
    expect(modelsOf(undefined)).toEqual(theirs.models['*']);
    expect(catalog().providers).toEqual(theirs.models['providers']);
    expect(modelsOf('openai').length).toBeGreaterThan(0);
  }, 90_000);
});
