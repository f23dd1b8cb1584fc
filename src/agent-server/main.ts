// `agentyard agent-server --port <n> --workspace <dir> [--data-dir <dir>] [--host <addr>]`.
// Configuration from the environment, as OpenHands names it where it has a name:
//   OH_SESSION_API_KEYS_0, _1, ...   accepted session keys (none: authentication off, with a warning)
//   OH_SECRET_KEY                    seals persisted secrets; OpenHands' Fernet key of X-Expose-Secrets: encrypted
//                                    (unset or blank: the first session key, as OpenHands; none at all: memory only)
//   OH_PREVIOUS_SECRET_KEYS          earlier secret keys, a JSON list (or OH_PREVIOUS_SECRET_KEYS_0, _1, ...): they only
//                                    open what they sealed, which is sealed again with OH_SECRET_KEY at start
//   OH_APP_BACKEND_PUBLIC_URL        the separate browser origin Canvas App backends are proxied on (none: /app-backends answers 503)
//   OH_MAX_CONCURRENT_RUNS           conversations running at once before the /v1 gateway answers 429 (default 10)
//   LLM_MODEL, LLM_BASE_URL, LLM_API_KEY   defaults for conversations that do not name a model
//   LLM_NUM_RETRIES                  attempts of a model call in all, for conversations that set no num_retries (default 3)
//   OH_LLM_API_KEY_REFRESH_URL, OH_LLM_API_KEY_REFRESH_BASE_URLS, OH_LLM_API_KEY_REFRESH_HEADERS
//                                    managed LLM key refresh on a 401 (src/agent/llm/key-refresh.ts)
//   AGENTYARD_EVENT_SINK_URL, AGENTYARD_EVENT_SINK_KEY   where every event is pushed
//   OH_DEFERRED_INIT                 true: start dormant, configured by POST /api/init (deferred.ts; X-Init-API-Key is
//                                    OH_SECRET_KEY, else the first session key)
//   AGENTYARD_GIT_HOSTS (github), AGENTYARD_GIT_BASE_URL   the GitHub host whose API /api/git/repositories/search
//                                    asks with a stored GitHub token (default https://github.com, so api.github.com;
//                                    another host is a GitHub Enterprise Server, its /api/v3); OpenHands 1.58 has no
//                                    setting for it (always api.github.com)
// Prints one JSON line {"listening": "<url>"} on stdout once listening; SIGTERM/SIGINT shut down.
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createAgent, createAgentWith } from '../agent/agent.ts';
import type { LlmConfig } from '../agent/types.ts';
import { keyRefreshFromEnv } from '../agent/llm/key-refresh.ts';
import { SINK_ENV } from '../api/event-sink.ts';
import { createLogger } from '../util/log.ts';
import { applyAgentServerV8Flags } from './memory-env.ts';
import { enableIdleCollection } from './idle-collect.ts';
import { startAgentServer } from './server.ts';
import { startDeferredAgentServer } from './deferred.ts';
import { DEFAULT_GIT_HOSTS, gitHostsFromEnv } from '../controller/conversation/repository.ts';
import { warmUp } from './warm-up.ts';
import { subscriptionSettingsFromEnv } from './subscription/service.ts';

export function sessionKeysFromEnv(env: NodeJS.ProcessEnv): string[] {
  const keys: string[] = [];
  for (let i = 0; env[`OH_SESSION_API_KEYS_${i}`] !== undefined; i++) {
    const k = env[`OH_SESSION_API_KEYS_${i}`]!;
    if (k !== '') keys.push(k);
  }
  return keys;
}

/**
 * The secret key as OpenHands 1.58 reads it (config.py _default_secret_key): OH_SECRET_KEY unless
 * blank, else the first session key (SESSION_API_KEY, then OH_SESSION_API_KEYS_0), so a server
 * started with only a session key still seals what it persists (secrets survive a restart) and
 * can answer X-Expose-Secrets: encrypted. Undefined: no key at all (secrets held in memory only).
 */
