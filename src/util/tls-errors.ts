// Node's codes for a TLS peer this process does not trust (unknown CA, self-signed, wrong name,
// expired): a setting to fix (the CA to trust), not a network hiccup to retry.
export const UNTRUSTED_TLS_CODES = /^(CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|ERR_TLS_CERT_ALTNAME_INVALID|ERR_SSL_)/;

/** The untrusted-certificate code of an error or of one of its causes (fetch wraps it: "fetch failed"). */
export function untrustedTlsCode(err: unknown): string | undefined {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && UNTRUSTED_TLS_CODES.test(code)) return code;
  }
  return undefined;
}
