import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { minFreeDiskBytes } from '../../util/disk-space.ts';
import { checkFreeDisk } from './disk.ts';

describe('preflight free disk check', () => {
  it('passes above the minimum and fails below it, with the figures and the fix', () => {
    expect(checkFreeDisk(tmpdir(), 0)).toMatchObject({ ok: true, detail: expect.stringMatching(/^\d+ MiB free of \d+ MiB \(minimum 0 MiB\)$/) });
    const low = checkFreeDisk(tmpdir(), Number.MAX_SAFE_INTEGER);
    expect(low).toMatchObject({ ok: false, detail: expect.stringContaining('below the minimum'), fix: expect.stringContaining('AGENTYARD_MIN_FREE_DISK_MB') });
  });

  it('fails for a directory that is not there', () => {
    expect(checkFreeDisk(join(tmpdir(), 'agentyard-no-such-dir', 'x'), 0)).toMatchObject({ ok: false, detail: expect.stringContaining('cannot be examined') });
  });

  it('reads the minimum from AGENTYARD_MIN_FREE_DISK_MB and refuses nonsense', () => {
    expect(minFreeDiskBytes({})).toBe(512 * 1024 * 1024);
    expect(minFreeDiskBytes({ AGENTYARD_MIN_FREE_DISK_MB: '2.5' })).toBe(2.5 * 1024 * 1024);
    expect(() => minFreeDiskBytes({ AGENTYARD_MIN_FREE_DISK_MB: 'lots' })).toThrow('AGENTYARD_MIN_FREE_DISK_MB must be a number of MiB >= 0');
  });
});
