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
  SandboxNotFound: 'SandboxNotFound',
  SandboxNotRunning: 'SandboxNotRunning',
  CapacityExceeded: 'CapacityExceeded',
  Placed: 'Placed',
  StartFailed: 'StartFailed',
  Ready: 'Ready',
} as const;
