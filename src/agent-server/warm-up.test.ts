// The warm-up of a warm-pool member: every call a claim makes goes through a scratch agent server
// in this process, and nothing of it stays behind in the member's data directory.
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgent } from '../agent/agent.ts';
import { createLogger } from '../util/log.ts';
import { warmUp } from './warm-up.ts';

describe('warmUp', () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

  it("runs the claim's calls (listing, project skills, start, hand-over), each accepted, and leaves no scratch data", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'warm-up-'));
    dirs.push(dataDir);
    // warmUp throws when a call is refused (a wrong body would answer 422 and leave its route cold).
    await warmUp({ dataDir, createAgent, llmDefaults: { model: 'openai/warm-up', baseUrl: 'http://127.0.0.1:9/v1' }, log: createLogger('warm-up-test', 'silent') });
    expect(existsSync(join(dataDir, '.warm-up'))).toBe(false);
    expect(readdirSync(dataDir)).toEqual([]);
  });
});
