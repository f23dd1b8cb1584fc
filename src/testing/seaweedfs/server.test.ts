// The test SeaweedFS starts again on new ports when another process took one of its ports first.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../ports.ts';
import { seaweedBinary, startSeaweed, type SeaweedServer } from './server.ts';

const bin = seaweedBinary();
if (!bin) console.warn('test SeaweedFS suite SKIPPED: no SeaweedFS binary (run hack/seaweedfs.sh; make test does)');

describe.skipIf(!bin)('startSeaweed', () => {
  let taken: Server | undefined;
  let sw: SeaweedServer | undefined;
  afterAll(async () => {
    await sw?.destroy();
    taken?.close();
  });

  it('a port bound by someone else between the pick and weed: starts again on new ports and serves', async () => {
    const port = await freePort();
    taken = createServer();
    await new Promise<void>((r) => taken!.listen(port, '127.0.0.1', r));
    // The first attempt gets the taken port for its volume server (the second port asked for).
    let asked = 0;
    sw = await startSeaweed(bin!, async () => (++asked === 2 ? port : freePort()));
    expect(asked).toBe(16);
    expect(sw.endpoint).not.toContain(`:${port}`);
    expect((await fetch(`${sw.endpoint}/`)).status).toBeLessThan(500);
  }, 120_000);

  it('the bind error far ahead of the end of what weed printed (a long goroutine dump under load): still judged a taken port', async () => {
    // A stand-in for weed that always fails as weed does on a taken port, then dumps 20 kB of
    // goroutines: three attempts on new ports, and the error names the bind failure.
    const dir = mkdtempSync(join(tmpdir(), 'agentyard-seaweed-dump-'));
    try {
      const fake = join(dir, 'weed');
      const dump = Array.from({ length: 200 }, (_, i) => `goroutine ${i} [select]:\n\tgithub.com/seaweedfs/seaweedfs/weed/command.runServer()`).join('\n');
      writeFileSync(join(dir, 'dump'), dump);
      writeFileSync(fake, `#!/bin/sh\necho 'F1126 07:33:16.603592 volume.go:705 Volume server listener error:listen tcp 127.0.0.1:1: bind: address already in use' >&2\ncat '${join(dir, 'dump')}' >&2\nexit 255\n`, { mode: 0o755 });
      let asked = 0;
      const err = await startSeaweed(fake, async () => (asked++, freePort())).then(() => undefined, (e: Error) => e);
      expect(asked).toBe(24);
      expect(err?.message).toMatch(/^weed server exited \(255\): F1126 .*bind: address already in use\n/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
