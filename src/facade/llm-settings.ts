// A user's agent settings as OpenHands' app API carries them: the agent's LLM (agent_settings.llm),
// defaults for new conversations (conversation_settings) and named LLM profiles, activated for new
// conversations or switched into a running one. Kept per user in a Secret resource beside the stored
// secrets (a Kubernetes Secret in a cluster, encrypted at rest in embedded mode): api keys are in
// it, and no app-DB table is needed. Keys are never shown: api_key null, api_key_set true.
// What applies here: the model, through the model gateway (as llm_model at start); max_iterations,
// confirmation mode and its security analyzer for new conversations. The rest of an OpenHands LLM configuration is kept
// for its clients to round-trip, and unapplied_fields says so.
import { createHash } from 'node:crypto';
import { Conflict, Invalid, NotFound } from '../api/errors.ts';
import { LABEL_OWNER } from '../api/meta.ts';
import { SecretKind, type Secret } from '../api/secret.ts';
import { MAX_PROFILES, type AgentSettingsDiff, type ConversationSettingsDiff, type ProfileLlm, type SaveProfileRequest } from '../api/app/llm-settings.ts';
import type { AppUser } from './db/types.ts';
import type { FacadeDeps } from './deps.ts';
import { ConversationKind } from '../api/conversation.ts';
import { getOwned, modify } from './resources.ts';
import { agentFor } from './workspace.ts';

type Llm = Record<string, unknown>;
interface Stored {
  /** The agent's LLM for new conversations, without its key. */
  agent_llm: Llm;
  conversation: { max_iterations: number | null; confirmation_mode: boolean; security_analyzer: 'llm' | 'none' };
  active_profile: string | null;
  /** Profiles by name, without their keys. */
  profiles: Record<string, Llm>;
}
const EMPTY: Stored = { agent_llm: {}, conversation: { max_iterations: null, confirmation_mode: false, security_analyzer: 'llm' }, active_profile: null, profiles: {} };
const SETTINGS_KEY = 'settings.json';
const AGENT_KEY = 'agent-api-key';
const profileKey = (name: string) => `profile-api-key.${name}`;

export function llmSettingsSecretName(userId: string): string {
  return `user-${createHash('sha256').update(userId).digest('hex').slice(0, 40)}-llm-settings`;
}

const UNAPPLIED: Record<string, string> = {
  base_url: "the model gateway sends every model call to this installation's endpoint (LLM_BASE_URL); a profile's own endpoint is kept, not used",
  api_key: "the model gateway calls the installation's endpoint with the installation's key; a profile's own key is kept (never shown), not used",
};
const OTHER = "kept for OpenHands clients; agentyard's agent takes only the model from an LLM configuration (its endpoint, key, retries and sampling are the installation's)";

/** The fields of an LLM configuration that change nothing here, each with the reason. */
export function unappliedLlmFields(llm: Llm, keySet: boolean): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(llm)) if (k !== 'model' && k !== 'api_key' && v !== null && v !== undefined) out[k] = UNAPPLIED[k] ?? OTHER;
  if (keySet) out['api_key'] = UNAPPLIED['api_key']!;
  return out;
}

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const unb64 = (s: string) => Buffer.from(s, 'base64').toString('utf8');

async function read(d: FacadeDeps, user: AppUser): Promise<{ secret: Secret | undefined; stored: Stored }> {
  const secret = await d.store.get(SecretKind, d.namespace, llmSettingsSecretName(user.id));
  // The name is derived from the id; the label check guards against a hand-made look-alike.
  if (!secret || secret.metadata.labels?.[LABEL_OWNER] !== user.id) return { secret: undefined, stored: structuredClone(EMPTY) };
  const raw = secret.data?.[SETTINGS_KEY];
  if (!raw) return { secret, stored: structuredClone(EMPTY) };
  const parsed = JSON.parse(unb64(raw)) as Partial<Stored>;
  return { secret, stored: { ...structuredClone(EMPTY), ...parsed, conversation: { ...EMPTY.conversation, ...parsed.conversation } } };
}

