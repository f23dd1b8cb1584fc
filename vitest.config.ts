import { configDefaults, defineConfig } from 'vitest/config';

// e2e suites that run two at a time, before everything else (sequence.groupOrder 0; the unit and
// the other e2e files run after them, one after another). These wait on child processes (a test
// kube-apiserver and etcd each, Keycloak, helm, build scripts) far more than they compute: on 2
// cores, e2e/kube used ~115 s of CPU in ~300 s of wall time. Their ports come from
// src/testing/ports.ts (random, checked), their files from mkdtemp, and what they share on the
// machine is locked (Keycloak's cached server). Not here, and why:
// - e2e/node: the real node, one suite at a time under its machine-wide lock; beside other suites
//   the story's kill -9 step failed (CI-like run ci26).
// - e2e/embedded, e2e/faults: `agentyard up` with isolated sandboxes, whose uids come from one
//   default range per machine and whose host guard is one nftables table per range;
//   e2e/embedded/isolation probes the host's listeners and saw other runs' servers come and go.
// - e2e/parity, e2e/app-parity, e2e/web: CPU-bound (OpenHands' Python servers, Chromium).
const PAIRED = ['e2e/kube/**/*.test.ts', 'e2e/helm/**/*.test.ts', 'e2e/login/**/*.test.ts', 'e2e/build/**/*.test.ts'];

const e2eTimeouts = { testTimeout: 120_000, hookTimeout: 300_000 };

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['src/**/*.test.ts'],
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: 'e2e-paired',
          include: PAIRED,
          ...e2eTimeouts,
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['e2e/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...PAIRED],
          ...e2eTimeouts,
          fileParallelism: false,
        },
      },
    ],
  },
});
