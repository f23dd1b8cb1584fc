// Condition types and reasons: PascalCase constants, the only spelling used anywhere.
export const ConditionType = {
  Ready: 'Ready',
  Paused: 'Paused',
  Placed: 'Placed',
  Started: 'Started',
} as const;

export const Reason = {
  Starting: 'Starting',
  Running: 'Running',
  UserRequest: 'UserRequest',
  IdleTimeout: 'IdleTimeout',
  SessionCap: 'SessionCap',
  RuntimeFailed: 'RuntimeFailed',
  RuntimeMissing: 'RuntimeMissing',
  /** The agent server died and is being restarted (Ready False while it comes back). */
  Restarting: 'Restarting',
  /** The agent server died too often within the crash-loop window: the sandbox is ERROR. */
  CrashLoop: 'CrashLoop',
  /** A conversation's run was lost with its agent server (sandbox died, paused, failed or gone). */
  RunInterrupted: 'RunInterrupted',
  SandboxNotFound: 'SandboxNotFound',
  SandboxNotRunning: 'SandboxNotRunning',
  CapacityExceeded: 'CapacityExceeded',
  Placed: 'Placed',
  StartFailed: 'StartFailed',
  /** Start task steps that did their work (events on the Conversation), or failed it (the start's Ready reason). */
  SetupScriptRan: 'SetupScriptRan',
  SetupScriptFailed: 'SetupScriptFailed',
  GitHooksInstalled: 'GitHooksInstalled',
  GitHooksFailed: 'GitHooksFailed',
  SkillsLoaded: 'SkillsLoaded',
  /** A configuration repository defines a skill name old-style and new-style (spec part 4 rule 6). */
  SkillNameConflict: 'SkillNameConflict',
  Ready: 'Ready',
  /** A warm pool has as many ready members as it wants. */
  PoolFilled: 'PoolFilled',
  /** A warm pool is starting members to reach its replicas. */
  PoolFilling: 'PoolFilling',
} as const;
