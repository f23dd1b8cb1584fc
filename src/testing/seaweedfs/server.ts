// A throwaway SeaweedFS (master, volume, filer and S3 gateway in one `weed server` process) for the
// object-store tests: the binary hack/seaweedfs.sh builds from Go modules into the cache, a temp
// data dir, free loopback ports, and one S3 identity (access key / secret) so that wrong
// credentials are refused as they would be in production. stop() and start() again on the same
// dir and ports is a restart: what was written must still be there.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { requiredForTests } from '../required/required.ts';
import { freePort } from '../ports.ts';

/** The cached weed binary (newest version), or undefined: the suite skips (fails when required). */
export function seaweedBinary(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const root = join(env.AGENTYARD_CACHE ?? join(homedir(), '.cache', 'agentyard'), 'seaweedfs');
  const found = existsSync(root) ? readdirSync(root).map((v) => join(root, v, 'weed')).filter((p) => existsSync(p)).sort().at(-1) : undefined;
  return requiredForTests(found, `SeaweedFS (${root}/<version>/weed)`, 'run hack/seaweedfs.sh (make test does)', env);
}


export interface SeaweedServer {
  endpoint: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  /** Starts it again on the same data dir and ports (after stop()). */
  start(): Promise<void>;
  /**
   * Stops the process with SIGKILL, at once: the harder test of what survives a restart (what weed
   * acknowledged must be there after it), and the quick one (on SIGTERM its volume server stops
   * its heartbeats and waits 10 s before it leaves). The data dir stays.
   */
  stop(): Promise<void>;
  /** stop() and remove the data dir. */
  destroy(): Promise<void>;
  log(): string;
}

/**
 * A weed server on ports of its own. Its eight ports are picked free (ports.ts), but another
 * process on the machine may bind one of them before weed does (suites run side by side, and
 * other checkouts' tests too): weed then exits with "address already in use", and it starts again
 * on new ports.
 */
export async function startSeaweed(bin: string, pickPort: () => Promise<number> = freePort): Promise<SeaweedServer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startSeaweedOnce(bin, pickPort);
    } catch (err) {
      // Judged on weed's whole output: the bind error is followed by a goroutine dump whose length
      // grows with the machine's load, and the error's message only keeps the output's tail.
      if (attempt >= 3 || !(err instanceof WeedExited) || !/address already in use/.test(err.output)) throw err;
    }
  }
}

/** weed server exited before it answered; `output` is all it printed. */
class WeedExited extends Error {
  readonly output: string;
  constructor(code: number, output: string) {
    // glog's fatal lines (F<date>) say why, ahead of the last of the output.
    const fatal = output.split('\n').filter((l) => /^F\d{4} /.test(l));
    super(`weed server exited (${code}): ${[...fatal, output.slice(-2000)].join('\n')}`);
    this.output = output;
  }
}

async function startSeaweedOnce(bin: string, pickPort: () => Promise<number>): Promise<SeaweedServer> {
  const root = mkdtempSync(join(tmpdir(), 'agentyard-seaweedfs-'));
  const credentials = { accessKeyId: 'agentyard-test', secretAccessKey: 'test-secret-0123456789' };
  writeFileSync(
    join(root, 's3.json'),
    JSON.stringify({ identities: [{ name: 'agentyard', credentials: [{ accessKey: credentials.accessKeyId, secretKey: credentials.secretAccessKey }], actions: ['Admin', 'Read', 'Write', 'List', 'Tagging'] }] }),
  );
  const ports = { master: await pickPort(), volume: await pickPort(), filer: await pickPort(), s3: await pickPort() };
  const grpc = { master: await pickPort(), volume: await pickPort(), filer: await pickPort(), s3: await pickPort() };
  const args = [
    'server',
    `-dir=${root}`,
    '-ip=127.0.0.1',
    '-ip.bind=127.0.0.1',
    `-master.port=${ports.master}`,
    `-master.port.grpc=${grpc.master}`,
    '-master.volumeSizeLimitMB=64',
    // The one master elects itself after a restart once this has passed (default 10 s; about 20 s
    // was seen on a loaded machine, during which writes fail): no peer can split the vote.
    '-master.electionTimeout=1s',
    `-volume.port=${ports.volume}`,
    `-volume.port.grpc=${grpc.volume}`,
    '-volume.max=16',
    '-filer',
    `-filer.port=${ports.filer}`,
    `-filer.port.grpc=${grpc.filer}`,
    '-s3',
    `-s3.port=${ports.s3}`,
    `-s3.port.grpc=${grpc.s3}`,
    // Off: the Iceberg and Lance catalogs would take fixed ports other tests may hold.
    '-s3.port.iceberg=0',
    '-s3.port.lance=0',
    `-s3.config=${join(root, 's3.json')}`,
  ];
  let child: ChildProcess | undefined;
  let output = '';
  const endpoint = `http://127.0.0.1:${ports.s3}`;

  const server: SeaweedServer = {
    endpoint,
    credentials,
    log: () => output.slice(-4000),
    async start() {
      const c = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      child = c;
      c.stdout!.on('data', (d: Buffer) => (output += d.toString()));
      c.stderr!.on('data', (d: Buffer) => (output += d.toString()));
      // 'exit' can come before the last of its output has been read; 'close' comes after.
      const closed = new Promise((resolve) => c.once('close', resolve));
      // Ready when the filer (where S3 keeps its metadata) and the S3 gateway both answer; the
      // gateway answers an unsigned request with an S3 error document.
      const deadline = Date.now() + 60_000;
      const answers = (url: string) => fetch(url, { signal: AbortSignal.timeout(1000) }).then((r) => r.status > 0 && r.status < 500, () => false);
      for (;;) {
        if (c.exitCode !== null) {
          await closed;
          throw new WeedExited(c.exitCode, output);
        }
        if ((await answers(`http://127.0.0.1:${ports.filer}/`)) && (await answers(`${endpoint}/`))) return;
        if (Date.now() > deadline) throw new Error(`weed server did not answer on ${endpoint} within 60 s: ${output.slice(-2000)}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    },
    async stop() {
      const c = child;
      if (!c || c.exitCode !== null || c.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => c.once('exit', () => resolve()));
      c.kill('SIGKILL');
      await exited;
    },
    async destroy() {
      await server.stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
  try {
    await server.start();
  } catch (err) {
    await server.destroy();
    throw err;
  }
  return server;
}
