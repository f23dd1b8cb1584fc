// A SandboxRuntime turns a Sandbox into something that runs an agent server, and back.
// ProcessRuntime (embedded: a child process per sandbox) and KubernetesRuntime (a Pod, PVC and
// Service per sandbox) implement it. Every method is idempotent: the controller calls them from a
// level-triggered reconcile, possibly again after a crash.
import type { Sandbox } from '../api/sandbox.ts';

export type RuntimeState =
  /** Nothing exists for this sandbox (never started, or deleted). */
  | { phase: 'absent' }
  /** Being created or resumed; not serving yet. */
  | { phase: 'starting'; runtimeId: string; message?: string }
  /**
   * Serving: the agent server answers /health. `url` is the public address clients get;
   * `internalUrl`, when the runtime has one, is where the control plane dials instead.
   */
  | { phase: 'running'; runtimeId: string; url: string; internalUrl?: string }
  /** Compute released, workspace kept. */
  | { phase: 'paused'; runtimeId: string }
  /** Failed and will not recover by itself. */
  | { phase: 'failed'; runtimeId?: string; reason: string; message: string };

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
  /** Release compute, keep the workspace. */
  pause(sandbox: Sandbox): Promise<RuntimeState>;
  /** Remove everything, capturing an internal workspace archive first. */
  delete(sandbox: Sandbox): Promise<void>;
}
