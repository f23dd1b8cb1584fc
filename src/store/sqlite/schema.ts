// The SQLite layout behind SqliteStore: current objects, an append-only change log that watches
// read from (so their order is exactly the commit order), two counters in `meta`, and the objects'
// labels as rows, so a list by label reads the matching objects only. The version in `meta` moves
// by MIGRATIONS, each in one transaction; never edit a released one, append.
import type { Database } from 'better-sqlite3';

const DDL = `
CREATE TABLE IF NOT EXISTS meta (
  key   TEXT PRIMARY KEY,
  value INTEGER NOT NULL
) STRICT;
INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', 1), ('rv', 0), ('compacted_rv', 0);

CREATE TABLE IF NOT EXISTS objects (
  api_version TEXT NOT NULL,
  kind        TEXT NOT NULL,
  namespace   TEXT NOT NULL,
  name        TEXT NOT NULL,
  rv          INTEGER NOT NULL,
  body        TEXT NOT NULL,
  PRIMARY KEY (api_version, kind, namespace, name)
) STRICT, WITHOUT ROWID;

-- One row per write. body is the object after the write (for DELETED, its last state);
-- prev_body is kept only when the write changed labels, because only then can a watch with a
-- label selector see the object leave its selection (a DELETED carrying the previous content).
CREATE TABLE IF NOT EXISTS changes (
  rv          INTEGER PRIMARY KEY,
  api_version TEXT NOT NULL,
  kind        TEXT NOT NULL,
  namespace   TEXT NOT NULL,
  name        TEXT NOT NULL,
  type        TEXT NOT NULL CHECK (type IN ('ADDED', 'MODIFIED', 'DELETED')),
  body        TEXT NOT NULL,
  prev_body   TEXT
) STRICT;
CREATE INDEX IF NOT EXISTS changes_by_kind ON changes (api_version, kind, rv);

-- Per kind, the newest change-log entry compaction has dropped. A watch is Gone only when it has
-- not yet seen an entry of its own kind that is no longer there, so heavy writes to one kind
-- cannot invalidate a watch on another.
CREATE TABLE IF NOT EXISTS compacted (
  api_version TEXT NOT NULL,
  kind        TEXT NOT NULL,
  rv          INTEGER NOT NULL,
  PRIMARY KEY (api_version, kind)
) STRICT, WITHOUT ROWID;
`;

/** Migration n brings the file from version n to n + 1 (version 1 is DDL above). */
const MIGRATIONS: { readonly [from: number]: string } = {
  // 1 → 2: one row per label of each object (issue #16). The facade lists a user's resources by
  // their owner label; without this every list decoded the whole namespace, every user's objects,
  // before filtering. Kept in the same transaction as the object row.
  1: `
  CREATE TABLE object_labels (
    api_version TEXT NOT NULL,
    kind        TEXT NOT NULL,
    key         TEXT NOT NULL,
    value       TEXT NOT NULL,
    namespace   TEXT NOT NULL,
    name        TEXT NOT NULL,
    PRIMARY KEY (api_version, kind, key, value, namespace, name)
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX object_labels_by_object ON object_labels (api_version, kind, namespace, name);
  INSERT INTO object_labels (api_version, kind, key, value, namespace, name)
    SELECT o.api_version, o.kind, l.key, l.value, o.namespace, o.name FROM objects o, json_each(o.body, '$.metadata.labels') l;
  `,
};

export const SCHEMA_VERSION = 2;

export function openSchema(db: Database): void {
  // WAL lets readers (list/watch) run while a write commits; NORMAL sync is durable across
  // process crashes in WAL mode and only risks the last transactions on power loss.
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  db.exec(DDL);
  const version = () => db.prepare(`SELECT value FROM meta WHERE key = 'schema_version'`).pluck().get() as number;
  if (version() > SCHEMA_VERSION) throw new Error(`SqliteStore: database schema version ${version()} is newer than this build understands (${SCHEMA_VERSION})`);
  for (let v = version(); v < SCHEMA_VERSION; v = version()) {
    db.transaction(() => {
      // Read again inside the write lock: another opener of the same file may have migrated it.
      if (version() !== v) return;
      db.exec(MIGRATIONS[v]!);
      db.prepare(`UPDATE meta SET value = ? WHERE key = 'schema_version'`).run(v + 1);
    }).immediate();
  }
}

/** Parameters of the list-by-label statements; `values` is a JSON array (Equals, In) and unused by Exists. */
export interface LabelQuery {
  apiVersion: string;
  kind: string;
  key: string;
  values?: string;
  namespace?: string;
}

export interface ChangeRow {
  rv: number;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  body: string;
  prev_body: string | null;
}

