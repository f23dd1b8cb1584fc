// The installation's license (spec part 1 item 1: embedded at install time). The vendor issues a
// license file: JSON {license: {...}, signature} where signature is Ed25519 over the license's
// canonical JSON (keys sorted). The chart puts the file into a Secret (AGENTYARD_LICENSE); the API
// checks it at start:
// - not JSON, missing or wrong fields, or a signature that does not verify against the vendor key
//   (AGENTYARD_LICENSE_PUBLIC_KEY, when configured): the API refuses to start, naming what is wrong;
// - expired: the API starts (nothing is lost, everything stays readable) but new conversations and
//   sandboxes are refused with a message saying so (license-gate.ts);
// - seats: reported against the installation's enabled users, not enforced (nobody is locked out).
// No license at all: unlicensed (evaluation); nothing is refused.
// The license id is also the chart registry password (spec part 7 rule 4), so it is never shown
// whole: the admin route shows its last four characters.
import { createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import Type, { type Static } from 'typebox';
import { Value } from 'typebox/value';
import type { LicenseStatus } from '../api/app/admin.ts';

export const LicenseBody = Type.Object(
  {
    id: Type.String({ minLength: 8 }),
    email: Type.String({ minLength: 3, pattern: '^[^@\\s]+@[^@\\s]+$' }),
    customer: Type.String({ minLength: 1 }),
    issued_at: Type.String({ format: 'date-time' }),
    expires_at: Type.String({ format: 'date-time' }),
    seats: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { additionalProperties: false },
);
export type LicenseBody = Static<typeof LicenseBody>;

export const LicenseFile = Type.Object({ license: LicenseBody, signature: Type.String({ minLength: 1 }) }, { additionalProperties: false });
export type LicenseFile = Static<typeof LicenseFile>;

export class LicenseError extends Error {}

export interface InstalledLicense {
  license: LicenseBody;
  /** true: signed by the configured vendor key; false: no vendor key configured (structure only). */
  verified: boolean;
}

/** The bytes that are signed: the license object with its keys sorted (it is flat). */
export function canonical(body: LicenseBody): Buffer {
  const sorted = Object.fromEntries(Object.entries(body).sort(([a], [b]) => (a < b ? -1 : 1)));
  return Buffer.from(JSON.stringify(sorted));
}

/** The vendor's side: a license file for `body`, signed with its Ed25519 private key (PEM). */
export function signLicense(body: LicenseBody, privateKeyPem: string): string {
  const signature = sign(null, canonical(body), createPrivateKey(privateKeyPem)).toString('base64url');
  return JSON.stringify({ license: body, signature }, null, 2);
}

export function parseLicense(text: string, publicKeyPem?: string): InstalledLicense {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new LicenseError('the license is not a license file (not JSON): install the file your vendor sent, unchanged');
  }
  if (!Value.Check(LicenseFile, doc)) {
    const problems = [...Value.Errors(LicenseFile, doc)].slice(0, 5).map((e) => `${e.instancePath || '/'} ${e.message}`);
    throw new LicenseError(`the license file is malformed (${problems.join('; ')}): install the file your vendor sent, unchanged`);
  }
  const file = doc;
  if (Number.isNaN(Date.parse(file.license.expires_at)) || Number.isNaN(Date.parse(file.license.issued_at))) {
    throw new LicenseError('the license file has an unreadable date: install the file your vendor sent, unchanged');
  }
  if (!publicKeyPem) return { license: file.license, verified: false };
  let key;
  try {
    key = createPublicKey(publicKeyPem);
  } catch {
    throw new LicenseError('AGENTYARD_LICENSE_PUBLIC_KEY is not a public key (PEM)');
  }
  const ok = verify(null, canonical(file.license), key, Buffer.from(file.signature, 'base64url'));
  if (!ok) throw new LicenseError(`the license of ${file.license.customer} does not carry the vendor's signature (changed, or issued for another vendor key): install the file your vendor sent, unchanged`);
  return { license: file.license, verified: true };
}

/** AGENTYARD_LICENSE (the file's text, from the chart's Secret) or AGENTYARD_LICENSE_FILE; none: unlicensed. */
export function licenseFromEnv(env: NodeJS.ProcessEnv): InstalledLicense | undefined {
  const text = env.AGENTYARD_LICENSE || (env.AGENTYARD_LICENSE_FILE ? readFileSync(env.AGENTYARD_LICENSE_FILE, 'utf8') : undefined);
  if (!text?.trim()) return undefined;
  return parseLicense(text, env.AGENTYARD_LICENSE_PUBLIC_KEY || undefined);
}

export const maskedId = (id: string) => `…${id.slice(-4)}`;


export function isExpired(l: InstalledLicense | undefined, now: Date): boolean {
  return l !== undefined && Date.parse(l.license.expires_at) <= now.getTime();
}

/** The sentence an expired license answers new starts with. */
export function expiredMessage(l: InstalledLicense): string {
  const { customer, expires_at } = l.license;
  return `The agentyard license of ${customer} (${maskedId(l.license.id)}) expired on ${expires_at}: new conversations and sandboxes cannot be started. Existing conversations, transcripts and downloads stay available. Ask your administrator to install a renewed license (helm upgrade --set-file license.file=<license.json>).`;
}

export function licenseStatus(l: InstalledLicense | undefined, now: Date, seatsUsed: number): LicenseStatus {
  if (!l) return { status: 'unlicensed', message: 'No license is installed (evaluation): nothing is refused. Install one with the chart value license.file.', seats_used: seatsUsed, seats_exceeded: false };
  const { license } = l;
  const daysLeft = Math.floor((Date.parse(license.expires_at) - now.getTime()) / 86_400_000);
  const expired = isExpired(l, now);
  const seats = license.seats ?? null;
  const exceeded = seats !== null && seatsUsed > seats;
  const parts = [expired ? expiredMessage(l) : `Licensed to ${license.customer} until ${license.expires_at} (${daysLeft} days left).`];
  if (exceeded) parts.push(`${seatsUsed} users are enabled, more than the ${seats} seats licensed: disable users or extend the license.`);
  if (!l.verified) parts.push('The signature was not checked: no vendor key is configured (license.publicKey).');
  return {
    status: expired ? 'expired' : 'valid',
    message: parts.join(' '),
    customer: license.customer,
    email: license.email,
    license_id: maskedId(license.id),
    issued_at: license.issued_at,
    expires_at: license.expires_at,
    days_left: daysLeft,
    seats,
    seats_used: seatsUsed,
    seats_exceeded: exceeded,
    signature: l.verified ? 'verified' : 'unverified',
  };
}
