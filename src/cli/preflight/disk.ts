// Preflight's disk check: a data directory with less free space than AGENTYARD_MIN_FREE_DISK_MB
// fails, before a full disk starts refusing writes (507) at run time.
import { diskSpace, MIN_FREE_DISK_ENV } from '../../util/disk-space.ts';
import type { CheckResult } from './checks.ts';

const MiB = 1024 * 1024;
const mib = (bytes: number) => `${Math.floor(bytes / MiB)} MiB`;

export function checkFreeDisk(dir: string, minFreeBytes: number): Omit<CheckResult, 'name'> {
  const d = diskSpace(dir, minFreeBytes);
  if (!d) return { ok: false, detail: 'cannot be examined (missing or not readable)', fix: `Create ${dir}, or set AGENTYARD_DATA_DIR to where agentyard keeps its data` };
  const what = `${mib(d.free_bytes)} free of ${mib(d.total_bytes)}`;
  return d.low
    ? { ok: false, detail: `${what}, below the minimum of ${mib(minFreeBytes)}`, fix: `Free disk space or grow the volume (the minimum is ${MIN_FREE_DISK_ENV})` }
    : { ok: true, detail: `${what} (minimum ${mib(minFreeBytes)})` };
}
