// hack/keycloak.sh must fail, saying why, when it cannot provide Keycloak (so that `make test` fails
// instead of skipping the login suite), and reuse what it cached. Run against a throwaway cache with
// stand-ins: no Maven is ever called here.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { executable, runHackScript } from './hack-script.ts';

const SCRIPT = join(import.meta.dirname, '../../hack/keycloak.sh');
const VERSION = /KEYCLOAK_VERSION:-([0-9.]+)\}/.exec(readFileSync(SCRIPT, 'utf8'))![1]!;

describe('hack/keycloak.sh', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentyard-keycloak-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const cache = join(dir, 'cache');
  const wrapper = join(cache, 'keycloak', VERSION, 'kc');
  // The tools the script uses, and no mvn; the JDKs it may pick are stand-ins (KEYCLOAK_JVM_DIRS).
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  for (const tool of ['bash', 'mkdir', 'flock', 'mktemp', 'rm', 'mv', 'sed', 'unzip', 'chmod', 'rmdir', 'cat']) {
    const found = ['/usr/bin', '/bin'].map((d) => join(d, tool)).find((p) => existsSync(p));
    if (found) symlinkSync(found, join(bin, tool));
  }
  const jdk = (name: string, version: number) => {
    mkdirSync(join(dir, 'jvm', name, 'bin'), { recursive: true });
    executable(join(dir, 'jvm', name, 'bin', 'java'), `echo "    java.specification.version = ${version}" >&2`);
  };
  const run = (env: Record<string, string>) => runHackScript('/usr/bin/env', cache, bin, [...Object.entries(env).map(([k, v]) => `${k}=${v}`), SCRIPT]);

  it('fails without Maven, saying it fetches Keycloak', async () => {
    const r = await run({ KEYCLOAK_JVM_DIRS: join(dir, 'jvm', '*') });
    expect(r.code).not.toBe(0);
    expect(r.err).toContain('keycloak: error: Maven (mvn) not found');
    expect(r.out).toBe('');
  });

  it('fails without a JDK of at least 21, naming the version', async () => {
    jdk('jdk-17', 17);
    executable(join(bin, 'mvn'), 'echo "mvn must not be called" >&2; exit 9');
    const r = await run({ KEYCLOAK_JVM_DIRS: join(dir, 'jvm', '*') });
    expect(r.code).not.toBe(0);
    expect(r.err).toContain(`keycloak: error: no JDK 21 or newer found (JAVA_HOME, /usr/lib/jvm); Keycloak ${VERSION} needs one`);
    expect(r.err).not.toContain('must not be called');
  });

  it('fetches nothing once the server is cached, and prints the wrapper', async () => {
    mkdirSync(join(cache, 'keycloak', VERSION), { recursive: true });
    executable(wrapper, 'exit 0');
    const r = await run({});
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toBe(`${wrapper}\n`);
  });

  it('fails when the cached server does not run', async () => {
    executable(wrapper, 'exit 3');
    const r = await run({});
    expect(r.code).not.toBe(0);
    expect(r.err).toContain(`keycloak: error: ${wrapper} does not run`);
  });
});
