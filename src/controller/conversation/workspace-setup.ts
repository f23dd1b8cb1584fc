// RUNNING_SETUP_SCRIPT and SETTING_UP_GIT_HOOKS (OpenHands' app server does the same two steps):
// the conversation's working directory (the selected repository's clone, else the workspace) may
// carry `.openhands/setup.sh`, run once before the agent starts, and `.openhands/pre-commit.sh`,
// installed as the repository's pre-commit hook. Both run in the sandbox through its agent
// server's one-shot command API (POST /api/bash/execute_bash_command), which also keeps the
// commands and their output as bash events there.
//
// Where OpenHands differs, deliberately: a setup script that fails ends the start in ERROR with the
// script's output (OpenHands ignores its exit code, and the agent then works in a half-prepared
// workspace nobody was told about); a hook already in place is kept and run first instead of being
// moved aside and forgotten.
import type { BashOutput, ExecuteBashRequest } from '../../api/agent-server/bash.ts';
import type { Conversation } from '../../api/conversation.ts';
import { isAgentyardError } from '../../api/errors.ts';
import { createMasker } from '../../agent/mask.ts';
import type { AgentServerClient } from '../../runtime/agent-server-client.ts';
import { conversationWorkingDir } from './start-request.ts';

export const SETUP_SCRIPT = '.openhands/setup.sh';
export const PRE_COMMIT_SCRIPT = '.openhands/pre-commit.sh';
/** OpenHands gives the setup script ten minutes. */
export const SETUP_SCRIPT_TIMEOUT_S = 600;
/** How much of a script's output goes into the start task's detail and the resource event. */
export const OUTPUT_TAIL_CHARS = 4_000;
/** First line after the shebang of the hook we install: a rerun of the step recognises its own hook. */
const HOOK_MARK = '# Installed by agentyard';

export type SetupOutcome = { ran: false } | { ran: true; exitCode: number; output: string };

async function execute(client: AgentServerClient, request: ExecuteBashRequest): Promise<BashOutput> {
  return (await client.postJson('/api/bash/execute_bash_command', request)) as BashOutput;
}

/** The last `max` characters of a command's output, secrets masked (the bash service masks too; this is not its job alone). */
export function outputTail(out: Pick<BashOutput, 'stdout' | 'stderr'>, secrets: Record<string, string>, max = OUTPUT_TAIL_CHARS): string {
  const text = createMasker(secrets)([out.stdout ?? '', out.stderr ?? ''].filter(Boolean).join('\n')).trimEnd();
  return text.length > max ? `…${text.slice(-max)}` : text;
}

/**
 * The names in the working directory's `.openhands` (none when there is no such directory): a
 * directory read in the agent server, the pre-filter of the bash probe, which spawns a shell and
 * records its events. Most working directories have no `.openhands`, and the two probes were most
 * of a warm-pool start's time (issue #16). A listed name still goes through `test -f`.
 */
export async function listOpenhands(client: AgentServerClient, cwd: string): Promise<string[]> {
  try {
    return (await client.getJson('/api/agentyard/files', { path: `${cwd}/.openhands`, limit: '1000' })) as string[];
  } catch (err) {
    // No `.openhands` directory (404) or not a directory (422): no script.
    if (isAgentyardError(err) && (err.code === 'NotFound' || err.code === 'Invalid')) return [];
    throw err;
  }
}

const listed = (files: readonly string[], script: string) => files.includes(script.slice('.openhands/'.length));

/**
 * Runs `.openhands/setup.sh` in the working directory when it is there; stdout and stderr as one
 * stream, in order. `listing`: the `.openhands` names this step read (for the Git-hook step to reuse
 * when the script did not run: nothing in the sandbox changed them in between).
 */
export async function runSetupScript(client: AgentServerClient, conv: Conversation, secrets: Record<string, string>): Promise<SetupOutcome & { listing: string[] }> {
  const cwd = conversationWorkingDir(conv);
  const listing = await listOpenhands(client, cwd);
  if (!listed(listing, SETUP_SCRIPT)) return { ran: false, listing };
  const probe = await execute(client, { command: `test -f ${SETUP_SCRIPT}`, cwd, timeout: 30 });
  if (probe.exit_code !== 0) return { ran: false, listing };
  // `source` in its own bash, as OpenHands runs it: the script needs no executable bit or shebang.
  const out = await execute(client, { command: `source ${SETUP_SCRIPT} 2>&1`, cwd, timeout: SETUP_SCRIPT_TIMEOUT_S });
  return { ran: true, exitCode: out.exit_code ?? -1, output: outputTail(out, secrets), listing };
}

/**
 * The hook: the one that was there before (kept as pre-commit.local) first, then the repository's
 * script, from the top of the work tree (where Git runs hooks). A missing script lets the commit
 * through with a warning, as OpenHands' hook does.
 */
export const PRE_COMMIT_HOOK = `#!/usr/bin/env bash
${HOOK_MARK}: runs ${PRE_COMMIT_SCRIPT} of this repository before each commit.
hooks="$(git rev-parse --git-path hooks)"
if [ -x "$hooks/pre-commit.local" ]; then
  "$hooks/pre-commit.local" "$@" || exit $?
fi
if [ -f ${PRE_COMMIT_SCRIPT} ]; then
  exec bash ${PRE_COMMIT_SCRIPT} "$@"
fi
echo "warning: ${PRE_COMMIT_SCRIPT} is missing; the commit is not checked" >&2
exit 0
`;

/**
 * Installs the hook when the working directory is a Git work tree with `.openhands/pre-commit.sh`.
 * Idempotent: a hook that is ours is overwritten, any other is kept as pre-commit.local once.
 * `listing`: the setup-script step's `.openhands` names when that script did not run (else read here).
 */
export async function installGitHooks(client: AgentServerClient, conv: Conversation, secrets: Record<string, string>, listing?: readonly string[]): Promise<SetupOutcome> {
  const cwd = conversationWorkingDir(conv);
  if (!listed(listing ?? (await listOpenhands(client, cwd)), PRE_COMMIT_SCRIPT)) return { ran: false };
  const probe = await execute(client, { command: `test -f ${PRE_COMMIT_SCRIPT} && git rev-parse --is-inside-work-tree >/dev/null 2>&1`, cwd, timeout: 30 });
  if (probe.exit_code !== 0) return { ran: false };
  const script = [
    'set -e',
    'hooks="$(git rev-parse --git-path hooks)"',
    'mkdir -p "$hooks"',
    `if [ -e "$hooks/pre-commit" ] && ! grep -qF '${HOOK_MARK}' "$hooks/pre-commit"; then mv "$hooks/pre-commit" "$hooks/pre-commit.local"; chmod +x "$hooks/pre-commit.local"; fi`,
    `cat > "$hooks/pre-commit" <<'AGENTYARD_HOOK'\n${PRE_COMMIT_HOOK}AGENTYARD_HOOK`,
    'chmod +x "$hooks/pre-commit"',
  ].join('\n');
  const out = await execute(client, { command: `${script}\n`, cwd, timeout: 30 });
  return { ran: true, exitCode: out.exit_code ?? -1, output: outputTail(out, secrets) };
}
