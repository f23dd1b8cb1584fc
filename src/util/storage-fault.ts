// Storage faults: the disk is full or failing. These are conditions of the machine, not bugs: the
// process stays up, answers 507 to writes while they last, and recovers by itself once a write
// succeeds again. Recognised by error code (SQLite's extended result codes, Node's errno codes,
// PostgreSQL's SQLSTATE), never by message text.

/** What a storage fault is, in words a user can act on. */
export interface StorageFault {
  /** The code as reported: `SQLITE_FULL`, `SQLITE_IOERR_WRITE`, `ENOSPC`, `53100`, ... */
  code: string;
  /** `full` when freeing disk space cures it, `io` for an I/O error. */
  kind: 'full' | 'io';
}

const FULL = new Set(['SQLITE_FULL', 'ENOSPC', 'EDQUOT', '53100' /* PostgreSQL disk_full */]);
const IO = new Set(['EIO', 'EROFS', 'SQLITE_READONLY_DBMOVED', '58030' /* PostgreSQL io_error */]);

/** The storage fault behind `err` (or its cause), or undefined for any other error. */
export function storageFaultOf(err: unknown): StorageFault | undefined {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code !== 'string') continue;
    if (FULL.has(code)) return { code, kind: 'full' };
    // SQLITE_IOERR and its extended codes (SQLITE_IOERR_WRITE, _FSYNC, _SHMSIZE, ...).
    if (code === 'SQLITE_IOERR' || code.startsWith('SQLITE_IOERR_') || IO.has(code)) return { code, kind: 'io' };
  }
  return undefined;
}

export function isStorageFault(err: unknown): boolean {
  return storageFaultOf(err) !== undefined;
}

/** One sentence for a ConversationErrorEvent, a 507 body or a log line. */
export function describeStorageFault(f: StorageFault): string {
  return f.kind === 'full'
    ? `the disk is full (${f.code}); free disk space and it recovers by itself`
    : `the disk failed to read or write (${f.code}); check the disk, it recovers by itself once writes succeed`;
}
