// GET /api/file/archive: a tarball of a directory (excludes, no links, no credentials, a manifest)
// and a git patch of a repository's changes that applies on its base.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { extract } from 'tar-stream';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { eventually, TEST_KEY, useTestServer } from '../test-support.ts';

const t = useTestServer();

const archive = (query: string) => fetch(`${t.s.url}/api/file/archive?${query}`, { headers: { 'x-session-api-key': TEST_KEY } });

async function members(tgz: Buffer): Promise<Map<string, string | null>> {
  const out = new Map<string, string | null>();
  const ex = extract();
  const done = new Promise<void>((ok, fail) => {
    ex.on('entry', (header, stream, next) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: unknown) => chunks.push(c as Buffer));
      stream.on('end', () => {
        out.set(header.name, header.type === 'directory' ? null : Buffer.concat(chunks).toString());
        next();
      });
    });
    ex.on('finish', ok);
    ex.on('error', fail);
  });
  Readable.from([gunzipSync(tgz)]).pipe(ex);
  await done;
  return out;
}

const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd, encoding: 'utf8' });

describe('GET /api/file/archive', () => {
  it('tar.gz: the files the excludes keep, links and git credentials never, a manifest last', async () => {
    const root = join(t.dir.path, 'proj');
    mkdirSync(join(root, 'src'), { recursive: true });
    mkdirSync(join(root, 'node_modules', 'dep'), { recursive: true });
    mkdirSync(join(root, 'empty'));
    mkdirSync(join(t.dir.path, 'outside'));
    writeFileSync(join(root, 'src', 'a.ts'), 'a');
    writeFileSync(join(root, 'src', 'b.pyc'), 'compiled');
    writeFileSync(join(root, 'build'), 'a file named like an excluded directory');
    writeFileSync(join(root, 'node_modules', 'dep', 'x.js'), 'x');
    writeFileSync(join(root, 'notes.log'), 'log');
    writeFileSync(join(t.dir.path, 'outside', 'secret.txt'), 'secret');
    symlinkSync(join(t.dir.path, 'outside'), join(root, 'out'));
    symlinkSync(join(t.dir.path, 'outside', 'secret.txt'), join(root, 'secret.txt'));
    git(root, 'init', '-q');
    git(root, 'remote', 'add', 'origin', 'https://user:tok-123@example.com/o/r.git');

    const r = await archive(`path=${encodeURIComponent(root)}&format=tar.gz&exclude=*.log`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/gzip');
    expect(r.headers.get('content-disposition')).toContain('proj.tar.gz');
    expect(decodeURIComponent(r.headers.get('x-archive-repo-remote')!)).toBe('https://example.com/o/r.git');
    const m = await members(Buffer.from(await r.arrayBuffer()));
    const files = [...m].filter(([, v]) => v !== null).map(([k]) => k).sort();
    expect(files).toEqual(['proj/archive_manifest.json', 'proj/build', 'proj/src/a.ts']);
    expect(m.has('proj/empty')).toBe(true);
    expect(JSON.parse(m.get('proj/archive_manifest.json')!)).toEqual({ excludes: expect.arrayContaining(['node_modules/', '*.pyc', '*.log']), file_count: 2, format: 'tar.gz', source: 'proj', total_bytes: 1 + 39 });

    // A full capture has .git, but never its config (a tokenized remote) nor reflogs.
    const full = await members(Buffer.from(await (await archive(`path=${encodeURIComponent(root)}&format=tar.gz&use_default_excludes=false`)).arrayBuffer()));
    expect(full.has('proj/node_modules/dep/x.js')).toBe(true);
    expect(full.has('proj/.git/HEAD')).toBe(true);
    expect(full.has('proj/.git/config')).toBe(false);
    expect([...full.keys()].some((k) => k.includes('secret') || k.startsWith('proj/out'))).toBe(false);
    expect([...full.values()].some((v) => v?.includes('tok-123'))).toBe(false);
    // Nothing is left beside the directory once sent.
    await eventually(() => readdirSync(t.dir.path).every((n) => !n.startsWith('.archive-')));
  });

  it('git-delta: a patch that applies on its base commit, untracked files and deletions included, excludes dropped', async () => {
    const parent = join(t.dir.path, 'ws');
    const repo = join(parent, 'repo');
    mkdirSync(repo, { recursive: true });
    git(repo, 'init', '-q', '-b', 'main');
    writeFileSync(join(repo, 'kept.txt'), 'one\n');
    writeFileSync(join(repo, 'gone.txt'), 'bye\n');
    git(repo, 'add', '.');
    git(repo, 'commit', '-qm', 'base');
    const base = git(repo, 'rev-parse', 'HEAD').trim();
    writeFileSync(join(repo, 'kept.txt'), 'two\n');
    execFileSync('rm', [join(repo, 'gone.txt')]);
    writeFileSync(join(repo, 'new.txt'), 'new\n');
    mkdirSync(join(repo, 'node_modules'));
    writeFileSync(join(repo, 'node_modules', 'big.js'), 'big\n');

    // The workspace holds one repository: it is the one archived.
    const r = await archive(`path=${encodeURIComponent(parent)}&base_ref=HEAD`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/x-patch/);
    expect(r.headers.get('x-archive-base-commit')).toBe(base);
    expect(r.headers.get('x-archive-base-ref')).toBe('HEAD');
    expect(r.headers.get('x-archive-branch')).toBe('main');
    const patch = await r.text();
    expect(patch).toContain('new.txt');
    expect(patch).not.toContain('node_modules');
    // The repository's own index is untouched: new.txt is still untracked.
    expect(git(repo, 'status', '--porcelain')).toContain('?? new.txt');
    const clone = mkdtempSync(join(t.dir.path, 'clone-'));
    execFileSync('git', ['clone', '-q', repo, clone]);
    git(clone, 'checkout', '-q', base);
    writeFileSync(join(clone, 'p.patch'), patch);
    git(clone, 'apply', 'p.patch');
    expect(execFileSync('cat', [join(clone, 'kept.txt'), join(clone, 'new.txt')], { encoding: 'utf8' })).toBe('two\nnew\n');
    expect(readdirSync(clone)).not.toContain('gone.txt');

    // Bad requests.
    expect((await archive(`path=${encodeURIComponent(repo)}&base_ref=nope`)).status).toBe(400);
    expect((await archive(`path=${encodeURIComponent(repo)}&base_ref=--output=x`)).status).toBe(400);
    const plain = join(t.dir.path, 'plain');
    mkdirSync(plain);
    expect((await archive(`path=${encodeURIComponent(plain)}`)).status).toBe(400);
    expect((await archive('path=relative')).status).toBe(400);
    expect((await archive(`path=${encodeURIComponent(join(t.dir.path, 'missing'))}`)).status).toBe(404);
    expect((await archive(`path=${encodeURIComponent(join(repo, 'kept.txt'))}`)).status).toBe(400);
    expect((await archive(`path=${encodeURIComponent(repo)}&format=zip`)).status).toBe(422);
    expect((await archive('')).status).toBe(422);
  });
});
