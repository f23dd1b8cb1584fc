// Waiting for something a real process will do (a server answering, an event arriving): the probe is
// called until it gives a value, and a timeout names what never came.

export async function until<T>(what: string | (() => string), fn: () => Promise<T | undefined | false>, ms = 90_000, every = 250): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${typeof what === 'string' ? what : what()}`);
    await new Promise((r) => setTimeout(r, every));
  }
}