export function secretKeyFromEnv(env: NodeJS.ProcessEnv): { key: string; from: string } | undefined {
  for (const name of ['OH_SECRET_KEY', 'SESSION_API_KEY', 'OH_SESSION_API_KEYS_0']) {
    const v = env[name];
    if (v !== undefined && v.trim() !== '') return { key: v, from: name };
  }
  return undefined;
}

/**
 * Earlier secret keys, as 1.58 reads `previous_secret_keys`: OH_PREVIOUS_SECRET_KEYS as a JSON list of
 * strings, or OH_PREVIOUS_SECRET_KEYS_0, _1, ... A value that is not such a list stops the start (a
 * key silently ignored would leave everything it sealed unreadable).
 */
export function previousSecretKeysFromEnv(env: NodeJS.ProcessEnv): string[] {
  const list = env['OH_PREVIOUS_SECRET_KEYS'];
  if (list !== undefined && list.trim() !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(list);
    } catch {
      parsed = undefined;
    }
    if (!Array.isArray(parsed) || !parsed.every((k) => typeof k === 'string')) throw new Error('OH_PREVIOUS_SECRET_KEYS must be a JSON list of strings (e.g. ["old-key"]), or use OH_PREVIOUS_SECRET_KEYS_0, _1, ...');
    return parsed.filter((k) => k.trim() !== '');
  }
  const keys: string[] = [];
  for (let i = 0; env[`OH_PREVIOUS_SECRET_KEYS_${i}`] !== undefined; i++) {
    const k = env[`OH_PREVIOUS_SECRET_KEYS_${i}`]!;
    if (k.trim() !== '') keys.push(k);
  }
  return keys;
}

/** OH_DEFERRED_INIT, as 1.58's env parser reads a bool (true/false, 1/0, yes/no, on/off); anything else stops the start. */
export function deferredInitFromEnv(env: NodeJS.ProcessEnv): boolean {
  const raw = env['OH_DEFERRED_INIT']?.trim().toLowerCase();
  if (raw === undefined || raw === '') return false;
  if (['1', 'true', 'yes', 'on', 't', 'y'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off', 'f', 'n'].includes(raw)) return false;
  throw new Error(`OH_DEFERRED_INIT must be true or false, got '${env['OH_DEFERRED_INIT']}'`);
}

export function llmDefaultsFromEnv(env: NodeJS.ProcessEnv): LlmConfig | undefined {
  if (!env['LLM_MODEL']) return undefined;
  return {
    model: env['LLM_MODEL'],
    ...(env['LLM_BASE_URL'] ? { baseUrl: env['LLM_BASE_URL'] } : {}),
    ...(env['LLM_API_KEY'] ? { apiKey: env['LLM_API_KEY'] } : {}),
  };
}

/**
 * LLM_NUM_RETRIES (OpenHands' name, as `agent.llm.num_retries`): attempts of a model call in all. The
 * runtimes raise it for the model gateway, so that an agent rides out a restart of the API it
 * reaches the model through. Returned as retries after the first attempt.
 */
export function modelRetriesFromEnv(env: NodeJS.ProcessEnv): number | undefined {
  const raw = env['LLM_NUM_RETRIES'];
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 100) throw new Error(`LLM_NUM_RETRIES must be an integer 1..100 (attempts in all), got '${raw}'`);
  return n - 1;
}

/** OH_MAX_CONCURRENT_RUNS, as OpenHands reads max_concurrent_runs (an integer ≥ 1). */
export function maxConcurrentRunsFromEnv(env: NodeJS.ProcessEnv): { maxConcurrentRuns?: number } {
  const raw = env['OH_MAX_CONCURRENT_RUNS'];
  if (raw === undefined || raw === '') return {};
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`OH_MAX_CONCURRENT_RUNS must be an integer of at least 1, got ${raw}`);
  return { maxConcurrentRuns: n };
}

