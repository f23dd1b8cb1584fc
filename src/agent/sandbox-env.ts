// The environment a program the agent runs in the sandbox starts with (the terminal's shell, an ACP
// server): only what a shell needs. The agent server's own environment holds keys (the session key,
// the model provider's key, OH_SECRET_KEY) that sandbox code must never see.
export function sandboxBaseEnv(): Record<string, string> {
  const base: Record<string, string | undefined> = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    USER: process.env.USER,
    SHELL: '/bin/bash',
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    PAGER: 'cat',
    GIT_PAGER: 'cat',
    PYTHONUNBUFFERED: '1',
    DEBIAN_FRONTEND: 'noninteractive',
  };
  return Object.fromEntries(Object.entries(base).filter((e): e is [string, string] => e[1] !== undefined));
}
