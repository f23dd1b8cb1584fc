// The license embedded at install time: --set-file license.file=<file> becomes a Secret the API
// reads (AGENTYARD_LICENSE), and a renewed file rolls the API (which checks it at start).
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { parseLicense, signLicense } from '../../src/license/license.ts';
import { CHART, helm, helmBin } from './helm.ts';

const vendor = generateKeyPairSync('ed25519');
const publicKey = vendor.publicKey.export({ type: 'spki', format: 'pem' }).toString();
const license = (expires: string) =>
  signLicense({ id: 'lic-0123456789', email: 'ops@acme.example', customer: 'Acme', issued_at: '2026-01-01T00:00:00Z', expires_at: expires }, vendor.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());

type Obj = { kind: string; metadata: { name: string }; data?: Record<string, string>; spec?: any };

describe.skipIf(!helmBin)('the license in the chart', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentyard-license-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function render(file: string, extra: string[] = []): Promise<Obj[]> {
    const path = join(dir, `license-${Math.random()}.json`);
    writeFileSync(path, file);
    const r = await helm(['template', 'agentyard', CHART, '-n', 'agentyard', '-f', join(CHART, 'ci/minimal-values.yaml'), '--set-file', `license.file=${path}`, ...extra]);
    expect(r.ok, r.out).toBe(true);
    return parseAllDocuments(r.out).map((d) => d.toJS() as Obj).filter(Boolean);
  }

  it('puts the file into a Secret the API reads, with the vendor key, and what the API gets checks', async () => {
    const file = license('2027-01-01T00:00:00Z');
    const objs = await render(file, ['--set-file', `license.publicKey=${writeKey()}`]);
    const secret = objs.find((o) => o.kind === 'Secret' && o.metadata.name === 'agentyard-license')!;
    const stored = Buffer.from(secret.data!.license!, 'base64').toString();
    expect(parseLicense(stored, publicKey).verified).toBe(true);
    const api = objs.find((o) => o.kind === 'Deployment' && o.metadata.name === 'agentyard-api')!;
    const env = api.spec.template.spec.containers[0].env as { name: string; value?: string; valueFrom?: unknown }[];
    expect(env).toContainEqual({ name: 'AGENTYARD_LICENSE', valueFrom: { secretKeyRef: { name: 'agentyard-license', key: 'license' } } });
    expect(env.find((e) => e.name === 'AGENTYARD_LICENSE_PUBLIC_KEY')?.value).toBe(publicKey);
    // The license is in no other object (not in the Pod spec, not in a ConfigMap).
    expect(objs.filter((o) => JSON.stringify(o).includes(secret.data!.license!) || JSON.stringify(o).includes('lic-0123456789')).map((o) => o.kind)).toEqual(['Secret']);
  });

  it('a renewed license rolls the API', async () => {
    const hash = async (f: string) => (await render(f)).find((o) => o.kind === 'Deployment' && o.metadata.name === 'agentyard-api')!.spec.template.metadata.annotations['checksum/license'];
    expect(await hash(license('2027-01-01T00:00:00Z'))).not.toBe(await hash(license('2028-01-01T00:00:00Z')));
  });

  it('refuses a public key that is not PEM', async () => {
    const r = await helm(['template', 'agentyard', CHART, '-f', join(CHART, 'ci/minimal-values.yaml'), '--set', 'license.publicKey=abc']);
    expect(r.ok).toBe(false);
    expect(r.out).toMatch(/license\/publicKey/);
  });

  function writeKey(): string {
    const path = join(dir, 'vendor.pub');
    writeFileSync(path, publicKey);
    return path;
  }
});
