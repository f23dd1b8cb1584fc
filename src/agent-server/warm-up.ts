// Warm-up of a warm-pool agent server: a fresh process pays for its first conversation (lazy
// compilation of the request validators, the conversation and agent code, Koa's routes, SQLite
// statements; ~50-300 ms measured) when that conversation arrives, i.e. inside a user's start.
// A pool member runs one throwaway conversation through a private agent server in the same process
// (own port, own data directory, removed afterwards) before its real one listens: the code is then
// compiled and hot, and its own stores stay untouched, so it can still be handed over.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { CreateAgent, LlmConfig } from '../agent/types.ts';
import { HAND_OVER_PATH } from '../api/agent-server/hand-over.ts';
import type { Logger } from '../util/log.ts';
import { startAgentServer } from './server.ts';

/** Rounds of the claim's calls after the hand-over the warm-up makes (why: in warmUp). */
export const WARM_UP_ROUNDS = 4;

export async function warmUp(o: { dataDir: string; createAgent: CreateAgent; llmDefaults?: LlmConfig; log: Logger }): Promise<void> {
  const dir = join(o.dataDir, '.warm-up');
  const key = randomBytes(24).toString('base64url');
  const started = Date.now();
  const scratch = await startAgentServer({
    port: 0,
    workspaceDir: join(dir, 'workspace'),
    dataDir: join(dir, 'data'),
    sessionKeys: [key],
    createAgent: o.createAgent,
    ...(o.llmDefaults ? { llmDefaults: o.llmDefaults } : {}),
    log: o.log.child({ part: 'warm-up' }),
  });
  try {
    let headers = { 'x-session-api-key': key, 'content-type': 'application/json' };
    // A refused call would leave its route cold without anyone knowing: it fails the warm-up (logged).
    const call = async (method: string, path: string, body?: unknown, alsoOk?: number) => {
      const res = await fetch(`${scratch.url}${path}`, { method, headers, ...(body ? { body: JSON.stringify(body) } : {}) });
      const text = await res.text();
      if (!res.ok && res.status !== alsoOk) throw new Error(`warm-up: ${method} ${path.split('?')[0]} answered ${res.status}: ${text.slice(0, 300)}`);
      return text;
    };
    // The calls a claim makes, in its order (controller/conversation/reconciler.ts), so that no
    // route's first request is the user's: the hand-over, the `.openhands` listing of the
    // setup-script and Git-hook steps, the user's and project skills, the start and a read of it. The hand-over
    // once (an agent server with conversations refuses it), the others in rounds: with Maglev off
    // (memory-env.ts) V8 optimises a route's code only after repeats — on a fresh agent server the
    // second start took ~19 ms, the fifth ~7 (bench/RESULTS.md).
    const handedTo = randomBytes(24).toString('base64url');
    await call('POST', HAND_OVER_PATH, { session_key: handedTo, llm_api_key: 'warm-up', secret_key: randomBytes(24).toString('base64url') });
    headers = { ...headers, 'x-session-api-key': handedTo };
    for (let round = 0; round < WARM_UP_ROUNDS; round++) {
      await call('GET', `/api/agentyard/files?${new URLSearchParams({ path: './.openhands', limit: '1000' })}`, undefined, 404);
      await call('POST', '/api/skills', { load_public: false, load_user: true, load_project: true, load_org: false, project_dir: '.' });
      // The skill flags the controller sends (start-request.ts), so that the skill loading is warm too.
      const agent = { kind: 'Agent', llm: { model: o.llmDefaults?.model ?? 'warm-up', stream: true }, agent_context: { load_user_skills: true, load_project_skills: true } };
      const body = { workspace: { kind: 'LocalWorkspace', working_dir: '.' }, agent, tags: { title: 'warm-up' } };
      const created = JSON.parse(await call('POST', '/api/conversations', body)) as { id?: string };
      if (created.id) await call('GET', `/api/conversations/${created.id}`);
    }
  } finally {
    await scratch.close();
    rmSync(dir, { recursive: true, force: true });
  }
  o.log.info({ ms: Date.now() - started }, 'warmed up for a first conversation');
}
