// A support bundle's files, written redacted: Secret data, sensitive env values and key-like text
// never reach the archive. Shared by the CLI's bundle (support-bundle.ts) and the admin console's
// (src/facade/support-bundle.ts); kept apart from the CLI's Kubernetes client, which the API server's
// import of this does not need.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const SENSITIVE = /KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL/i;
export const REDACTED = '**********';

/**
 * Removes secret values: Secret data, env values whose names look sensitive, and the copies of
 * whole objects that kubectl and server-side apply keep in metadata (they would carry both again).
 */
export function redact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redact);
  // Free text anywhere (event messages, annotations, statuses) may quote a key.
  if (typeof value === 'string') return redactText(value);
  if (!value || typeof value !== 'object') return value;
  const obj = value as Record<string, unknown>;
  if (obj.kind === 'Secret') return { ...obj, data: Object.fromEntries(Object.keys((obj.data as object) ?? {}).map((k) => [k, REDACTED])), stringData: undefined };
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (k === 'managedFields') continue;
    if (k === 'kubectl.kubernetes.io/last-applied-configuration') out[k] = REDACTED;
    else if (k === 'value' && typeof v === 'string' && typeof obj.name === 'string' && SENSITIVE.test(obj.name)) out[k] = REDACTED;
    else out[k] = redact(v);
  }
  return out;
}

/** Masks things that look like keys in free text (logs). */
export function redactText(text: string): string {
  return text.replace(/\b(ay_[A-Za-z0-9_-]{8,}|sk-[A-Za-z0-9_-]{8,})\b/g, REDACTED).replace(/("?(?:api_?key|session_api_key|token|password)"?\s*[:=]\s*"?)[^",\s]+/gi, `$1${REDACTED}`);
}

/**
 * Writes files of a bundle under `root`, redacted: `write` one file, `attempt` one that may fail to
 * collect (then `<name>.error.txt` says why, and the bundle goes on).
 */
export function bundleWriter(root: string): { write(name: string, data: unknown): void; attempt(name: string, fn: () => Promise<unknown>): Promise<void> } {
  const write = (name: string, data: unknown) => {
    mkdirSync(dirname(join(root, name)), { recursive: true });
    writeFileSync(join(root, name), typeof data === 'string' ? redactText(data) : `${JSON.stringify(redact(data), null, 2)}\n`);
  };
  const attempt = async (name: string, fn: () => Promise<unknown>) => {
    try {
      write(name, await fn());
    } catch (err) {
      write(`${name}.error.txt`, `could not collect: ${(err as Error).message}\n`);
    }
  };
  return { write, attempt };
}

export type BundleWriter = ReturnType<typeof bundleWriter>;
