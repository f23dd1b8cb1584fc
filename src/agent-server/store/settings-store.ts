// What the agent server keeps for its clients beside conversations: the named secrets of
// /api/settings/secrets and the GUI's saved workspaces. Both live in the server's one SQLite file,
// so they survive a restart like everything else.
//
// Decision (as for conversation secrets, secrets.ts): a secret value reaches the disk only sealed
// with the server's secret key (OH_SECRET_KEY; the runtimes always set one). Without a key the
// values are kept in memory and forgotten on restart (said once in the log), never written in
// plain text: OpenHands would write them in plain text, and the data dir may sit in the workspace.
import type { WorkspaceItem, WorkspaceParentItem, WorkspacesListResponse } from '../../api/agent-server/settings.ts';
import type { Logger } from '../../util/log.ts';
import { Conflict } from '../../api/errors.ts';
import { UNOPENABLE_HINT, type SecretSealer } from '../secrets.ts';
import { LLM_SECRET_FIELDS, secretPaths, withAgentDefaults, withSecretsReplaced, type SettingsDoc } from '../settings-doc.ts';
import type { Db } from './db.ts';

export interface StoredSecret {
  name: string;
  description: string | null;
}

/** The sealing context binds a sealed value to its name: a row renamed or copied elsewhere won't open. */
export const sealContext = (name: string) => `settings-secret:${name}`;

export class SettingsSecretStore {
  readonly #db: Db;
  readonly #log: Logger;
  #sealer: SecretSealer | undefined;
  /** Values and descriptions while there is no secret key. */
  readonly #memory = new Map<string, { value: string; description: string | null }>();

  constructor(db: Db, sealer: SecretSealer | undefined, log: Logger) {
    this.#db = db;
    this.#sealer = sealer;
    this.#log = log;
  }

  /** In the order first written (as OpenHands lists them), without values. */
  list(): StoredSecret[] {
    if (!this.#sealer) return [...this.#memory].map(([name, s]) => ({ name, description: s.description }));
    return this.#db.prepare('SELECT name, description FROM settings_secrets ORDER BY rowid').all() as StoredSecret[];
  }

  /** Undefined when there is no such secret, or when its stored value cannot be opened (the key changed). */
  get(name: string): string | undefined {
    if (!this.#sealer) return this.#memory.get(name)?.value;
    const row = this.#db.prepare('SELECT sealed FROM settings_secrets WHERE name = ?').get(name) as { sealed: string } | undefined;
    if (!row) return undefined;
    const opened = this.#sealer.open(row.sealed, sealContext(name))?.secrets[name];
    if (opened === undefined) this.#log.warn({ secretName: name }, `cannot open a stored secret: ${UNOPENABLE_HINT}`);
    return opened;
  }

  put(name: string, value: string, description: string | null): void {
    if (!this.#sealer) {
      this.#memory.set(name, { value, description });
      return;
    }
    this.#db
      .prepare('INSERT INTO settings_secrets (name, description, sealed, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET description = excluded.description, sealed = excluded.sealed, updated_at = excluded.updated_at')
      .run(name, description, this.#sealer.seal({ secrets: { [name]: value } }, sealContext(name)), new Date().toISOString());
  }

  /** False when there was no such secret. */
  delete(name: string): boolean {
    if (!this.#sealer) return this.#memory.delete(name);
    return this.#db.prepare('DELETE FROM settings_secrets WHERE name = ?').run(name).changes > 0;
  }

  /**
   * A hand-over brings the key the runtime will start this server with from now on: every stored
   * value is sealed again with it (and values held in memory for want of a key are written), so
   * the next start can open them. A value the old key cannot open is dropped, with a warning.
   */
  setSealer(next: SecretSealer): void {
    const values = new Map<string, { value: string; description: string | null }>();
    for (const { name, description } of this.list()) {
      const value = this.get(name);
      if (value !== undefined) values.set(name, { value, description });
    }
    this.#sealer = next;
    this.#db.transaction(() => {
      this.#db.prepare('DELETE FROM settings_secrets').run();
      for (const [name, s] of values) this.put(name, s.value, s.description);
    })();
    this.#memory.clear();
  }
}

interface WorkspacesDoc {
  workspaces: { id: string; name: string; path: string; parentPath?: string }[];
  workspace_parents: WorkspaceParentItem[];
}

/** The GUI's saved workspaces and workspace parents, deduplicated by path, in the order added. */
export class WorkspacesStore {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  load(): WorkspacesListResponse {
    const doc = this.#read();
    return { workspaces: doc.workspaces, workspaceParents: doc.workspace_parents };
  }

  addWorkspaces(items: WorkspaceItem[]): WorkspacesListResponse {
    return this.#addTo('workspaces', items, (w) => {
      const parentPath = w.parentPath ?? w.parent_path ?? undefined;
      return { id: w.id, name: w.name, path: w.path, ...(parentPath !== undefined && parentPath !== null ? { parentPath } : {}) };
    });
  }

