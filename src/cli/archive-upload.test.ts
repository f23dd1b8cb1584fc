// The archive Pod's upload: a real tar of a real directory PUT over real HTTP to a local receiver
// (S3's presigned PUT semantics: a length up front, any 2xx is stored). The same function against
// a real SeaweedFS with a real presigned URL is in src/objstore/s3-store.test.ts.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { archiveUpload, runArchiveUploadCli } from './archive-upload.ts';

function workspace(): string {
  const dir = mkdtempSync(join(tmpdir(), 'archive-ws-'));
  mkdirSync(join(dir, 'src'));
  writeFileSync(join(dir, 'src', 'main.py'), 'print("hi")\n');
  return dir;
}

describe('archiveUpload', () => {
  let server: Server | undefined;
  afterEach(() => new Promise<void>((r) => (server ? server.close(() => r()) : r())));

  async function receiver(statuses: number[]): Promise<{ url: string; bodies: Buffer[]; lengths: (string | undefined)[] }> {
    const bodies: Buffer[] = [];
    const lengths: (string | undefined)[] = [];
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        bodies.push(Buffer.concat(chunks));
        lengths.push(req.headers['content-length']);
        res.statusCode = statuses.shift() ?? 200;
        res.end();
      });
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
    return { url: `http://127.0.0.1:${(server!.address() as { port: number }).port}/bucket/internal/workspace-archives/sb-x.tar.gz?X-Amz-Signature=secret-signature`, bodies, lengths };
  }

  it('retries a store that answers 503 and stores the tar.gz of the workspace, length up front', async () => {
    const r = await receiver([503, 503]);
    const size = await archiveUpload(workspace(), r.url, { attempts: 5, baseDelayMs: 10 });
    expect(r.bodies).toHaveLength(3);
    const stored = r.bodies[2]!;
    expect(stored.length).toBe(size);
    expect(r.lengths[2]).toBe(String(size));
    expect(execFileSync('tar', ['-tzf', '-'], { input: stored }).toString()).toContain('./src/main.py');
  });

  it('a refusal (403: the URL expired or was tampered with) fails at once, without the URL in the message', async () => {
    const r = await receiver([403]);
    const err = await archiveUpload(workspace(), r.url, { attempts: 5, baseDelayMs: 10 }).then(() => new Error("resolved"), (e: unknown) => e as Error);
    expect(r.bodies).toHaveLength(1);
    expect(err.message).toBe('the object store answered HTTP 403');
  });

  it('a store that stays down fails after its attempts with a clear message', async () => {
    const r = await receiver([500, 500, 500]);
    const err = await archiveUpload(workspace(), r.url, { attempts: 3, baseDelayMs: 10 }).then(() => new Error("resolved"), (e: unknown) => e as Error);
    expect(err.message).toMatch(/^uploading the workspace archive: the object store did not answer after 3 attempts over [0-9.]+ s \(Error, HTTP 500\); nothing was lost, try again$/);
    expect(err.message).not.toContain('secret-signature');
  });

  it('the CLI uploads the conversation directories to their own URL; a link out of the workspace is not followed', async () => {
    const r = await receiver([]);
    const ws = workspace();
    mkdirSync(join(ws, '.agentyard', 'conversations', 'conv-a'), { recursive: true });
    writeFileSync(join(ws, '.agentyard', 'conversations', 'conv-a', 'rec.zip'), 'PK');
    const env = { AGENTYARD_ARCHIVE_UPLOAD_URL: r.url, AGENTYARD_CONVERSATION_FILES_UPLOAD_URL: r.url.replace('workspace-archives', 'conversation-files') };
    expect(await runArchiveUploadCli(['--dir', ws, '--conversations', join(ws, '.agentyard', 'conversations')], env)).toBe(0);
    expect(r.bodies).toHaveLength(2);
    expect(execFileSync('tar', ['-tzf', '-'], { input: r.bodies[1] }).toString().split('\n')).toContain('./conv-a/rec.zip');
    // Replaced by a link to a directory outside the volume: only the workspace archive goes.
    const outside = mkdtempSync(join(tmpdir(), 'outside-'));
    writeFileSync(join(outside, 'host-file'), 'not the sandbox\'s');
    rmSync(join(ws, '.agentyard', 'conversations'), { recursive: true });
    symlinkSync(outside, join(ws, '.agentyard', 'conversations'));
    expect(await runArchiveUploadCli(['--dir', ws, '--conversations', join(ws, '.agentyard', 'conversations')], env)).toBe(0);
    expect(r.bodies).toHaveLength(3);
    // A URL without its directory (or the reverse) is a wrong invocation.
    expect(await runArchiveUploadCli(['--dir', ws], env)).toBe(2);
  });

  it('AGENTYARD_ARCHIVE_UPLOAD_ATTEMPTS bounds the attempts of one run: then exit 1, for the kubelet to restart it', async () => {
    const r = await receiver([503, 503, 503]);
    const ws = workspace();
    expect(await runArchiveUploadCli(['--dir', ws], { AGENTYARD_ARCHIVE_UPLOAD_URL: r.url, AGENTYARD_ARCHIVE_UPLOAD_ATTEMPTS: '2' })).toBe(1);
    expect(r.bodies).toHaveLength(2);
    expect(await runArchiveUploadCli(['--dir', ws], { AGENTYARD_ARCHIVE_UPLOAD_URL: r.url, AGENTYARD_ARCHIVE_UPLOAD_ATTEMPTS: 'two' })).toBe(2);
    expect(r.bodies).toHaveLength(2);
  });
});
