// Confirmation mode through the app API (spec part 3: an agent waits in WAITING_FOR_CONFIRMATION
// for the user to approve a high-risk action): the policy and the user's answer, passed on to the
// conversation's agent server, which owns the waiting actions. Browsers cannot reach a sandbox in a
// cluster, so these are the routes the web app uses; the read-only rules are those of every
// workspace call (agentFor).
import type { ConfirmationPolicy } from '../api/agent-server/policy.ts';
import type { AppUser } from './db/types.ts';
import type { FacadeDeps } from './deps.ts';
import { agentFor } from './workspace.ts';

export async function setConfirmationPolicy(d: FacadeDeps, user: AppUser, id: string, policy: ConfirmationPolicy): Promise<{ success: boolean }> {
  const { conv, client } = await agentFor(d, user, id);
  await client.postJson(`/api/conversations/${conv.metadata.name}/confirmation_policy`, { policy });
  return { success: true };
}

export async function respondToConfirmation(d: FacadeDeps, user: AppUser, id: string, answer: { accept: boolean; reason?: string }): Promise<{ success: boolean }> {
  const { conv, client } = await agentFor(d, user, id);
  await client.postJson(`/api/conversations/${conv.metadata.name}/events/respond_to_confirmation`, answer);
  return { success: true };
}