  addParents(items: WorkspaceParentItem[]): WorkspacesListResponse {
    return this.#addTo('workspace_parents', items, (p) => ({ id: p.id, name: p.name, path: p.path }));
  }

  /** False when no workspace had that path. */
  removeWorkspace(path: string): boolean {
    return this.#removeFrom('workspaces', path);
  }

  removeParent(path: string): boolean {
    return this.#removeFrom('workspace_parents', path);
  }

  /** Appends the items whose path the list does not hold yet (the first of a path given twice). */
  #addTo<K extends keyof WorkspacesDoc, I extends { path: string }>(key: K, items: I[], entry: (item: I) => WorkspacesDoc[K][number]): WorkspacesListResponse {
    return this.#update((doc) => {
      const list = doc[key] as WorkspacesDoc[K][number][];
      const seen = new Set(list.map((x) => x.path));
      for (const item of items) {
        if (seen.has(item.path)) continue;
        seen.add(item.path);
        list.push(entry(item));
      }
    });
  }

  /** False when no entry of the list had that path. */
  #removeFrom(key: keyof WorkspacesDoc, path: string): boolean {
    let removed = false;
    this.#update((doc) => {
      const list: { path: string }[] = doc[key];
      const kept = list.filter((x) => x.path !== path);
      removed = kept.length !== list.length;
      (doc as Record<keyof WorkspacesDoc, { path: string }[]>)[key] = kept;
    });
    return removed;
  }

  #read(): WorkspacesDoc {
    const row = this.#db.prepare("SELECT json FROM settings_documents WHERE name = 'workspaces'").get() as { json: string } | undefined;
    return row ? (JSON.parse(row.json) as WorkspacesDoc) : { workspaces: [], workspace_parents: [] };
  }

  /** Read, change and write in one transaction (better-sqlite3 is synchronous: no request interleaves). */
  #update(change: (doc: WorkspacesDoc) => void): WorkspacesListResponse {
    return this.#db.transaction(() => {
      const doc = this.#read();
      change(doc);
      this.#db.prepare("INSERT INTO settings_documents (name, json) VALUES ('workspaces', ?) ON CONFLICT (name) DO UPDATE SET json = excluded.json").run(JSON.stringify(doc));
      return { workspaces: doc.workspaces, workspaceParents: doc.workspace_parents };
    })();
  }
}

/** The sealing context of the settings document's secrets: they open nowhere else. */
export const SETTINGS_SEAL_CONTEXT = 'settings-document';
/** 1.58's 409 detail when the stored settings hold secrets no configured key opens. */
export const SETTINGS_UNOPENABLE = 'Settings file is corrupted or encrypted with a different key: restore that key as OH_SECRET_KEY or add it to OH_PREVIOUS_SECRET_KEYS';
const SECRET_LLM_FIELDS = new Set(LLM_SECRET_FIELDS);

/**
 * The stored agent and conversation settings (GET/PATCH /api/settings): one JSON document in
 * settings_documents, its secret values taken out and written sealed beside it (as the named
 * secrets; memory only without a secret key). A sealed part the key cannot open is dropped with a
 * warning: the rest of the settings still load.
 */
export class SettingsDocStore {
  readonly #db: Db;
  readonly #log: Logger;
  readonly #defaults: () => SettingsDoc;
  #sealer: SecretSealer | undefined;
  /** Secret values by path (JSON of the path) while there is no secret key. */
  #memory: Record<string, string> = {};

