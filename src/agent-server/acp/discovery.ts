// POST /api/acp/models: start the ACP server in a throwaway session (an empty directory of its own)
// and report its models, as 1.58 does. A failure to start is an answer (`error`), not an HTTP error.
// Answers are kept 5 minutes per launch and credentials (a hash of them: no value is kept as a key),
// at most two discoveries run at once, and a second identical request waits for the first.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { AcpModelDiscovery, Agent } from '../../api/agent-server/index.ts';
import { acpLaunch } from './agent.ts';
import { AcpSession, AcpStartError } from './session.ts';

const CACHE_TTL_MS = 5 * 60_000;
const MAX_CONCURRENT = 2;

export class AcpModelDiscoveryService {
  readonly #workRoot: string;
  readonly #results = new Map<string, { until: number; result: AcpModelDiscovery }>();
  readonly #inFlight = new Map<string, Promise<AcpModelDiscovery>>();
  #running = 0;
  readonly #queue: (() => void)[] = [];
  readonly #now: () => number;

  /** `workRoot`: where the throwaway session directories are made (removed after each discovery). */
  constructor(workRoot: string, now: () => number = Date.now) {
    this.#workRoot = workRoot;
    this.#now = now;
  }

  async discover(agent: Agent, secrets: Record<string, string>, refresh: boolean): Promise<AcpModelDiscovery> {
    const key = cacheKey(agent, secrets);
    const cached = this.#results.get(key);
    if (!refresh && cached && cached.until > this.#now()) return cached.result;
    let pending = this.#inFlight.get(key);
    if (!pending) {
      pending = this.#slot(() => this.#run(agent, secrets)).then((result) => {
        if (result.error == null) this.#results.set(key, { until: this.#now() + CACHE_TTL_MS, result });
        return result;
      });
      pending.finally(() => this.#inFlight.delete(key)).catch(() => undefined);
      this.#inFlight.set(key, pending);
    }
    return pending;
  }

  async #slot<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#running >= MAX_CONCURRENT) await new Promise<void>((resolve) => this.#queue.push(resolve));
    this.#running++;
    try {
      return await fn();
    } finally {
      this.#running--;
      this.#queue.shift()?.();
    }
  }

  async #run(agent: Agent, secrets: Record<string, string>): Promise<AcpModelDiscovery> {
    mkdirSync(this.#workRoot, { recursive: true });
    const probe = mkdtempSync(join(this.#workRoot, '.acp-model-discovery-'));
    const workspace = join(probe, 'workspace');
    mkdirSync(workspace);
    let session: AcpSession | undefined;
    try {
      // The model asked for is not applied: the answer is the server's own default.
      const launch = { ...acpLaunch(agent, workspace, secrets, join(probe, 'acp')), model: null };
      session = await AcpSession.start(launch, () => {});
      return {
        agent_name: session.agentName || null,
        agent_version: session.agentVersion || null,
        current_model_id: session.models.currentModelId,
        available_models: session.models.availableModels ?? [],
        supports_runtime_model_switch: session.supportsModelSwitch,
        error: null,
      };
    } catch (e) {
      if (!(e instanceof AcpStartError)) throw e;
      return { agent_name: null, agent_version: null, current_model_id: null, available_models: [], supports_runtime_model_switch: false, error: { code: e.code, detail: e.message } };
    } finally {
      await session?.close();
      rmSync(probe, { recursive: true, force: true });
    }
  }
}

function cacheKey(agent: Agent, secrets: Record<string, string>): string {
  const payload = {
    command: agent.acp_command ?? [],
    server: agent.acp_server ?? null,
    args: agent.acp_args ?? [],
    mode: agent.acp_session_mode ?? null,
    isolate: agent.acp_isolate_data_dir ?? false,
    secrets: Object.entries(secrets).sort(([a], [b]) => a.localeCompare(b)),
  };
  return createHash('sha256').update(JSON.stringify(payload)).digest('hex');
}
