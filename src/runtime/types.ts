// A SandboxRuntime turns a Sandbox into something that runs an agent server, and back.
// ProcessRuntime (embedded: a child process per sandbox) and KubernetesRuntime (a Pod, PVC and
// Service per sandbox) implement it. Every method is idempotent: the controller calls them from a
// level-triggered reconcile, possibly again after a crash.
import type { Sandbox } from '../api/sandbox.ts';

export type RuntimeState =
  /** Nothing exists for this sandbox (never started, or deleted). */
  | { phase: 'absent' }
  /** Being created or resumed; not serving yet. */
  | { phase: 'starting'; runtimeId: string; message?: string; death?: AgentServerDeath }
  /**
   * Serving: the agent server answers /health. `url` is the public address clients get;
   * `internalUrl`, when the runtime has one, is where the control plane dials instead.
   */
  | { phase: 'running'; runtimeId: string; url: string; internalUrl?: string; death?: AgentServerDeath }
  /** Compute released, workspace kept. */
  | { phase: 'paused'; runtimeId: string }
  /**
   * The agent server died on its own (crashed, killed, hung and put down) and nothing brings it back
   * by itself; its state (workspace, event database) is intact and start() restarts it.
   */
  | { phase: 'exited'; runtimeId: string; death: AgentServerDeath }
  /** Failed and will not recover by itself, nor by a restart. */
  | { phase: 'failed'; runtimeId?: string; reason: string; message: string };

/**
 * One death of a sandbox's agent server. `id` names that death and nothing else (the process and
 * its start, the Pod and its container restart count): the same death is reported by every observe
 * until the agent server runs again, so the controller counts it once. On a starting or running
 * state it is a death the runtime already healed (the kubelet restarted the container).
 */
export interface AgentServerDeath {
  id: string;
  reason: string;
  message: string;
  /**
   * When one instance (a Pod) can die many times: its id and this death's number in it, so deaths
   * the controller did not see one by one (it was down meanwhile) are still counted.
   */
  instance?: string;
  ordinal?: number;
}

/** Which sandbox changed, as the runtime knows it. */
export interface SandboxRef {
  namespace?: string;
  name: string;
}

export interface SandboxRuntime {
  /** What exists now, read from the runtime itself (never from memory alone). */
  observe(sandbox: Sandbox): Promise<RuntimeState>;
  /**
   * Create or resume the agent server. Returns without waiting for it to become healthy.
   * The session key comes from the Secret `<sandbox>-session` that the Sandbox reconciler owns;
   * the runtime hands it to the agent server as OH_SESSION_API_KEYS_0 and never logs it. The model
   * token from the same Secret is the agent server's LLM_API_KEY for the model gateway (the
   * provider's key never enters a sandbox).
   */
  start(sandbox: Sandbox, opts: { sessionKey: string; modelToken?: string }): Promise<RuntimeState>;
  /**
   * The agent server's OH_SECRET_KEY for a session key, as this runtime derives it at start: a
   * warm-pool hand-over tells the running agent server the sealing key its next start will have.
   */
  secretKeyFor?(sessionKey: string): string;
  /** Release compute, keep the workspace. */
  pause(sandbox: Sandbox): Promise<RuntimeState>;
  /** Remove everything, capturing an internal workspace archive first. */
  delete(sandbox: Sandbox): Promise<void>;
  /**
   * Liveness: calls `changed` as soon as something observe() would show differently happened to an
   * agent server on its own (its process exited, its container restarted, its health probe keeps
   * failing), so the controller looks again within seconds instead of at its next deadline.
   * Returns when `signal` aborts. Optional: without it deaths are seen at the next reconcile.
   */
  watch?(changed: (sandbox: SandboxRef) => void, signal: AbortSignal): Promise<void>;
}
