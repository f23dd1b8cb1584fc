// The files of a Kubernetes sandbox's conversation directories (browser recordings; the agent
// server's `<data dir>/conversations/<id>/`), kept in the object store when the sandbox is deleted,
// as the embedded runtime keeps them (src/runtime/process/archive.ts): under
// conversations/<id>/files/, deleted with the conversation and handed to its owner in the download.
//
// The archive Pod has no store credentials, only presigned PUT URLs for fixed keys, so it uploads
// the directories as one tar.gz (internal/conversation-files/<sandbox>-<stamp>.tar.gz) and the
// controller, which has the credentials, unpacks it here. The tar comes from a volume the sandbox
// wrote: it is read as untrusted input — regular files only (no links, devices or directories are
// followed or made), every path segment reduced to a key-safe one, nothing written to disk, each
// file bounded in size, and only for conversations that still exist and were placed on this sandbox
// (`keep`), so a sandbox cannot plant files in another user's conversation.
import { createGunzip } from 'node:zlib';
import { pipeline } from 'node:stream/promises';
import { extract } from 'tar-stream';
import { conversationFileKey, safeSegment } from '../../objstore/keys.ts';
import type { ObjectStore } from '../../objstore/types.ts';
import type { Logger } from '../../util/log.ts';

/** Larger files stay in the internal workspace archive only (the controller holds one file in memory at a time). */
export const MAX_CONVERSATION_FILE_BYTES = 256 * 1024 * 1024;

export interface UnpackOptions {
  /** Whether a conversation exists and belongs to this sandbox: its files are kept only then. */
  keep: (conversationId: string) => Promise<boolean>;
  maxFileBytes?: number;
  log?: Logger;
}

export interface Unpacked {
  stored: number;
  skipped: number;
}

/**
 * Stores the conversation files of the upload at `uploadKey` and deletes the upload. Idempotent: a
 * second run after a failure stores the same keys again. No upload under that key (a sandbox without
 * conversation directories) is nothing to do. Any store failure throws, the upload stays, and the
 * caller retries.
 */
export async function unpackConversationFiles(objects: ObjectStore, uploadKey: string, o: UnpackOptions): Promise<Unpacked> {
  const out: Unpacked = { stored: 0, skipped: 0 };
  const body = await objects.open(uploadKey);
  if (!body) return out;
  const max = o.maxFileBytes ?? MAX_CONVERSATION_FILE_BYTES;
  const kept = new Map<string, boolean>();
  const tar = extract();
  const feeding = pipeline(body, createGunzip(), tar);
  feeding.catch(() => undefined); // awaited below; a failure inside the loop must not go unhandled
  for await (const entry of tar) {
    const { name, type, size = 0 } = entry.header;
    // Paths relative to the conversations directory: <id>/<path...>, as `tar -C <dir> .` writes them.
    const segments = name.split('/').filter((s) => s !== '' && s !== '.');
    const [id, ...rest] = segments;
    const relevant = type === 'file' && id !== undefined && rest.length > 0 && !segments.includes('..');
    if (relevant && !kept.has(id)) kept.set(id, await o.keep(id));
    const keep = relevant && kept.get(id) === true;
    if (!keep || size > max) {
      if (keep) o.log?.warn({ conversation: id, file: rest.join('/'), bytes: size }, 'conversation file too large for the object store copy; it stays in the internal workspace archive');
      if (relevant) out.skipped++;
      entry.resume();
      continue;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of entry) chunks.push(chunk as Buffer);
    // The id is a Conversation's name (keep() found it), so already key-safe.
    await objects.put(conversationFileKey(id, rest.map(safeSegment).join('/')), Buffer.concat(chunks));
    out.stored++;
  }
  await feeding;
  await objects.delete(uploadKey);
  return out;
}
