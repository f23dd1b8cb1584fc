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
import type { Logger } from '../util/log.ts';
import { startAgentServer } from './server.ts';

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
    const headers = { 'x-session-api-key': key, 'content-type': 'application/json' };
    const body = { workspace: { kind: 'LocalWorkspace', working_dir: '.' }, agent: { kind: 'Agent', llm: { model: o.llmDefaults?.model ?? 'warm-up' } }, tags: { title: 'warm-up' } };
    const created = (await (await fetch(`${scratch.url}/api/conversations`, { method: 'POST', headers, body: JSON.stringify(body) })).json()) as { id?: string };
    if (created.id) await (await fetch(`${scratch.url}/api/conversations/${created.id}`, { headers })).text();
  } finally {
    await scratch.close();
    rmSync(dir, { recursive: true, force: true });
  }
  o.log.info({ ms: Date.now() - started }, 'warmed up for a first conversation');
}
