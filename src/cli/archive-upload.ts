// `agentyard archive-upload --dir <workspace> [--conversations <dir>]`: what the workspace archive
// Pod runs when the installation has an object store (src/runtime/kubernetes/desired.ts). Tars the
// directory into $TMPDIR and PUTs it to the presigned URL in AGENTYARD_ARCHIVE_UPLOAD_URL (S3 needs
// the length up front, hence the file). Then, when given, the agent server's conversation
// directories (browser recordings) go the same way to AGENTYARD_CONVERSATION_FILES_UPLOAD_URL, for
// the controller to unpack into each conversation's files (src/runtime/kubernetes/conversation-files.ts);
// a sandbox without that directory uploads nothing there. A store that is briefly down is retried
// with backoff; after that the exit code is 1 and the kubelet restarts the container (restartPolicy
// OnFailure), which uploads both again. The URLs are never printed: their signatures are write
// credentials for those keys.
import { execFile } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { mkdtemp, realpath, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { withRetries, type RetryPolicy } from '../objstore/retry.ts';

const run = promisify(execFile);
export const ARCHIVE_UPLOAD_URL_ENV = 'AGENTYARD_ARCHIVE_UPLOAD_URL';
export const CONVERSATION_FILES_UPLOAD_URL_ENV = 'AGENTYARD_CONVERSATION_FILES_UPLOAD_URL';
/** Attempts per upload before the exit code 1 (default UPLOAD_RETRY's 8, over about 35 s). */
export const ARCHIVE_UPLOAD_ATTEMPTS_ENV = 'AGENTYARD_ARCHIVE_UPLOAD_ATTEMPTS';

class HttpStatus extends Error {
  readonly status: number;
  constructor(status: number) {
    super(`the object store answered HTTP ${status}`);
    this.status = status;
  }
}

const UPLOAD_RETRY: RetryPolicy = { attempts: 8, baseDelayMs: 500, maxDelayMs: 10_000 };

const transient = (err: unknown) => (err instanceof HttpStatus ? err.status >= 500 || err.status === 429 || err.status === 408 : true); // fetch's own errors are the network's

export async function archiveUpload(dir: string, url: string, retry: RetryPolicy = UPLOAD_RETRY, what = 'the workspace archive'): Promise<number> {
  const scratch = await mkdtemp(join(tmpdir(), 'archive-'));
  const file = join(scratch, 'workspace.tar.gz');
  try {
    await run('tar', ['-czf', file, '-C', dir, '.']);
    const { size } = await stat(file);
    await withRetries(`uploading ${what}`, retry, transient, async () => {
      const res = await fetch(url, { method: 'PUT', body: createReadStream(file) as unknown as ReadableStream, duplex: 'half', headers: { 'content-length': String(size) } } as RequestInit);
      await res.arrayBuffer();
      if (!res.ok) throw new HttpStatus(res.status);
    });
    return size;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * Whether `path` is a directory inside `root` once links are resolved: the volume is the sandbox's,
 * and a link planted there must not send another directory of this Pod to the store.
 */
async function insideDirectory(path: string, root: string): Promise<boolean> {
  const [real, realRoot] = await Promise.all([realpath(path).catch(() => undefined), realpath(root)]);
  return real !== undefined && real.startsWith(`${realRoot}/`) && (await stat(real)).isDirectory();
}

export async function runArchiveUploadCli(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { dir: { type: 'string' }, conversations: { type: 'string' } }, strict: true });
  const url = env[ARCHIVE_UPLOAD_URL_ENV];
  const filesUrl = env[CONVERSATION_FILES_UPLOAD_URL_ENV];
  if (!values.dir || !url || Boolean(values.conversations) !== Boolean(filesUrl)) {
    process.stderr.write(`archive-upload: needs --dir and ${ARCHIVE_UPLOAD_URL_ENV}, and --conversations together with ${CONVERSATION_FILES_UPLOAD_URL_ENV}\n`);
    return 2;
  }
  const attempts = env[ARCHIVE_UPLOAD_ATTEMPTS_ENV];
  if (attempts !== undefined && !/^[1-9][0-9]*$/.test(attempts)) {
    process.stderr.write(`archive-upload: ${ARCHIVE_UPLOAD_ATTEMPTS_ENV} must be a positive integer, got '${attempts}'\n`);
    return 2;
  }
  const retry = attempts === undefined ? UPLOAD_RETRY : { ...UPLOAD_RETRY, attempts: Number(attempts) };
  try {
    const size = await archiveUpload(values.dir, url, retry);
    process.stdout.write(`archive-upload: stored the workspace archive (${size} bytes)\n`);
    if (values.conversations && filesUrl && (await insideDirectory(values.conversations, values.dir))) {
      const files = await archiveUpload(values.conversations, filesUrl, retry, 'the conversation files');
      process.stdout.write(`archive-upload: stored the conversation files (${files} bytes)\n`);
    }
    return 0;
  } catch (err) {
    process.stderr.write(`archive-upload: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}
