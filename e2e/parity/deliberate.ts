// Differences from the OpenHands agent server that are deliberate, each with why ours is better (or
// why matching would be wrong here). Keys are `<flow>.<key>` of e2e/parity/flows.ts; the suite fails
// on any difference not listed here, and on an entry here that no longer shows.
export const DELIBERATE: Record<string, string> = {};