  constructor(db: Db, sealer: SecretSealer | undefined, log: Logger, defaults: () => SettingsDoc) {
    this.#db = db;
    this.#sealer = sealer;
    this.#log = log;
    this.#defaults = defaults;
  }

  load(): SettingsDoc {
    return this.#load().doc;
  }

  /** `unopenable`: the stored secrets are there but no configured key opens them (they are left out of `doc`). */
  #load(): { doc: SettingsDoc; unopenable: boolean } {
    const row = this.#db.prepare("SELECT json FROM settings_documents WHERE name = 'settings'").get() as { json: string } | undefined;
    if (!row) return { doc: this.#defaults(), unopenable: false };
    const stored = JSON.parse(row.json) as { doc: SettingsDoc; sealed: string | null };
    let secrets = this.#memory;
    let unopenable = false;
    if (this.#sealer && stored.sealed) {
      const opened = this.#sealer.open(stored.sealed, SETTINGS_SEAL_CONTEXT);
      if (!opened) this.#log.warn(`cannot open the stored settings secrets, they are left out: ${UNOPENABLE_HINT}`);
      unopenable = !opened;
      secrets = opened?.secrets ?? {};
    }
    const doc = stored.doc;
    for (const [path, value] of Object.entries(secrets)) {
      const keys = JSON.parse(path) as string[];
      let node = doc as unknown as Record<string, unknown> | undefined;
      for (const k of keys.slice(0, -1)) node = node?.[k] as Record<string, unknown> | undefined;
      // A path whose holder is gone (a row edited by hand) is skipped, not resurrected.
      if (node && keys.at(-1)! in node) node[keys.at(-1)!] = value;
    }
    // Secrets that could not be opened are left out, not answered as null where a string belongs.
    for (const s of Object.values(doc.agent_settings.mcp_config)) {
      for (const map of [s.env, s.headers]) for (const [k, v] of Object.entries(map ?? {})) if (v === null) delete map![k];
    }
    for (const [k, v] of Object.entries(doc.agent_settings.llm)) if (v === null && SECRET_LLM_FIELDS.has(k)) delete doc.agent_settings.llm[k];
    return { doc: withAgentDefaults(doc), unopenable };
  }

  /** The active meta-profile's name, read without opening the secrets (a seeded agent profile's routing). */
  activeMetaProfile(): string | null {
    const row = this.#db.prepare("SELECT json FROM settings_documents WHERE name = 'settings'").get() as { json: string } | undefined;
    return row ? ((JSON.parse(row.json) as { doc: SettingsDoc }).doc.active_meta_profile ?? null) : null;
  }

  /** Read, change (it may throw to refuse: nothing is written) and write in one transaction. */
  update(change: (doc: SettingsDoc) => void): SettingsDoc {
    return this.#db.transaction(() => {
      const { doc, unopenable } = this.#load();
      // Writing now would replace the sealed secrets with none (1.58 refuses the same way, 409).
      if (unopenable) throw new Conflict(SETTINGS_UNOPENABLE);
      change(doc);
      this.#write(doc);
      return doc;
    })();
  }

  /** A hand-over's new key: the secrets are sealed again with it (or written, held in memory until now). */
  setSealer(next: SecretSealer): void {
    const { doc, unopenable } = this.#load();
    // What the old key cannot open stays as stored (and unreadable, as it was): never replaced by nothing.
    if (unopenable) {
      this.#sealer = next;
      return;
    }
    this.#sealer = next;
    this.#write(doc);
    this.#memory = {};
  }

  #write(doc: SettingsDoc): void {
    const secrets = Object.fromEntries(secretPaths(doc).map(({ path, value }) => [JSON.stringify(path), value]));
    let sealed: string | null = null;
    if (this.#sealer) sealed = Object.keys(secrets).length ? this.#sealer.seal({ secrets }, SETTINGS_SEAL_CONTEXT) : null;
    else this.#memory = secrets;
    // The secret fields stay in the stored document as null, so load() knows where they go back.
    const json = JSON.stringify({ doc: withSecretsReplaced(doc, null), sealed });
    this.#db.prepare("INSERT INTO settings_documents (name, json) VALUES ('settings', ?) ON CONFLICT (name) DO UPDATE SET json = excluded.json").run(json);
  }
}
