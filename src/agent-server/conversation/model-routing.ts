// What the model-routing tool (route_task_to_model, src/agent/tools/route-task.ts) reads and does
// through this agent server: the meta-profiles of /api/meta-profiles, the LLM profiles of
// /api/profiles, and the switch of a conversation to one of those, which is switch_profile's own
// (the new LLM stored without its key, the key sealed, the masked agent in a state update).
import type { StartConversationRequest } from '../../api/agent-server/index.ts';
import type { LLM } from '../../api/agent-server/agent.ts';
import type { MetaProfile } from '../../api/agent-server/meta-profiles.ts';
import type { LlmConfig } from '../../agent/types.ts';
import type { SubscriptionAccess } from '../../agent/llm/codex.ts';
import { metaProfileNames, readMetaProfile } from '../routes/meta-profiles.ts';
import type { Db } from '../store/db.ts';
import type { ProfileStore } from '../store/profile-store.ts';
import { effectiveLlm } from './service.ts';

export interface ServerRouting {
  metaProfile(name: string): MetaProfile | undefined;
  metaProfileNames(): string[];
  llmProfile(name: string): LlmConfig | undefined;
  llmProfileNames(): string[];
  /** Switches conversation `id` to the LLM profile `name`; its model, or undefined when there is no such profile. */
  switchProfile(id: string, name: string): string | undefined;
  /** An LLM given inline (the routing tool's `meta_profile_llms`) as a model to call, resolved as a conversation's LLM is. */
  llmOf(llm: LLM): LlmConfig | undefined;
  /** Switches conversation `id` to an inline LLM under the name `name` (usage id `profile:<name>`, as 1.58); its model. */
  switchInline(id: string, name: string, llm: LLM): string | undefined;
}

/** The LLM a stored profile names, with its key, as switch_profile gives it to a conversation (usage id `profile:<name>`). */
export function profileLlm(profiles: ProfileStore, name: string) {
  const p = profiles.runnable(name);
  return p && { llm: { ...p.llm, usage_id: `profile:${name}`, ...(p.apiKey !== undefined ? { api_key: p.apiKey } : {}) } };
}

export function serverRouting(o: {
  db: Db;
  profiles: ProfileStore;
  /** The conversation's switch_llm (ConversationService.switchLlm). */
  switchLlm(id: string, req: NonNullable<ReturnType<typeof profileLlm>>): void;
  llmDefaults: LlmConfig | undefined;
  subscription?: () => SubscriptionAccess;
}): ServerRouting {
  // effectiveLlm reads only the request's agent.llm.
  const resolve = (llm: LLM, apiKey: string | undefined) => effectiveLlm({ agent: { kind: 'Agent', llm } } as StartConversationRequest, apiKey, o.llmDefaults, o.subscription);
  return {
    metaProfile: (name) => readMetaProfile(o.db, name),
    metaProfileNames: () => metaProfileNames(o.db),
    // Resolved as a conversation's LLM is (so a server default key only goes to its own endpoint).
    llmProfile: (name) => {
      const p = o.profiles.runnable(name);
      return p && resolve(p.llm, p.apiKey);
    },
    llmOf: (llm) => resolve(llm, llm.api_key ?? undefined),
    switchInline: (id, name, llm) => {
      o.switchLlm(id, { llm: { ...llm, usage_id: `profile:${name}` } });
      return llm.model;
    },
    llmProfileNames: () => o.profiles.list().map((p) => p.name),
    switchProfile: (id, name) => {
      const req = profileLlm(o.profiles, name);
      if (!req) return undefined;
      o.switchLlm(id, req);
      return req.llm.model;
    },
  };
}
