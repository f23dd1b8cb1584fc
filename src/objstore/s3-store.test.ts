// S3ObjectStore against a real S3 server: SeaweedFS built from Go modules (hack/seaweedfs.sh).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Unavailable } from '../api/errors.ts';
import { seaweedBinary, startSeaweed, type SeaweedServer } from '../testing/seaweedfs/server.ts';
import { archiveUpload } from '../cli/archive-upload.ts';
import { objectStoreConformance } from './conformance.ts';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { S3ObjectStore, type S3Settings } from './s3-store.ts';

const bin = seaweedBinary();
if (!bin) console.warn('S3ObjectStore suite SKIPPED: no SeaweedFS binary (run hack/seaweedfs.sh; make test does)');

describe.skipIf(!bin)('S3ObjectStore on a real SeaweedFS', () => {
  let sw: SeaweedServer;
  let shared: S3ObjectStore;
  const stores: S3ObjectStore[] = [];
  const make = (s: Partial<S3Settings> = {}) => {
    const store = new S3ObjectStore({ endpoint: sw.endpoint, bucket: 'agentyard', credentials: sw.credentials, ...s });
    stores.push(store);
    return store;
  };

  beforeAll(async () => {
    sw = await startSeaweed(bin!);
    shared = make({ retry: { attempts: 30, baseDelayMs: 200, maxDelayMs: 1000 } });
    await shared.init(); // creates the bucket
  }, 90_000);
  afterAll(async () => {
    for (const s of stores) s.close();
    await sw?.destroy();
  }, 30_000);

  objectStoreConformance(() => shared);

  it('wrong credentials are refused at once as access denied, naming the store and not the secret', async () => {
    const store = make({ credentials: { accessKeyId: sw.credentials.accessKeyId, secretAccessKey: 'wrong-secret-value' } });
    const err = await store.put('conversations/y1/files/a', 'a').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Unavailable);
    expect((err as Error).message).toMatch(/^storing conversations\/y1\/files\/a \(s3:\/\/agentyard at .*\): access denied: check the object store credentials/);
    expect((err as Error).message).not.toContain('wrong-secret-value');
    expect(await shared.get('conversations/y1/files/a')).toBeUndefined();
  });

  it('the archive Pod path: a presigned URL stores the workspace archive with no credentials, and only at its key', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ws-'));
    writeFileSync(join(dir, 'notes.txt'), 'user work');
    const url = await shared.presignPut('internal/workspace-archives/sb9-stamp.tar.gz', 3600);
    expect(url).not.toContain(sw.credentials.secretAccessKey);
    await archiveUpload(dir, url, { attempts: 3, baseDelayMs: 50 });
    const stored = await shared.get('internal/workspace-archives/sb9-stamp.tar.gz');
    expect(execFileSync('tar', ['-tzf', '-'], { input: stored! }).toString()).toContain('./notes.txt');
    // The signature covers the key: the same URL pointed elsewhere is refused.
    const other = url.replace('sb9-stamp', 'sb9-other');
    expect((await fetch(other, { method: 'PUT', body: 'x' })).status).toBe(403);
    expect(await shared.get('internal/workspace-archives/sb9-other.tar.gz')).toBeUndefined();
  }, 60_000);

  it('a missing bucket it may not create is named at init', async () => {
    const err = await make({ bucket: 'not-there', createBucket: false }).init().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Unavailable);
    expect((err as Error).message).toMatch(/checking bucket not-there .*no such bucket/);
  });

  // The outages last: after a restart, weed's master refuses new writes until it has waited 15 s for
  // its volume servers to report (its warm-up), so a test that writes after one pays that again.
  it('reads back after the server restarts, and a write while it is briefly down is retried until it is back: nothing lost', async () => {
    await shared.put('conversations/r1/files/rec.zip', 'survives a restart');
    const store = make({ retry: { attempts: 60, baseDelayMs: 200, maxDelayMs: 1000 } });
    await sw.stop();
    const writing = store.put('conversations/b1/files/during-outage.txt', 'written across an outage');
    await new Promise((r) => setTimeout(r, 1500)); // the outage: the write is retrying meanwhile
    await sw.start();
    await writing;
    const again = make({ retry: { attempts: 30, baseDelayMs: 200, maxDelayMs: 1000 } });
    await again.init(); // the bucket is there: no second create
    expect((await again.get('conversations/r1/files/rec.zip'))?.toString()).toBe('survives a restart');
    expect((await again.get('conversations/b1/files/during-outage.txt'))?.toString()).toBe('written across an outage');
  }, 120_000);

  // The file's last test: the server stays down (afterAll removes it), a start would cost seconds.
  it('a server down for longer fails with a clear error (what, where, how often, why), no secret in it', async () => {
    await sw.stop();
    const store = make({ retry: { attempts: 3, baseDelayMs: 50 } });
    const err = await store.put('conversations/x1/files/a', 'a').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Unavailable);
    const msg = (err as Error).message;
    expect(msg).toMatch(new RegExp(`^storing conversations/x1/files/a \\(s3://agentyard at ${sw.endpoint}\\): the object store did not answer after 3 attempts over [0-9.]+ s \\(.*ECONNREFUSED.*\\); nothing was lost, try again$`));
    expect(msg).not.toContain(sw.credentials.secretAccessKey);
  }, 90_000);
});
