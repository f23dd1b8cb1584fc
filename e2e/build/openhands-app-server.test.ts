// hack/openhands-app-server.sh and its patch script, without the network: the patches against a
// stand-in package (files holding the very text each patch looks for), applied once, left alone when
// applied, refused on a file that does not match (another release); the install script failing
// clearly without a Python >= 3.12, and on a ready virtualenv re-applying the patches and printing
// its python, against a throwaway cache.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { executable, runHackScript } from './hack-script.ts';

const HACK = join(import.meta.dirname, '../../hack');
const PATCH = join(HACK, 'openhands-app-server-patch.py');
const MARK = '# agentyard-local-patch';
const run = promisify(execFile);
// The interpreter itself (a pyenv shim needs the caller's HOME and PATH, which the script's runs do not have).
const python = (await run('python3', ['-c', 'import sys; print(sys.executable)'])).stdout.trim();

/** A stand-in openhands package under `site`: each patched file holding the text its patches look for. */
async function standInPackage(site: string): Promise<string[]> {
  const { stdout } = await run(python, ['-c', `import importlib.util as u, json; s = u.spec_from_file_location('p', ${JSON.stringify(PATCH)}); m = u.module_from_spec(s); s.loader.exec_module(m); print(json.dumps(m.PATCHES))`]);
  const patches = JSON.parse(stdout) as [string, string, string][];
  mkdirSync(join(site, 'openhands'), { recursive: true });
  writeFileSync(join(site, 'openhands', '__init__.py'), '');
  const files = new Map<string, string>();
  for (const [rel, old] of patches) files.set(rel, `${files.get(rel) ?? 'import os\n'}\n${old}\n        pass\n`);
  for (const [rel, text] of files) {
    mkdirSync(dirname(join(site, 'openhands', rel)), { recursive: true });
    writeFileSync(join(site, 'openhands', rel), text);
  }
  return [...files.keys()].map((rel) => join(site, 'openhands', rel));
}

describe('hack/openhands-app-server-patch.py', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentyard-oh-patch-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const patch = (site: string) => run(python, [PATCH], { env: { PYTHONPATH: site, PATH: '/usr/bin:/bin' } }).then(() => 0, (err: { code: number; stderr: string }) => err);

  it('applies each patch once, and leaves patched files alone', async () => {
    const site = join(dir, 'once');
    const files = await standInPackage(site);
    expect(await patch(site)).toBe(0);
    const patched = files.map((f) => readFileSync(f, 'utf8'));
    expect(patched.join('').split(MARK).length - 1).toBe(3);
    expect(await patch(site)).toBe(0);
    expect(files.map((f) => readFileSync(f, 'utf8'))).toEqual(patched);
  });

  it('refuses a file that is not the text it knows (another release), naming it', async () => {
    const site = join(dir, 'other');
    const [first] = await standInPackage(site);
    writeFileSync(first!, 'def something_else():\n    pass\n');
    const r = await patch(site);
    expect(r).toMatchObject({ code: 1, stderr: expect.stringContaining(`${first} does not have the expected text`) });
  });
});

describe('hack/openhands-app-server.sh', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentyard-oh-app-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const script = join(HACK, 'openhands-app-server.sh');
  // The tools the script uses, and a python3 that is too old; no pyenv.
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  for (const tool of ['bash', 'flock', 'mkdir', 'ls', 'sort', 'tail', 'dirname', 'rm', 'touch']) symlinkSync(`/usr/bin/${tool}`, join(bin, tool));
  executable(join(bin, 'python3'), 'exit 1');

  it('fails clearly without a Python >= 3.12, leaving no ready marker', async () => {
    const cache = join(dir, 'cache-none');
    const r = await runHackScript(script, cache, bin);
    expect(r.code).toBe(1);
    expect(r.err).toContain('no Python >= 3.12');
    expect(r.out).toBe('');
  });

  it('on an installed virtualenv: applies the patches, marks it ready and prints its python', async () => {
    const cache = join(dir, 'cache-ready');
    const version = /OPENHANDS_AI_VERSION:-([0-9.]+)\}/.exec(readFileSync(script, 'utf8'))![1]!;
    const venv = join(cache, 'venv', `openhands-ai-${version}`);
    const site = join(dir, 'site');
    const files = await standInPackage(site);
    mkdirSync(join(venv, 'bin'), { recursive: true });
    // The venv's python: the real one, seeing the stand-in package.
    executable(join(venv, 'bin', 'python'), `PYTHONPATH=${site} exec ${python} "$@"`);
    const r = await runHackScript(script, cache, bin);
    expect(r, r.err).toMatchObject({ code: 0, out: `${join(venv, 'bin', 'python')}\n` });
    expect(existsSync(join(venv, '.agentyard-patched'))).toBe(true);
    expect(files.map((f) => readFileSync(f, 'utf8')).join('')).toContain(MARK);
  });
});
