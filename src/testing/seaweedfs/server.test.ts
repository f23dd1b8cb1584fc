// The test SeaweedFS starts again on new ports when another process took one of its ports first.
import { createServer, type Server } from 'node:net';
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
});
