// A real small filesystem that tests fill and free: a tmpfs mounted in a temp directory (needs
// root, or CAP_SYS_ADMIN). Where mounting is not permitted, `mountSmallFs` says why and the suite
// skips with that message.
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface SmallFs {
  path: string;
  /** Writes a filler file until the filesystem refuses (ENOSPC); returns its size in bytes. */
  fill(): number;
  /** Removes the filler file: space is back. */
  free(): void;
  unmount(): void;
}

/** A mounted tmpfs of `sizeMiB`, or the reason it could not be mounted. */
export function mountSmallFs(sizeMiB: number): SmallFs | { skip: string } {
  const path = mkdtempSync(join(tmpdir(), 'agentyard-small-fs-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMiB}m,mode=0700`, 'tmpfs', path], { stdio: 'pipe' });
  } catch (err) {
    rmSync(path, { recursive: true, force: true });
    const why = (err as { stderr?: Buffer }).stderr?.toString().trim() || (err as Error).message;
    return { skip: `cannot mount a tmpfs for the full-disk tests (needs root or CAP_SYS_ADMIN): ${why}` };
  }
  const filler = join(path, 'filler');
  return {
    path,
    fill() {
      const fd = openSync(filler, 'a');
      let written = 0;
      try {
        // Big chunks first, then single pages, so that no usable page is left.
        for (const size of [1 << 20, 1 << 16, 4096, 512]) {
          const chunk = Buffer.alloc(size, 0x61);
          for (;;) {
            try {
              written += writeSync(fd, chunk);
            } catch (err) {
              if ((err as { code?: string }).code === 'ENOSPC') break;
              throw err;
            }
          }
        }
      } finally {
        closeSync(fd);
      }
      return written;
    },
    free() {
      rmSync(filler, { force: true });
    },
    unmount() {
      execFileSync('umount', ['-l', path], { stdio: 'pipe' });
      rmSync(path, { recursive: true, force: true });
    },
  };
}
