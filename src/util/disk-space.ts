// Free space of the filesystem holding a directory, and whether it is below the configured
// minimum: what /health and preflight report before a full disk starts refusing writes.
import { statfsSync } from 'node:fs';

export const MIN_FREE_DISK_ENV = 'AGENTYARD_MIN_FREE_DISK_MB';
const DEFAULT_MIN_FREE_MB = 512;

export interface DiskSpace {
  path: string;
  /** Bytes an unprivileged writer may still use. */
  free_bytes: number;
  total_bytes: number;
  min_free_bytes: number;
  /** free_bytes < min_free_bytes. */
  low: boolean;
}

/** AGENTYARD_MIN_FREE_DISK_MB (a non-negative number), else 512 MiB. Throws on a malformed value. */
export function minFreeDiskBytes(env: NodeJS.ProcessEnv): number {
  const raw = env[MIN_FREE_DISK_ENV];
  if (raw === undefined || raw === '') return DEFAULT_MIN_FREE_MB * 1024 * 1024;
  const mb = Number(raw);
  if (!Number.isFinite(mb) || mb < 0) throw new Error(`${MIN_FREE_DISK_ENV} must be a number of MiB >= 0, got ${JSON.stringify(raw)}`);
  return Math.round(mb * 1024 * 1024);
}

/** Undefined when the path cannot be examined (it does not exist yet, or statfs is refused). */
export function diskSpace(path: string, minFreeBytes: number): DiskSpace | undefined {
  try {
    const s = statfsSync(path);
    const free = s.bavail * s.bsize;
    return { path, free_bytes: free, total_bytes: s.blocks * s.bsize, min_free_bytes: minFreeBytes, low: free < minFreeBytes };
  } catch {
    return undefined;
  }
}
