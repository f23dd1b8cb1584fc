// What a deleted process sandbox leaves behind, into the object store (src/objstore), before its
// directory is removed:
// - the internal workspace archive (spec part 3): a tar.gz of the workspace for debugging, support
//   and audit, under internal/ — no route serves it;
// - the files of each conversation's own directory in the agent server's data (browser
//   recordings), under conversations/<id>/files/, so they outlive the sandbox and are deleted
//   with the conversation. Conversations already deleted are skipped (`keepConversation`).
// Any store failure throws: the caller keeps the sandbox directory and the delete is retried, so a
// store that is briefly down delays the cleanup and loses nothing.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { promisify } from 'node:util';
import { conversationFileKey, keyStamp, safeSegment, workspaceArchiveKey } from '../../objstore/keys.ts';
import type { ObjectStore } from '../../objstore/types.ts';

const run = promisify(execFile);

export interface PreserveOptions {
  objects: ObjectStore;
  /** Whether a conversation still exists (its files are worth keeping); default: all are. */
  keepConversation?: (conversationId: string) => Promise<boolean>;
  now?: () => Date;
}

export interface Preserved {
  archiveKey?: string;
  conversationFiles: number;
}


export async function preserveSandboxData(sandboxDir: string, name: string, o: PreserveOptions): Promise<Preserved> {
  const out: Preserved = { conversationFiles: 0 };
  if (existsSync(join(sandboxDir, 'workspace'))) {
    // Beside the workspace, not in it, and removed with the sandbox directory.
    const tmp = join(sandboxDir, '.workspace-archive.tar.gz');
    try {
      await run('tar', ['-czf', tmp, '-C', sandboxDir, 'workspace']);
      out.archiveKey = workspaceArchiveKey(name, keyStamp((o.now ?? (() => new Date()))()));
      await o.objects.putFile(out.archiveKey, tmp);
    } finally {
      await rm(tmp, { force: true });
    }
  }
  const conversations = join(sandboxDir, 'state', 'conversations');
  for (const id of existsSync(conversations) ? readdirSync(conversations) : []) {
    if (o.keepConversation && !(await o.keepConversation(id))) continue;
    const dir = join(conversations, id);
    for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
      if (!e.isFile()) continue;
      const path = join(e.parentPath, e.name);
      const rel = relative(dir, path).split(sep).map(safeSegment).join('/');
      await o.objects.putFile(conversationFileKey(id, rel), path);
      out.conversationFiles++;
    }
  }
  return out;
}
