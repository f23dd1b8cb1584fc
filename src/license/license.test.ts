import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { LicenseError, licenseFromEnv, licenseStatus, parseLicense, signLicense, type LicenseBody } from './license.ts';

const vendor = generateKeyPairSync('ed25519');
const other = generateKeyPairSync('ed25519');
const pem = (k: { export(o: { type: 'spki' | 'pkcs8'; format: 'pem' }): string | Buffer }, type: 'spki' | 'pkcs8') => k.export({ type, format: 'pem' }).toString();
const VENDOR_PUB = pem(vendor.publicKey, 'spki');
const body: LicenseBody = { id: 'lic-0123456789abcdef', email: 'ops@acme.example', customer: 'Acme', issued_at: '2026-01-01T00:00:00Z', expires_at: '2027-01-01T00:00:00Z', seats: 2 };
const file = signLicense(body, pem(vendor.privateKey, 'pkcs8'));

describe('license files', () => {
  it('verifies a file signed by the vendor key', () => {
    expect(parseLicense(file, VENDOR_PUB)).toEqual({ license: body, verified: true });
  });

  it('refuses a changed file, one signed by another key, and a malformed one, saying why', () => {
    const changed = JSON.stringify({ ...JSON.parse(file), license: { ...body, seats: 500 } });
    expect(() => parseLicense(changed, VENDOR_PUB)).toThrow(/does not carry the vendor's signature/);
    expect(() => parseLicense(signLicense(body, pem(other.privateKey, 'pkcs8')), VENDOR_PUB)).toThrow(LicenseError);
    expect(() => parseLicense('not json', VENDOR_PUB)).toThrow(/not a license file \(not JSON\)/);
    expect(() => parseLicense(JSON.stringify({ license: { ...body, email: 'nope' }, signature: 'x' }), VENDOR_PUB)).toThrow(/malformed \(\/license\/email/);
    expect(() => parseLicense(file, 'not a key')).toThrow(/AGENTYARD_LICENSE_PUBLIC_KEY is not a public key/);
  });

  it('checks structure only without a vendor key, and says so', () => {
    const l = licenseFromEnv({ AGENTYARD_LICENSE: file })!;
    expect(l.verified).toBe(false);
    expect(licenseStatus(l, new Date('2026-06-01T00:00:00Z'), 1)).toMatchObject({ status: 'valid', signature: 'unverified', message: expect.stringContaining('signature was not checked') });
    expect(licenseFromEnv({})).toBeUndefined();
  });

  it('reports expiry, days left and seats, never the whole license id (the registry password)', () => {
    const l = parseLicense(file, VENDOR_PUB);
    const valid = licenseStatus(l, new Date('2026-12-02T00:00:00Z'), 3);
    expect(valid).toMatchObject({ status: 'valid', days_left: 30, seats: 2, seats_used: 3, seats_exceeded: true, license_id: '…cdef', signature: 'verified' });
    expect(valid.message).toMatch(/^Licensed to Acme until 2027-01-01T00:00:00Z \(30 days left\)\. 3 users are enabled, more than the 2 seats licensed/);
    expect(JSON.stringify(valid)).not.toContain(body.id);
    const expired = licenseStatus(l, new Date('2027-01-01T00:00:00Z'), 1);
    expect(expired).toMatchObject({ status: 'expired', days_left: 0, seats_exceeded: false });
    expect(expired.message).toMatch(/expired on 2027-01-01T00:00:00Z: new conversations and sandboxes cannot be started\. Existing conversations, transcripts and downloads stay available/);
    expect(licenseStatus(undefined, new Date(), 4)).toMatchObject({ status: 'unlicensed', seats_used: 4 });
  });
});
