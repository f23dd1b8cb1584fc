// What `agentyard up` is told about sandbox isolation, from its environment. Bad values fail the
// start-up with the variable's name and what it takes; nothing is guessed.

export type IsolationMode = 'auto' | 'required' | 'off';

export interface SandboxLimits {
  /** CPU cores a sandbox may use at once (cgroup CPU quota). */
  cpus: number;
  memoryBytes: number;
  /** Processes and threads a sandbox may hold at once. */
  pids: number;
}

export interface IsolationSettings {
  /** auto: isolate when the host allows it, else run single-user; required: refuse to start without; off: never. */
  mode: IsolationMode;
  /** Host uids (and gids, the same numbers) handed out to sandboxes, one each, inclusive. */
  uidRange: { first: number; last: number };
  limits: SandboxLimits;
  /** Host paths a sandbox may read besides the system directories and agentyard itself. */
  readOnlyPaths: string[];
  /**
   * Ports of the host's loopback a sandbox with a network of its own may reach besides the API's
   * (a local model server a conversation names as its own, e.g. Ollama's 11434).
   */
  hostPorts: number[];
}

export const DEFAULT_UID_RANGE = { first: 1_100_000_000, last: 1_100_999_999 };
export const DEFAULT_LIMITS: SandboxLimits = { cpus: 2, memoryBytes: 4096 * 1024 * 1024, pids: 4096 };

export function loadIsolationSettings(env: NodeJS.ProcessEnv): IsolationSettings {
  const mode = env.AGENTYARD_SANDBOX_ISOLATION ?? 'auto';
  if (mode !== 'auto' && mode !== 'required' && mode !== 'off') {
    throw new Error(`AGENTYARD_SANDBOX_ISOLATION must be auto, required or off, got '${mode}'`);
  }
  return {
    mode,
    uidRange: parseUidRange(env.AGENTYARD_SANDBOX_UID_RANGE),
    limits: {
      cpus: positive(env, 'AGENTYARD_SANDBOX_CPUS', DEFAULT_LIMITS.cpus, false),
      memoryBytes: positive(env, 'AGENTYARD_SANDBOX_MEMORY_MB', DEFAULT_LIMITS.memoryBytes / 1024 / 1024, true) * 1024 * 1024,
      pids: positive(env, 'AGENTYARD_SANDBOX_PIDS', DEFAULT_LIMITS.pids, true),
    },
    readOnlyPaths: (env.AGENTYARD_SANDBOX_READ_ONLY_PATHS ?? '').split(':').filter((p) => p !== ''),
    hostPorts: [...new Set([...parsePorts(env.AGENTYARD_SANDBOX_HOST_PORTS), ...configuredGitHostPorts(env)])],
  };
}

/**
 * Ports of the Git hosts the operator configured on this machine's loopback (a local Gitea, the
 * tests' stand-in): sandboxes clone from them, and with a network of their own they reach the
 * host's loopback only through listed ports. Hosts elsewhere are reached through the outbound NAT.
 * Malformed values are left to the settings that own them, which refuse them with a message.
 */
function configuredGitHostPorts(env: NodeJS.ProcessEnv): number[] {
  const urls = [env.AGENTYARD_GIT_BASE_URL];
  try {
    const hosts = JSON.parse(env.AGENTYARD_GIT_HOSTS ?? '{}') as unknown;
    if (hosts && typeof hosts === 'object') urls.push(...Object.values(hosts).filter((v): v is string => typeof v === 'string'));
  } catch {
    // not JSON: reported where AGENTYARD_GIT_HOSTS is read
  }
  const ports: number[] = [];
  for (const raw of urls) {
    if (!raw) continue;
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      continue;
    }
    if (!/^(localhost|127(\.\d+){3}|\[::1\])$/.test(url.hostname)) continue;
    ports.push(Number(url.port || (url.protocol === 'https:' ? 443 : 80)));
  }
  return ports;
}

function parsePorts(raw: string | undefined): number[] {
  const parts = (raw ?? '').split(',').map((p) => p.trim()).filter((p) => p !== '');
  const ports = parts.map(Number);
  if (ports.some((p) => !Number.isInteger(p) || p < 1 || p > 65535) || parts.some((p) => !/^\d+$/.test(p))) {
    throw new Error(`AGENTYARD_SANDBOX_HOST_PORTS must be a comma-separated list of TCP ports (1-65535), got '${raw}'`);
  }
  return ports;
}

function parseUidRange(raw: string | undefined): { first: number; last: number } {
  if (raw === undefined || raw === '') return DEFAULT_UID_RANGE;
  const m = /^(\d+)-(\d+)$/.exec(raw.trim());
  const first = Number(m?.[1]);
  const last = Number(m?.[2]);
  // Below 1000 are system accounts; 2^32-1 is the kernel's "no uid". Never root, never overlapping them.
  if (!m || first < 1000 || last < first || last >= 2 ** 32 - 1) {
    throw new Error(`AGENTYARD_SANDBOX_UID_RANGE must be <first>-<last> with 1000 <= first <= last < 4294967295, got '${raw}'`);
  }
  return { first, last };
}

function positive(env: NodeJS.ProcessEnv, name: string, fallback: number, integer: boolean): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) {
    throw new Error(`${name} must be a positive ${integer ? 'integer' : 'number'}, got '${raw}'`);
  }
  return n;
}
