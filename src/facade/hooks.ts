// The hooks of a conversation's workspace, read live from its agent server (POST /api/hooks with
// the conversation's working directory), under the same paused / read-only rules as workspace files.
import type { HooksResponse } from '../api/agent-server/hooks.ts';
import { HOOK_EVENT_FIELDS } from '../api/agent-server/hooks.ts';
import type { ConversationHooksResponse } from '../api/app/hooks.ts';
import { NotFound } from '../api/errors.ts';
import type { AppUser } from './db/app-db.ts';
import type { FacadeDeps } from './deps.ts';
import { agentFor } from './workspace.ts';

export async function conversationHooks(d: FacadeDeps, user: AppUser, id: string): Promise<ConversationHooksResponse> {
  const { conv, client } = await agentFor(d, user, id);
  const info = await client.getConversation(conv.metadata.name);
  if (!info) throw new NotFound(`Conversation ${id} is not known to its agent server`);
  // A relative working dir is taken inside the agent server's workspace, there as here.
  const { hook_config: config } = (await client.postJson('/api/hooks', { project_dir: info.workspace.working_dir })) as HooksResponse;
  if (!config) return { hooks: [] };
  return {
    hooks: HOOK_EVENT_FIELDS.filter((f) => config[f]?.length).map((f) => ({
      event_type: f,
      matchers: config[f]!.map((m) => ({
        matcher: m.matcher ?? '*',
        hooks: (m.hooks ?? []).map((h) => ({ type: h.type ?? 'command', command: h.command ?? '', timeout: h.timeout ?? 60, async: h.async ?? false })),
      })),
    })),
  };
}