/** Prepared statements, compiled once per connection. */
export function statements(db: Database) {
  return {
    counter: db.prepare<[string], number>(`SELECT value FROM meta WHERE key = ?`).pluck(),
    nextRv: db.prepare<[], number>(`UPDATE meta SET value = value + 1 WHERE key = 'rv' RETURNING value`).pluck(),
    setCompacted: db.prepare<[number]>(`UPDATE meta SET value = ? WHERE key = 'compacted_rv'`),
    getObject: db
      .prepare<[string, string, string, string], string>(
        `SELECT body FROM objects WHERE api_version = ? AND kind = ? AND namespace = ? AND name = ?`,
      )
      .pluck(),
    listAll: db
      // The API server lists in etcd key order, i.e. by the string "namespace/name".
      .prepare<[string, string], string>(`SELECT body FROM objects WHERE api_version = ? AND kind = ? ORDER BY namespace || '/' || name`)
      .pluck(),
    listNamespace: db
      .prepare<[string, string, string], string>(
        `SELECT body FROM objects WHERE api_version = ? AND kind = ? AND namespace = ? ORDER BY name`,
      )
      .pluck(),
    // By one label requirement (the caller matches the whole selector and sorts): a JSON array of
    // values (Equals, In), or the key alone (Exists). The subquery seeks object_labels' primary key
    // (`+namespace` keeps the planner off the by-object index); a join or an ORDER BY here measured
    // 2-3x slower, as SQLite (built with STAT4) prepares such a statement again on every bind.
    listByLabelValuesAll: db
      .prepare<[LabelQuery], string>(
        `SELECT body FROM objects WHERE api_version = @apiVersion AND kind = @kind AND (namespace, name) IN
           (SELECT namespace, name FROM object_labels WHERE api_version = @apiVersion AND kind = @kind AND key = @key AND value IN (SELECT value FROM json_each(@values)))`,
      )
      .pluck(),
    listByLabelValuesNamespace: db
      .prepare<[LabelQuery], string>(
        `SELECT body FROM objects WHERE api_version = @apiVersion AND kind = @kind AND namespace = @namespace AND name IN
           (SELECT name FROM object_labels WHERE api_version = @apiVersion AND kind = @kind AND key = @key AND value IN (SELECT value FROM json_each(@values)) AND namespace = @namespace)`,
      )
      .pluck(),
    listByLabelKeyAll: db
      .prepare<[LabelQuery], string>(
        `SELECT body FROM objects WHERE api_version = @apiVersion AND kind = @kind AND (namespace, name) IN
           (SELECT namespace, name FROM object_labels WHERE api_version = @apiVersion AND kind = @kind AND key = @key)`,
      )
      .pluck(),
    listByLabelKeyNamespace: db
      .prepare<[LabelQuery], string>(
        `SELECT body FROM objects WHERE api_version = @apiVersion AND kind = @kind AND namespace = @namespace AND name IN
           (SELECT name FROM object_labels WHERE api_version = @apiVersion AND kind = @kind AND key = @key AND +namespace = @namespace)`,
      )
      .pluck(),
    deleteLabels: db.prepare<[string, string, string, string]>(
      `DELETE FROM object_labels WHERE api_version = ? AND kind = ? AND namespace = ? AND name = ?`,
    ),
    putLabel: db.prepare<[string, string, string, string, string, string]>(
      `INSERT INTO object_labels (api_version, kind, key, value, namespace, name) VALUES (?, ?, ?, ?, ?, ?)`,
    ),
    // A cheap prefilter for garbage collection: uids are unique, so a body mentioning one is
    // almost always a dependent; the caller checks ownerReferences exactly.
    mentioning: db.prepare<[string, string], string>(`SELECT body FROM objects WHERE namespace = ? AND instr(body, ?) > 0`).pluck(),
    putObject: db.prepare<[string, string, string, string, number, string]>(
      `INSERT OR REPLACE INTO objects (api_version, kind, namespace, name, rv, body) VALUES (?, ?, ?, ?, ?, ?)`,
    ),
    deleteObject: db.prepare<[string, string, string, string]>(
      `DELETE FROM objects WHERE api_version = ? AND kind = ? AND namespace = ? AND name = ?`,
    ),
    appendChange: db.prepare<[number, string, string, string, string, string, string, string | null]>(
      `INSERT INTO changes (rv, api_version, kind, namespace, name, type, body, prev_body) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    compact: db.prepare<[number]>(`DELETE FROM changes WHERE rv <= ?`),
    markCompacted: db.prepare<[number]>(
      `INSERT INTO compacted (api_version, kind, rv)
       SELECT api_version, kind, MAX(rv) FROM changes WHERE rv <= ? GROUP BY api_version, kind
       ON CONFLICT (api_version, kind) DO UPDATE SET rv = excluded.rv`,
    ),
    compactedFor: db.prepare<[string, string], number>(`SELECT rv FROM compacted WHERE api_version = ? AND kind = ?`).pluck(),
    changesAll: db.prepare<[string, string, number, number], ChangeRow>(
      `SELECT rv, type, body, prev_body FROM changes WHERE api_version = ? AND kind = ? AND rv > ? ORDER BY rv LIMIT ?`,
    ),
    changesNamespace: db.prepare<[string, string, number, string, number], ChangeRow>(
      `SELECT rv, type, body, prev_body FROM changes
       WHERE api_version = ? AND kind = ? AND rv > ? AND namespace = ? ORDER BY rv LIMIT ?`,
    ),
  };
}

export type Statements = ReturnType<typeof statements>;
