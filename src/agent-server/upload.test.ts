// File upload over real HTTP: multipart in, bytes on disk, the same bytes out of /api/file/download.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TEST_KEY, useTestServer } from './test-support.ts';

const t = useTestServer();

async function upload(path: string, bytes: Uint8Array, field = 'file', key: string | null = TEST_KEY): Promise<{ status: number; body: any }> {
  const form = new FormData();
  form.append(field, new Blob([bytes]), 'upload.bin');
  const res = await fetch(`${t.s.url}${path}`, { method: 'POST', body: form, headers: key ? { 'x-session-api-key': key } : {} });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

describe('POST /api/file/upload', () => {
  it('streams a binary file to an absolute path, creating parents; download returns the same bytes', async () => {
    const bytes = randomBytes(3 * 1024 * 1024 + 17); // several MiB, every byte value
    const target = join(t.dir.path, 'workspace', 'deep', 'er', 'blob.bin');
    const res = await upload(`/api/file/upload?path=${encodeURIComponent(target)}`, bytes);
    expect(res).toEqual({ status: 200, body: { success: true, file_size: bytes.length } });
    expect(Buffer.compare(readFileSync(target), bytes)).toBe(0);
    const down = await fetch(`${t.s.url}/api/file/download?path=${encodeURIComponent(target)}`, { headers: { 'x-session-api-key': TEST_KEY } });
    expect(down.status).toBe(200);
    expect(Buffer.compare(Buffer.from(await down.arrayBuffer()), bytes)).toBe(0);
    // No temporary file left beside it.
    expect(readdirSync(join(t.dir.path, 'workspace', 'deep', 'er'))).toEqual(['blob.bin']);
  });

  it('replaces an existing file; the legacy path-style form writes the same way', async () => {
    const target = join(t.dir.path, 'workspace', 'a.txt');
    writeFileSync(target, 'old content that is longer');
    expect((await upload(`/api/file/upload/${target}`, Buffer.from('new'))).status).toBe(200);
    expect(readFileSync(target, 'utf8')).toBe('new');
    expect((await upload(`/api/file/upload/${target.slice(1)}`, Buffer.from('newer'))).status).toBe(200);
    expect(readFileSync(target, 'utf8')).toBe('newer');
  });

  it('refuses a relative or missing path (400/422), a body without the file field (422), a directory target (400), no key (401)', async () => {
    const rel = await upload('/api/file/upload?path=relative/x.txt', Buffer.from('x'));
    expect(rel.status).toBe(400);
    expect(rel.body.detail).toBe("path must be absolute, got 'relative/x.txt'");
    expect((await upload('/api/file/upload', Buffer.from('x'))).status).toBe(422);
    const target = join(t.dir.path, 'workspace', 'b.txt');
    const wrongField = await upload(`/api/file/upload?path=${encodeURIComponent(target)}`, Buffer.from('x'), 'upload');
    expect(wrongField.status).toBe(422);
    expect(wrongField.body.detail[0]).toMatchObject({ loc: ['body', 'file'], type: 'missing' });
    expect(existsSync(target)).toBe(false);
    const json = await t.s.api(`/api/file/upload?path=${encodeURIComponent(target)}`, { method: 'POST', body: { file: 'x' } });
    expect(json.status).toBe(422);
    const d = join(t.dir.path, 'workspace', 'adir');
    mkdirSync(d);
    expect((await upload(`/api/file/upload?path=${encodeURIComponent(d)}`, Buffer.from('x'))).status).toBe(400);
    expect((await upload(`/api/file/upload?path=${encodeURIComponent(target)}`, Buffer.from('x'), 'file', null)).status).toBe(401);
  });
});