/** Applies `change` to the stored settings and keys (created on first use), retrying on write conflicts. */
async function mutate<T>(d: FacadeDeps, user: AppUser, change: (s: Stored, keys: Map<string, string>) => T): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const { secret, stored } = await read(d, user);
    const keys = new Map(Object.entries(secret?.data ?? {}).filter(([k]) => k !== SETTINGS_KEY).map(([k, v]) => [k, unb64(v)]));
    const result = change(stored, keys);
    const data = { [SETTINGS_KEY]: b64(JSON.stringify(stored)), ...Object.fromEntries([...keys].map(([k, v]) => [k, b64(v)])) };
    try {
      if (secret) await d.store.update(SecretKind, { ...secret, data });
      else {
        const metadata = { name: llmSettingsSecretName(user.id), namespace: d.namespace, labels: { [LABEL_OWNER]: user.id } };
        await d.store.create(SecretKind, { apiVersion: 'v1', kind: 'Secret', metadata, type: 'Opaque', data });
      }
      return result;
    } catch (err) {
      if (!(err instanceof Conflict) || attempt >= 5) throw err;
    }
  }
}

const str = (v: unknown) => (typeof v === 'string' ? v : null);
const withoutKey = (llm: ProfileLlm): Llm => Object.fromEntries(Object.entries(llm).filter(([k]) => k !== 'api_key'));

/** agent_settings and conversation_settings as GET /settings shows them. */
export async function llmSettingsView(d: FacadeDeps, user: AppUser) {
  const { secret, stored } = await read(d, user);
  const llm = stored.agent_llm;
  return {
    agent_settings: { llm: { ...llm, model: str(llm['model']), base_url: str(llm['base_url']), api_key: null, api_key_set: Boolean(secret?.data?.[AGENT_KEY]) } },
    conversation_settings: { schema_version: 1 as const, ...stored.conversation },
  };
}

/** POST /settings: agent_settings_diff.llm merges into the agent's LLM (the active profile no longer holds); conversation_settings_diff into the defaults. */
export async function applySettingsDiff(d: FacadeDeps, user: AppUser, agent: AgentSettingsDiff | undefined, conversation: ConversationSettingsDiff | undefined): Promise<void> {
  if (!agent?.llm && !conversation) return;
  await mutate(d, user, (s, keys) => {
    if (agent?.llm) {
      const { api_key, ...rest } = agent.llm;
      s.agent_llm = { ...s.agent_llm, ...rest };
      if (typeof api_key === 'string') keys.set(AGENT_KEY, api_key);
      else if (api_key === null) keys.delete(AGENT_KEY);
      s.active_profile = null;
    }
    if (conversation) {
      if (conversation.max_iterations !== undefined) s.conversation.max_iterations = conversation.max_iterations;
      if (conversation.confirmation_mode !== undefined) s.conversation.confirmation_mode = conversation.confirmation_mode ?? false;
      if (conversation.security_analyzer !== undefined) s.conversation.security_analyzer = conversation.security_analyzer ?? 'llm';
    }
  });
}

/** What the caller's settings give a new conversation (the start request's own fields win). */
export async function startDefaults(d: FacadeDeps, user: AppUser): Promise<{ model?: string; maxIterations?: number; confirmationMode?: 'always' | 'risky' }> {
  const { stored } = await read(d, user);
  const model = str(stored.agent_llm['model']);
  return {
    ...(model ? { model } : {}),
    ...(stored.conversation.max_iterations ? { maxIterations: stored.conversation.max_iterations } : {}),
    ...(stored.conversation.confirmation_mode ? { confirmationMode: stored.conversation.security_analyzer === 'llm' ? ('risky' as const) : ('always' as const) } : {}),
  };
}

export async function listProfiles(d: FacadeDeps, user: AppUser) {
  const { secret, stored } = await read(d, user);
  const profiles = Object.entries(stored.profiles)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, llm]) => ({ name, model: str(llm['model']), base_url: str(llm['base_url']), api_key_set: Boolean(secret?.data?.[profileKey(name)]) }));
  return { profiles, active_profile: stored.active_profile };
}

export async function getProfile(d: FacadeDeps, user: AppUser, name: string) {
  const { secret, stored } = await read(d, user);
  const llm = stored.profiles[name];
  if (!llm) throw new NotFound(`Profile '${name}' not found`);
  const keySet = Boolean(secret?.data?.[profileKey(name)]);
  return { name, config: { ...llm, api_key: null }, api_key_set: keySet, unapplied_fields: unappliedLlmFields(llm, keySet) };
}

/**
 * Saves `req.llm` as the profile, or (none given) a snapshot of the agent's LLM; an existing profile
 * of that name is replaced. A missing key keeps the one stored; include_secrets false stores none.
 */
