// The trajectory download (GET /api/file/download-trajectory/{id}): OpenHands zips the conversation's
// persistence directory; agentyard keeps events and state in SQLite, so the zip is laid out the same
// way from them: `meta.json` (the stored start request and the conversation's own fields),
// `base_state.json` (ConversationInfo), `events/event-<index>-<id>.json` in order, plus the files of
// the conversation's own directory (browser recordings). No secret is in any of them: the stored
// request has neither secret values nor the model key, and events are masked when recorded.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { strToU8, zipSync, type Zippable } from 'fflate';
import type { ConversationRuntime } from './runtime.ts';

function filesUnder(dir: string): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true, recursive: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

const json = (value: unknown) => strToU8(JSON.stringify(value, null, 2));

export function trajectoryZip(rt: ConversationRuntime): Uint8Array {
  const row = rt.row;
  const files: Zippable = {};
  for (const path of filesUnder(rt.persistenceDir)) files[relative(rt.persistenceDir, path)] = readFileSync(path);
  files['meta.json'] = json({
    ...row.request,
    id: row.id,
    title: row.title,
    tags: row.tags,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
    forked_from_conversation_id: row.forkedFromConversationId,
    forked_from_event_id: row.forkedFromEventId,
  });
  files['base_state.json'] = json(rt.info());
  rt.events().forEach((e, i) => (files[`events/event-${String(i).padStart(5, '0')}-${e.id}.json`] = json(e)));
  return zipSync(files);
}