/** OH_APP_BACKEND_PUBLIC_URL, OH_ALLOW_CORS_ORIGINS (a JSON list or comma-separated), OH_TRUST_FORWARDED_HEADERS, as OpenHands names them. */
function appBackendsFromEnv(env: NodeJS.ProcessEnv): { publicUrl?: string; allowedOrigins: string[]; trustForwarded: boolean } {
  const raw = env['OH_ALLOW_CORS_ORIGINS']?.trim() ?? '';
  let origins: string[] = [];
  if (raw.startsWith('[')) origins = (JSON.parse(raw) as unknown[]).map(String);
  else if (raw) origins = raw.split(',').map((s) => s.trim()).filter(Boolean);
  return { ...(env['OH_APP_BACKEND_PUBLIC_URL'] ? { publicUrl: env['OH_APP_BACKEND_PUBLIC_URL'] } : {}), allowedOrigins: origins, trustForwarded: /^(1|true|yes)$/i.test(env['OH_TRUST_FORWARDED_HEADERS'] ?? '') };
}

export async function runAgentServerCli(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  applyAgentServerV8Flags();
  enableIdleCollection();
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      workspace: { type: 'string' },
      'data-dir': { type: 'string' },
    },
    strict: true,
  });
  const port = Number(values.port ?? '8000');
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be an integer 0..65535, got ${values.port}`);
  if (!values.workspace) throw new Error('--workspace <dir> is required');

  const log = createLogger('agent-server');
  // A warm-pool member (AGENTYARD_WARM_UP=1, set by the runtime) warms up before it listens: it reads
  // ready (and can be claimed) only once its first user conversation will not pay for compiling the
  // code, and the warm-up never competes with a claim for its event loop.
  if (env['AGENTYARD_WARM_UP'] === '1') {
    const llm = llmDefaultsFromEnv(env);
    await warmUp({ dataDir: resolve(values['data-dir'] ?? join(values.workspace, '.agentyard')), createAgent, ...(llm ? { llmDefaults: llm } : {}), log }).catch((err: unknown) => log.warn({ err }, 'warm-up failed'));
  }
  const retries = modelRetriesFromEnv(env);
  const keyRefresh = keyRefreshFromEnv(env, log);
  const modelOptions = { ...(retries !== undefined ? { maxRetries: retries } : {}), ...(keyRefresh ? { keyRefresh } : {}) };
  const secret = secretKeyFromEnv(env);
  if (secret && secret.from !== 'OH_SECRET_KEY') log.warn({ secretKeyFrom: secret.from }, 'OH_SECRET_KEY not set: secrets are sealed with the first session API key, as OpenHands does (rotating that key makes them unreadable; set OH_SECRET_KEY)');
  const sinkUrl = env[SINK_ENV.url];
  const start = deferredInitFromEnv(env) ? startDeferredAgentServer : startAgentServer;
  const server = await start({
    port,
    ...(values.host ? { host: values.host } : {}),
    workspaceDir: values.workspace,
    ...(values['data-dir'] ? { dataDir: values['data-dir'] } : {}),
    sessionKeys: sessionKeysFromEnv(env),
    createAgent: Object.keys(modelOptions).length === 0 ? createAgent : createAgentWith({ model: modelOptions }),
    ...(sinkUrl ? { sink: { url: sinkUrl, key: env[SINK_ENV.key] ?? '' } } : {}),
    ...(llmDefaultsFromEnv(env) ? { llmDefaults: llmDefaultsFromEnv(env)! } : {}),
    ...(secret ? { secretKey: secret.key, previousSecretKeys: previousSecretKeysFromEnv(env) } : {}),
    subscription: subscriptionSettingsFromEnv(env),
    ...maxConcurrentRunsFromEnv(env),
    appBackends: appBackendsFromEnv(env),
    githubHost: gitHostsFromEnv(env).github ?? DEFAULT_GIT_HOSTS.github!,
    log,
  });
  // Signal handlers first, then the announcement: a parent may signal as soon as it reads the line.
  const stopped = new Promise<number>((resolveExit) => {
    const stop = (signal: NodeJS.Signals) => {
      log.info({ signal }, 'shutting down');
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
      server.close().then(
        () => resolveExit(0),
        (err: unknown) => {
          log.error({ err }, 'shutdown failed');
          resolveExit(1);
        },
      );
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
  process.stdout.write(JSON.stringify({ listening: server.url }) + '\n');
  return stopped;
}
