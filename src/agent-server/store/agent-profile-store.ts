// Agent profiles in the agent server's SQLite file (OpenHands keeps one JSON file each), and the
// active one's id. Some profile is always active once they are listed: with no valid pointer,
// `default` is, seeded when missing (its LLM is the active LLM profile, else the one named
// `default`; with the routing tool on and that meta-profile when the settings name an active one),
// as OpenHands seeds it from its agent settings.
import { randomUUID } from 'node:crypto';
import { completeAgentProfile, completeAnyAgentProfile, SEED_AGENT_PROFILE, type AnyAgentProfile, type AnyAgentProfileInput } from '../../api/agent-server/agent-profiles.ts';
import { Conflict, NotFound } from '../../api/errors.ts';
import type { Db } from './db.ts';

const DDL = `
CREATE TABLE IF NOT EXISTS agent_profiles (
  id       TEXT PRIMARY KEY,
  name     TEXT NOT NULL UNIQUE,
  -- The whole profile (AgentProfile or AcpAgentProfile), id, name and revision included.
  profile  TEXT NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS server_settings (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT;
`;

const canonical = (name: string) => (name.endsWith('.json') ? name.slice(0, -'.json'.length) : name);

export class AgentProfileStore {
  readonly #db: Db;
  /** The active LLM profile, which a seeded `default` refers to. */
  readonly #activeLlmProfile: () => string | null;
  /** The settings' active meta-profile, which a seeded `default` routes with (OpenHands' build_seed_profile). */
  readonly #activeMetaProfile: () => string | null;

  constructor(db: Db, activeLlmProfile: () => string | null, activeMetaProfile: () => string | null = () => null) {
    db.exec(DDL);
    this.#db = db;
    this.#activeLlmProfile = activeLlmProfile;
    this.#activeMetaProfile = activeMetaProfile;
  }

  list(): AnyAgentProfile[] {
    return (this.#db.prepare('SELECT profile FROM agent_profiles ORDER BY name').all() as { profile: string }[]).map((r) => JSON.parse(r.profile) as AnyAgentProfile);
  }

  get(name: string): AnyAgentProfile | undefined {
    const r = this.#db.prepare('SELECT profile FROM agent_profiles WHERE name = ?').get(canonical(name)) as { profile: string } | undefined;
    return r && (JSON.parse(r.profile) as AnyAgentProfile);
  }

  byId(id: string): AnyAgentProfile | undefined {
    const r = this.#db.prepare('SELECT profile FROM agent_profiles WHERE id = ?').get(id) as { profile: string } | undefined;
    return r && (JSON.parse(r.profile) as AnyAgentProfile);
  }

  /** Overwriting keeps the profile's id and bumps its revision; a new one gets a new id (409 past `max`). */
  save(name: string, input: AnyAgentProfileInput, max: number): AnyAgentProfile {
    const key = canonical(name);
    return this.#db.transaction(() => {
      const old = this.get(key);
      if (!old && this.list().length >= max) throw new Conflict(`Agent profile limit reached (${max}). Delete a profile before saving a new one.`);
      const profile = completeAnyAgentProfile(input, { id: old?.id ?? randomUUID(), name: key, revision: old ? old.revision + 1 : 0 });
      this.#write(profile, old !== undefined);
      return profile;
    })();
  }

  /** Idempotent; the active one deleted, `default` becomes active (seeded again if it was the one). */
  delete(name: string): void {
    this.#db.transaction(() => {
      const old = this.get(name);
      if (!old) return;
      this.#db.prepare('DELETE FROM agent_profiles WHERE id = ?').run(old.id);
      if (this.activeId() === old.id) {
        this.#setActive(null);
        this.ensureActive();
      }
    })();
  }

  /** The id (and so the active pointer) stays. */
  rename(from: string, to: string): void {
    this.#db.transaction(() => {
      const p = this.get(from);
      if (!p) throw new NotFound(`Agent profile '${from}' not found`);
      if (canonical(from) === canonical(to)) return;
      if (this.get(to)) throw new Conflict(`Agent profile '${to}' already exists`);
      this.#write({ ...p, name: canonical(to) }, true);
    })();
  }

  activate(id: string): void {
    if (!this.byId(id)) throw new NotFound(`Agent profile with id '${id}' not found`);
    this.#setActive(id);
  }

  activeId(): string | null {
    const r = this.#db.prepare("SELECT value FROM server_settings WHERE key = 'active_agent_profile_id'").get() as { value: string } | undefined;
    return r ? r.value : null;
  }

  /** Keeps the pointer on a stored profile: `default` (seeded when missing and there is room), else the first other. */
  ensureActive(max = Infinity): void {
    this.#db.transaction(() => {
      const id = this.activeId();
      if (id !== null && this.byId(id)) return;
      let target = this.get(SEED_AGENT_PROFILE);
      if (!target && this.list().length < max) {
        const meta = this.#activeMetaProfile();
        const routing = meta !== null ? { enable_classify_and_switch_llm_tool: true, meta_profile_ref: meta } : {};
        target = completeAgentProfile({ llm_profile_ref: this.#activeLlmProfile() ?? SEED_AGENT_PROFILE, ...routing }, { id: randomUUID(), name: SEED_AGENT_PROFILE, revision: 0 });
        this.#write(target, false);
      }
      target ??= this.list()[0];
      if (target) this.#setActive(target.id);
    })();
  }

  /** Names of the profiles that use LLM profile `name`, sorted. */
  referrers(llmProfile: string): string[] {
    return this.list().filter((p) => p.agent_kind !== 'acp' && canonical(p.llm_profile_ref) === canonical(llmProfile)).map((p) => p.name);
  }

  /** An LLM profile renamed: the profiles that used it follow. */
  renameLlmRef(from: string, to: string): void {
    for (const p of this.list()) if (p.agent_kind !== 'acp' && canonical(p.llm_profile_ref) === canonical(from)) this.#write({ ...p, llm_profile_ref: canonical(to) }, true);
  }

  #write(p: AnyAgentProfile, exists: boolean): void {
    if (exists) this.#db.prepare('UPDATE agent_profiles SET name = ?, profile = ? WHERE id = ?').run(p.name, JSON.stringify(p), p.id);
    else this.#db.prepare('INSERT INTO agent_profiles (id, name, profile) VALUES (?, ?, ?)').run(p.id, p.name, JSON.stringify(p));
  }

  #setActive(id: string | null): void {
    if (id === null) this.#db.prepare("DELETE FROM server_settings WHERE key = 'active_agent_profile_id'").run();
    else this.#db.prepare("INSERT INTO server_settings (key, value) VALUES ('active_agent_profile_id', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(id);
  }
}
