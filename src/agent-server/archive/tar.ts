// A workspace directory as a gzip tarball, streamed to a file (never held in memory): every
// directory and regular file under `root` that the excludes keep, links neither followed nor
// archived (so nothing outside `root` gets in), members named `<root name>/<relative path>`, and
// a last member `<root name>/archive_manifest.json` saying what was captured (unless the workspace
// has a file of that name: the user's data wins). A file that changes size while it is read is
// padded or cut to the size its header declared, so the stream never goes out of step.
import { createWriteStream } from 'node:fs';
import { lstat, open, readdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import type { Pack } from 'tar-stream';
import { compileExcludes, isSensitiveGitInternal } from './excludes.ts';

export const ARCHIVE_MANIFEST_NAME = 'archive_manifest.json';

const CHUNK = 64 * 1024;

/** Adds one regular file (sized from the open descriptor); false when it is gone or not regular. */
async function addFile(pack: Pack, path: string, name: string): Promise<number | undefined> {
  const fh = await open(path, 'r').catch(() => undefined);
  if (!fh) return undefined;
  try {
    const st = await fh.stat();
    if (!st.isFile()) return undefined;
    await new Promise<void>((resolve, reject) => {
      const entry = pack.entry({ name, size: st.size, mode: st.mode & 0o7777, mtime: st.mtime, type: 'file' }, (err) => (err ? reject(err) : resolve())) as unknown as NodeJS.WritableStream;
      void (async () => {
        let left = st.size;
        const buf = Buffer.alloc(CHUNK);
        while (left > 0) {
          const want = Math.min(CHUNK, left);
          const { bytesRead } = await fh.read(buf, 0, want, null);
          // Shrunk under us: NUL padding up to the declared size.
          const chunk = bytesRead === 0 ? Buffer.alloc(want) : Buffer.from(buf.subarray(0, bytesRead));
          left -= chunk.length;
          if (!entry.write(chunk)) await new Promise<void>((r) => entry.once('drain', () => r()));
        }
        entry.end();
      })().catch(reject);
    });
    return st.size;
  } finally {
    await fh.close();
  }
}

export async function writeTarGz(root: string, output: string, excludes: readonly string[]): Promise<{ fileCount: number; totalBytes: number }> {
  const excluded = compileExcludes(excludes);
  const top = basename(root);
  // Loaded on the first archive, not at start-up (issue #16: the agent server's idle memory).
  const { pack: tarPack } = await import('tar-stream');
  const pack = tarPack();
  const written = pipeline(pack, createGzip(), createWriteStream(output));
  let fileCount = 0;
  let totalBytes = 0;
  let manifestTaken = false;
  const fill = async () => {
    const queue: string[][] = [[]];
    while (queue.length) {
      const parts = queue.shift()!;
      const dir = join(root, ...parts);
      const st = await lstat(dir).catch(() => undefined);
      if (!st?.isDirectory()) continue;
      await new Promise<void>((ok, fail) => pack.entry({ name: [top, ...parts].join('/'), type: 'directory', mode: st.mode & 0o7777, mtime: st.mtime }, (err) => (err ? fail(err) : ok())));
      const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
      entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const e of entries) {
        const rel = [...parts, e.name];
        if (e.isDirectory()) {
          if (!excluded(rel, true) && !isSensitiveGitInternal(rel)) queue.push(rel);
        } else if (e.isFile() && !excluded(rel, false) && !isSensitiveGitInternal(rel)) {
          const size = await addFile(pack, join(dir, e.name), [top, ...rel].join('/'));
          if (size === undefined) continue;
          if (rel.length === 1 && e.name === ARCHIVE_MANIFEST_NAME) manifestTaken = true;
          fileCount++;
          totalBytes += size;
        }
      }
    }
    if (!manifestTaken) {
      const manifest = Buffer.from(JSON.stringify({ excludes, file_count: fileCount, format: 'tar.gz', source: top, total_bytes: totalBytes }, null, 2));
      pack.entry({ name: `${top}/${ARCHIVE_MANIFEST_NAME}`, size: manifest.length }, manifest);
    }
    pack.finalize();
  };
  await Promise.all([fill().catch((err: unknown) => pack.destroy(err as Error)), written]);
  return { fileCount, totalBytes };
}
