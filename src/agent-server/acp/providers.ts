// The ACP servers OpenHands 1.58 knows by name: how each is started when the request gives no
// command, the session mode that lets it work unattended, and whether it can switch models live.
// The pinned versions are 1.58's (its install catalog); a pinned binary on the PATH is preferred to
// npx, as 1.58 does, so an installed server starts without a package download.
import { accessSync, constants } from 'node:fs';
import { basename, delimiter, join } from 'node:path';
import { Invalid } from '../../api/errors.ts';

export interface AcpProvider {
  key: string;
  /** npm packages (name@version) npx runs; the first one's binary unless `binary` is named for several. */
  packages: string[];
  binary: string;
  /** Arguments after the binary that put it in ACP mode (`opencode acp`, `gemini --acp`). */
  acpArgs: string[];
  /** Session mode set after session/new when the request names none (null: none is set). */
  defaultMode: string | null;
  supportsModelSwitch: boolean;
  /** Substrings of a command or of the server's agentInfo.name that identify it. */
  patterns: string[];
  /** The environment variables it reads its key and its endpoint from (agent profiles' credential channels). */
  apiKeyEnv: string | null;
  baseUrlEnv: string | null;
  /** 1.58's credential-file secrets for it (written by file-secrets.ts when the conversation has them). */
  fileSecrets: string[];
}

export const ACP_PROVIDERS: Record<string, AcpProvider> = {
  'claude-code': { key: 'claude-code', packages: ['@agentclientprotocol/claude-agent-acp@0.63.0'], binary: 'claude-agent-acp', acpArgs: [], defaultMode: 'bypassPermissions', supportsModelSwitch: true, patterns: ['claude-agent-acp', 'claude-code-acp'], apiKeyEnv: 'ANTHROPIC_API_KEY', baseUrlEnv: 'ANTHROPIC_BASE_URL', fileSecrets: [] },
  codex: { key: 'codex', packages: ['@agentclientprotocol/codex-acp@1.10.0'], binary: 'codex-acp', acpArgs: [], defaultMode: 'agent-full-access', supportsModelSwitch: true, patterns: ['codex-acp', 'codex'], apiKeyEnv: 'OPENAI_API_KEY', baseUrlEnv: 'OPENAI_BASE_URL', fileSecrets: ['CODEX_AUTH_JSON'] },
  'gemini-cli': { key: 'gemini-cli', packages: ['@google/gemini-cli@0.46.0'], binary: 'gemini', acpArgs: ['--acp'], defaultMode: 'default', supportsModelSwitch: true, patterns: ['gemini'], apiKeyEnv: 'GEMINI_API_KEY', baseUrlEnv: 'GEMINI_BASE_URL', fileSecrets: ['GOOGLE_APPLICATION_CREDENTIALS_JSON'] },
  'kimi-code': { key: 'kimi-code', packages: ['@moonshot-ai/kimi-code@0.38.0'], binary: 'kimi', acpArgs: ['acp'], defaultMode: 'yolo', supportsModelSwitch: true, patterns: ['kimi'], apiKeyEnv: null, baseUrlEnv: 'KIMI_BASE_URL', fileSecrets: ['KIMI_CODE_CONFIG_TOML'] },
  pi: { key: 'pi', packages: ['pi-acp@0.0.33', '@earendil-works/pi-coding-agent@0.83.0'], binary: 'pi-acp', acpArgs: [], defaultMode: null, supportsModelSwitch: true, patterns: ['pi-acp'], apiKeyEnv: 'ANTHROPIC_API_KEY', baseUrlEnv: null, fileSecrets: ['PI_AUTH_JSON'] },
  opencode: { key: 'opencode', packages: ['opencode-ai@1.18.23'], binary: 'opencode', acpArgs: ['acp'], defaultMode: 'build', supportsModelSwitch: true, patterns: ['opencode'], apiKeyEnv: 'OPENCODE_API_KEY', baseUrlEnv: null, fileSecrets: [] },
};

/** The provider a command or an agent name belongs to, if any. */
export function detectProvider(key: string | null | undefined, command: readonly string[], agentName?: string): AcpProvider | undefined {
  if (key && ACP_PROVIDERS[key]) return ACP_PROVIDERS[key];
  const hay = [...command.map((c) => basename(c)), agentName ?? ''].join(' ').toLowerCase();
  return Object.values(ACP_PROVIDERS).find((p) => p.patterns.some((pat) => hay.includes(pat)));
}

function onPath(binary: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, binary);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * The command that starts the server: `acp_command` as given, else the provider's pinned binary when
 * it is on the PATH, else npx with the pinned package(s). `loc` locates a refusal (422).
 */
export function resolveAcpCommand(server: string | null | undefined, command: readonly string[] | undefined, loc: (string | number)[]): string[] {
  if (command && command.length > 0) return [...command];
  if (server === 'custom') throw new Invalid([{ loc: [...loc, 'acp_command'], msg: "acp_command must be set when acp_server is 'custom'", type: 'value_error' }]);
  const provider = ACP_PROVIDERS[server ?? 'claude-code'];
  if (!provider) throw new Invalid([{ loc: [...loc, 'acp_server'], msg: `No default ACP command for acp_server=${JSON.stringify(server)}`, type: 'value_error' }]);
  const pinned = onPath(provider.binary);
  if (pinned) return [pinned, ...provider.acpArgs];
  const pkgs = provider.packages.length === 1 ? [provider.packages[0]!] : [...provider.packages.map((p) => `--package=${p}`), provider.binary];
  return ['npx', '-y', '--prefer-offline', ...pkgs, ...provider.acpArgs];
}