export async function saveProfile(d: FacadeDeps, user: AppUser, name: string, req: SaveProfileRequest) {
  await mutate(d, user, (s, keys) => {
    const exists = name in s.profiles;
    if (!exists && Object.keys(s.profiles).length >= MAX_PROFILES) throw new Conflict(`At most ${MAX_PROFILES} profiles; delete one first`);
    const oldKey = keys.get(profileKey(name));
    let key: string | undefined;
    if (req.llm) {
      s.profiles[name] = withoutKey(req.llm);
      key = typeof req.llm.api_key === 'string' ? req.llm.api_key : oldKey;
    } else {
      s.profiles[name] = { ...s.agent_llm };
      key = keys.get(AGENT_KEY);
    }
    if (req.preserve_existing_api_key && exists) key = oldKey;
    if (req.include_secrets === false) key = undefined;
    if (key) keys.set(profileKey(name), key);
    else keys.delete(profileKey(name));
    // The active profile changed under the agent: the agent follows it, so "active" stays true.
    if (s.active_profile === name) s.agent_llm = { ...s.profiles[name] };
  });
  return { name, message: `Profile '${name}' saved` };
}

/** Idempotent, as in OpenHands. */
export async function deleteProfile(d: FacadeDeps, user: AppUser, name: string) {
  const { stored } = await read(d, user);
  if (name in stored.profiles) {
    await mutate(d, user, (s, keys) => {
      delete s.profiles[name];
      keys.delete(profileKey(name));
      if (s.active_profile === name) s.active_profile = null;
    });
  }
  return { name, message: `Profile '${name}' deleted` };
}

/** The profile becomes the agent's LLM for the caller's new conversations. */
export async function activateProfile(d: FacadeDeps, user: AppUser, name: string) {
  const model = await mutate(d, user, (s, keys) => {
    const llm = s.profiles[name];
    if (!llm) throw new NotFound(`Profile '${name}' not found`);
    s.agent_llm = { ...llm };
    const key = keys.get(profileKey(name));
    if (key) keys.set(AGENT_KEY, key);
    else keys.delete(AGENT_KEY);
    s.active_profile = name;
    return str(llm['model']);
  });
  return { name, message: `Switched to profile '${name}'`, model };
}

export async function renameProfile(d: FacadeDeps, user: AppUser, name: string, newName: string) {
  await mutate(d, user, (s, keys) => {
    const llm = s.profiles[name];
    if (!llm) throw new NotFound(`Profile '${name}' not found`);
    if (newName === name) return;
    if (newName in s.profiles) throw new Conflict(`Profile '${newName}' already exists`);
    delete s.profiles[name];
    s.profiles[newName] = llm;
    const key = keys.get(profileKey(name));
    keys.delete(profileKey(name));
    if (key) keys.set(profileKey(newName), key);
    if (s.active_profile === name) s.active_profile = newName;
  });
  return { name: newName, message: `Profile '${name}' renamed to '${newName}'` };
}

/** The model of a profile, for switch_profile; 404 when there is no such profile, 422 when it names none. */
export async function profileModel(d: FacadeDeps, user: AppUser, name: string): Promise<string> {
  const llm = (await read(d, user)).stored.profiles[name];
  if (!llm) throw new NotFound(`Profile '${name}' not found`);
  const model = str(llm['model']);
  if (!model) throw new Invalid([{ loc: ['body', 'profile_name'], msg: `Profile '${name}' names no model`, type: 'value_error' }]);
  return model;
}

/**
 * Switches a running conversation's agent to a profile's model from its next model call on (the
 * agent server's switch_llm; a paused sandbox is resumed first, as for every workspace call), and
 * the conversation's record shows it (llm_model). The endpoint and key stay the gateway's.
 */
export async function switchConversationProfile(d: FacadeDeps, user: AppUser, id: string, profileName: string): Promise<{ success: boolean }> {
  // The conversation in the path is looked up first (its 404 before the profile's), and only then
  // resumed, once the profile is known to name a model.
  const owned = await getOwned(d, ConversationKind, user.id, id);
  if (!owned || owned.metadata.deletionTimestamp) throw new NotFound(`Conversation ${id} not found`);
  const model = await profileModel(d, user, profileName);
  const { conv, client } = await agentFor(d, user, id);
  await client.postJson(`/api/conversations/${conv.metadata.name}/switch_llm`, { llm: { model } });
  await modify(d, ConversationKind, conv.metadata.name, (c) => {
    c.spec = { ...c.spec, llmModel: model };
    return c;
  });
  return { success: true };
}
