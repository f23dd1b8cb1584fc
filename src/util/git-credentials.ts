// The one way agentyard hands a Git credential to the git binary: an `http.extraHeader` through
// GIT_CONFIG_COUNT / GIT_CONFIG_KEY_n / GIT_CONFIG_VALUE_n environment variables. Never in argv (any
// local user reads argv with `ps -ef`), never in a remote URL (it lands in .git/config and in the
// argv of git-remote-https), never in a file. The environment of a process is readable only by its
// own user and root.

/** The environment for a git child: minimal, never prompting, with the credential (if any) as a header. */
export function gitEnv(authorization: string | undefined): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/tmp',
    LANG: 'C',
    // Never wait for a password prompt: a refused credential must fail, not hang.
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: 'true',
    SSH_ASKPASS: 'true',
    ...(authorization ? { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'http.extraHeader', GIT_CONFIG_VALUE_0: `Authorization: ${authorization}` } : {}),
  };
}

/**
 * A clone URL that carries credentials (`https://user:token@host/...`, as OpenHands' org_repo_url
 * does on the wire) split into the bare URL and an HTTP basic Authorization value for gitEnv.
 */
export function splitUrlCredentials(raw: string): { url: string; authorization: string | undefined } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { url: raw, authorization: undefined }; // a local path: nothing to split
  }
  if (!url.username && !url.password) return { url: raw, authorization: undefined };
  const user = decodeURIComponent(url.username);
  const password = decodeURIComponent(url.password);
  url.username = '';
  url.password = '';
  return { url: url.toString(), authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` };
}
