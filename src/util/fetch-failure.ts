// Why a fetch() threw, in words an operator can act on. undici throws a bare "TypeError: fetch
// failed" and keeps the reason (ECONNREFUSED, ENOTFOUND, a certificate error...) in `cause`, so
// a message built from the error's name alone says nothing about what to fix.

/** `timeoutMs`: the AbortSignal.timeout the call had, to say so when that is what ended it. */
export function fetchFailure(err: unknown, timeoutMs?: number): string {
  const e = err as { name?: string; code?: string; cause?: { code?: string } };
  if (e?.name === 'TimeoutError') return timeoutMs ? `no answer within ${timeoutMs / 1000} s` : 'no answer in time';
  return e?.cause?.code ?? e?.code ?? e?.name ?? 'unknown error';
}
