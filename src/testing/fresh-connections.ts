// A fetch dispatcher for tests that call a server running in their own process: a connection per
// request, never a pooled one. Seconds of synchronous work chained by promises only (an 11 MB
// conversation through SQLite on a loaded machine) hold back the event loop's timers phase, so
// neither the client's idle timer nor the server's keep-alive timeout runs. fetch then writes the
// request on a pooled connection whose keep-alive ran out meanwhile, and the next timers phase has
// the server close it with the request unread: a TCP reset, "fetch failed ECONNRESET" (the
// start-steps 413 flake). Between two processes the client's own idle limit (2 s under the
// server's advertised 5 s) prevents it.
import { Agent } from 'undici';

/** `fetch(url, { ...init, dispatcher: freshConnections } as RequestInit)`. pipelining 0: no keep-alive. */
export const freshConnections = new Agent({ pipelining: 0 });
