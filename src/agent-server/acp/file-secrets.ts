// ACP credential files (OpenHands 1.58 `acp_file_secrets`): some ACP servers read their credential
// from a file rather than the environment (Codex `$CODEX_HOME/auth.json`, Gemini's Vertex service
// account). A reserved secret of the conversation carries the file's content; at launch it is
// written to `<conversation dir>/acp/<subdir>/<filename>` (directories 0700, file 0600) and the
// spec's env var points at the file or its folder. The secret is then not an environment variable
// and not announced to the server by name (its value is a file blob, not something to reference).
// Seed-if-absent, as 1.58: a file the CLI rewrote (a refreshed token) is kept over the seed at the
// next launch, so the refresh survives a restart; the files go with the conversation's directory
// when it is deleted.
import { chmodSync, existsSync, mkdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AcpFileSecretSpec } from '../../api/agent-server/acp.ts';
import { ACP_PROVIDERS, type AcpProvider } from './providers.ts';

/** 1.58's built-in specs (the union across its providers), the default of `acp_file_secrets`. */
export const DEFAULT_ACP_FILE_SECRETS: AcpFileSecretSpec[] = [
  { secret_name: 'CODEX_AUTH_JSON', filename: 'auth.json', env_var: 'CODEX_HOME', subdir: 'codex', env_points_to: 'dir' },
  { secret_name: 'KIMI_CODE_CONFIG_TOML', filename: 'config.toml', env_var: 'KIMI_CODE_HOME', subdir: 'kimi-code', env_points_to: 'dir' },
  { secret_name: 'GOOGLE_APPLICATION_CREDENTIALS_JSON', filename: 'gcloud-credentials.json', env_var: 'GOOGLE_APPLICATION_CREDENTIALS', subdir: 'gemini-cli', env_points_to: 'file', warn_if_unset: ['GOOGLE_CLOUD_PROJECT', 'GOOGLE_CLOUD_LOCATION'] },
  { secret_name: 'PI_AUTH_JSON', filename: 'auth.json', env_var: 'PI_CODING_AGENT_DIR', subdir: 'pi', env_points_to: 'dir' },
];

/**
 * The specs that apply to this server: another known provider's reserved credential is dropped
 * (a Codex auth.json is not written for Claude Code), a spec nobody owns always applies, and an
 * unrecognised server keeps them all (1.58 _active_file_secrets).
 */
export function activeFileSecrets(specs: readonly AcpFileSecretSpec[] | undefined, provider: AcpProvider | undefined): AcpFileSecretSpec[] {
  const all = specs ?? DEFAULT_ACP_FILE_SECRETS;
  if (!provider) return [...all];
  const own = new Set(provider.fileSecrets);
  const elsewhere = new Set(Object.values(ACP_PROVIDERS).flatMap((p) => (p.key === provider.key ? [] : p.fileSecrets)).filter((n) => !own.has(n)));
  return all.filter((s) => !elsewhere.has(s.secret_name));
}

/** The names among the conversation's secrets that are credential files (not environment variables). */
export function fileSecretNames(specs: readonly AcpFileSecretSpec[], secrets: Readonly<Record<string, string>>): Set<string> {
  return new Set(specs.map((s) => s.secret_name).filter((n) => Object.hasOwn(secrets, n)));
}

/**
 * Writes each present file secret under `root` (the conversation's `acp` folder) and returns the
 * environment variables that point at them. An empty value writes nothing (1.58 skips it).
 */
export function materializeFileSecrets(specs: readonly AcpFileSecretSpec[], secrets: Readonly<Record<string, string>>, root: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const spec of specs) {
    const value = secrets[spec.secret_name];
    if (!value) continue;
    const dir = join(root, spec.subdir);
    const target = join(dir, spec.filename);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
    chmodSync(root, 0o700);
    if (existsSync(target) && statSync(target).size > 0) {
      chmodSync(target, 0o600);
    } else {
      // Written whole then renamed: the CLI never reads a half-written credential.
      const tmp = `${target}.${process.pid}.tmp`;
      writeFileSync(tmp, value, { mode: 0o600 });
      renameSync(tmp, target);
    }
    env[spec.env_var] = spec.env_points_to === 'dir' ? dir : target;
  }
  return env;
}
