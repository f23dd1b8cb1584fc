// Suites that need a program npm cannot install (the Kubernetes binaries and helm from
// hack/k8s-bin.sh, Debian's PostgreSQL from hack/test-deps.sh) skip when it is missing, so that
// `npx vitest run` works on any machine. `make test` sets AGENTYARD_REQUIRE_CLUSTER_TESTS=1 where
// those programs can be had (Go installed) and CI may set it too: then a missing program fails the
// suite, naming what to run, instead of letting a run pass with the cluster suites silently skipped.

export const REQUIRE_ENV = 'AGENTYARD_REQUIRE_CLUSTER_TESTS';

export function clusterTestsRequired(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[REQUIRE_ENV] === '1';
}

/** A program a required suite needs is missing. */
export class MissingTestProgram extends Error {
  override name = 'MissingTestProgram';
}

/**
 * `found` itself; undefined (the suite skips) when it is missing, unless the cluster suites are
 * required, in which case it throws at collection time and the suite file fails with the fix.
 */
export function requiredForTests<T>(found: T | undefined, what: string, fix: string, env: NodeJS.ProcessEnv = process.env): T | undefined {
  if (found !== undefined || !clusterTestsRequired(env)) return found;
  throw new MissingTestProgram(`${REQUIRE_ENV}=1 (cluster suites required), but missing: ${what}. Fix: ${fix}`);
}
