// The OpenAI SDK, loaded with the first model call instead of at start: its ~150 modules are a few
// MiB of an idle agent server's memory (issue #16), and a warm-pool member or a conversation that has
// not run yet makes no call. Everything that needs its classes runs after a call loaded it, or asks
// `loadedSdk()` first: an error cannot be one of the SDK's while the SDK is not loaded.
import { flushCompileCache } from 'node:module';
import type OpenAI from 'openai';

let sdk: typeof OpenAI | undefined;
let loading: Promise<typeof OpenAI> | undefined;

/**
 * The SDK's default export (the client class, with the error classes on it), loaded once. Then the
 * compile cache entries of its modules are written and freed, as src/cli/main.ts does for the
 * command's own (Node would hold them, ~1 MiB of malloc, until exit).
 */
export function loadSdk(): Promise<typeof OpenAI> {
  return (loading ??= import('openai').then((m) => {
    flushCompileCache();
    return (sdk = m.default);
  }));
}

/** The SDK once a call loaded it, else undefined. */
export function loadedSdk(): typeof OpenAI | undefined {
  return sdk;
}

/** The SDK inside a call (loaded by it). */
export function sdkInCall(): typeof OpenAI {
  if (!sdk) throw new Error('The OpenAI SDK is loaded by the model call; none was made');
  return sdk;
}

/** The SDK's "the caller aborted" error: what a model call rejects with when its signal aborts. */
export function isUserAbort(err: unknown): boolean {
  return sdk !== undefined && err instanceof sdk.APIUserAbortError;
}
