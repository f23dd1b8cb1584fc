// Where the control plane (controller start steps, the API's workspace reads, message delivery,
// conversation deletion) reaches a sandbox's agent server. In a cluster that is the sandbox's
// Service, never its public ingress host: the public host is for clients and need not resolve
// inside the cluster (a real node showed `EAI_AGAIN`). Every dial goes through this one function.
import type { Sandbox } from '../api/sandbox.ts';

/** The agent server's base URL for the control plane; undefined while the sandbox does not serve. */
export function agentServerDialUrl(sb: Sandbox | undefined): string | undefined {
  return sb?.status?.internalUrl ?? sb?.status?.url;
}
