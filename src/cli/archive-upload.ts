// `agentyard archive-upload --dir <workspace>`: what the workspace archive Pod runs when the
// installation has an object store (src/runtime/kubernetes/desired.ts). Tars the directory into
// $TMPDIR and PUTs it to the presigned URL in AGENTYARD_ARCHIVE_UPLOAD_URL (S3 needs the length
// up front, hence the file). A store that is briefly down is retried with backoff; after that the
// exit code is 1 and the kubelet restarts the container (restartPolicy OnFailure). The URL is
// never printed: its signature is a write credential for that key.
import { execFile } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { withRetries, type RetryPolicy } from '../objstore/retry.ts';

const run = promisify(execFile);
export const ARCHIVE_UPLOAD_URL_ENV = 'AGENTYARD_ARCHIVE_UPLOAD_URL';

class HttpStatus extends Error {
  readonly status: number;
  constructor(status: number) {
    super(`the object store answered HTTP ${status}`);
    this.status = status;
  }
}

const transient = (err: unknown) => (err instanceof HttpStatus ? err.status >= 500 || err.status === 429 || err.status === 408 : true); // fetch's own errors are the network's

export async function archiveUpload(dir: string, url: string, retry: RetryPolicy = { attempts: 8, baseDelayMs: 500, maxDelayMs: 10_000 }): Promise<number> {
  const scratch = await mkdtemp(join(tmpdir(), 'archive-'));
  const file = join(scratch, 'workspace.tar.gz');
  try {
    await run('tar', ['-czf', file, '-C', dir, '.']);
    const { size } = await stat(file);
    await withRetries('uploading the workspace archive', retry, transient, async () => {
      const res = await fetch(url, { method: 'PUT', body: createReadStream(file) as unknown as ReadableStream, duplex: 'half', headers: { 'content-length': String(size) } } as RequestInit);
      await res.arrayBuffer();
      if (!res.ok) throw new HttpStatus(res.status);
    });
    return size;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

export async function runArchiveUploadCli(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { dir: { type: 'string' } }, strict: true });
  const url = env[ARCHIVE_UPLOAD_URL_ENV];
  if (!values.dir || !url) {
    process.stderr.write(`archive-upload: needs --dir and ${ARCHIVE_UPLOAD_URL_ENV}\n`);
    return 2;
  }
  try {
    const size = await archiveUpload(values.dir, url);
    process.stdout.write(`archive-upload: stored the workspace archive (${size} bytes)\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`archive-upload: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}
