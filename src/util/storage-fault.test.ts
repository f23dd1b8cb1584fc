import { describe, expect, it } from 'vitest';
import { describeStorageFault, isStorageFault, storageFaultOf } from './storage-fault.ts';

const coded = (code: string, cause?: unknown) => Object.assign(new Error('boom'), { code }, cause ? { cause } : {});

describe('storage faults', () => {
  it('recognises a full disk and I/O errors by code, also as the cause of another error', () => {
    expect(storageFaultOf(coded('SQLITE_FULL'))).toEqual({ code: 'SQLITE_FULL', kind: 'full' });
    expect(storageFaultOf(coded('ENOSPC'))).toEqual({ code: 'ENOSPC', kind: 'full' });
    expect(storageFaultOf(coded('53100'))).toEqual({ code: '53100', kind: 'full' });
    expect(storageFaultOf(coded('SQLITE_IOERR_WRITE'))).toEqual({ code: 'SQLITE_IOERR_WRITE', kind: 'io' });
    expect(storageFaultOf(new Error('wrapped', { cause: coded('SQLITE_IOERR') }))).toEqual({ code: 'SQLITE_IOERR', kind: 'io' });
  });

  it('leaves every other error alone, whatever its message says', () => {
    expect(isStorageFault(coded('SQLITE_CONSTRAINT_UNIQUE'))).toBe(false);
    expect(isStorageFault(new Error('database or disk is full'))).toBe(false);
    expect(isStorageFault(undefined)).toBe(false);
  });

  it('says what to do', () => {
    expect(describeStorageFault({ code: 'SQLITE_FULL', kind: 'full' })).toBe('the disk is full (SQLITE_FULL); free disk space and it recovers by itself');
  });
});
