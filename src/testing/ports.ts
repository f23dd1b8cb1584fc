// A port for a test server that may be stopped and started again on the same port.
//
// Asking the kernel for port 0 hands out a port from the ephemeral range, the same range every
// outgoing connection takes its local port from. Once the server that held it stops, any
// connection on the machine may take that port, and the restarted server fails with EADDRINUSE
// (seen in CI: a SIGKILLed API could not come back on its port). So ports come from below the
// ephemeral range, which the kernel never hands out by itself, and are checked by binding once.

import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

const FLOOR = 10_000;

function ephemeralStart(): number {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (low && low > FLOOR + 1_000) return low;
  } catch {
    // not Linux: fall through to the IANA dynamic range's start
  }
  return 49_152;
}

function bindable(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.unref();
    s.once('error', () => resolve(false));
    s.listen(port, host, () => s.close(() => resolve(true)));
  });
}

/** A free TCP port on `host`, outside the kernel's ephemeral range. */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const ceiling = ephemeralStart();
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = FLOOR + Math.floor(Math.random() * (ceiling - FLOOR));
    if (await bindable(port, host)) return port;
  }
  throw new Error(`no free port on ${host} between ${FLOOR} and ${ceiling} after 200 tries`);
}
