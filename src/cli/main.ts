#!/usr/bin/env node
// `agentyard <command>`: one binary for every process of the system.
import { enableCompileCache, flushCompileCache } from 'node:module';

// Node's on-disk compile cache (V8 code cache of every module, ours after type stripping too): a
// second start skips parsing and compiling the ~1,000 modules a command loads (issue #16). Where
// the cache directory cannot be written (a read-only root) Node says so in the result and runs on
// without it. NODE_COMPILE_CACHE chooses the directory, NODE_DISABLE_COMPILE_CACHE=1 turns it off.
if (!process.env['NODE_DISABLE_COMPILE_CACHE']) enableCompileCache();

/**
 * A command's modules, once loaded. Node keeps the compile cache entry of every module it loaded
 * (the code cache read from disk, our stripped TypeScript) in memory until exit, to write back the
 * new ones then: 4-7 MiB of malloc for the life of the process (heaptrack of an agent server). A
 * flush writes the new entries now and frees them all; modules loaded later (lazily) read theirs
 * from disk as before (issue #16).
 */
async function loaded<T>(module: Promise<T>): Promise<T> {
  const m = await module;
  flushCompileCache();
  return m;
}

/**
 * The agent server's largest parts of its module graph, loaded (and flushed) one after another
 * before the rest: the entries a flush frees stay resident in malloc until something reuses them,
 * and each stage's allocations reuse the previous stage's (idle RSS 100-101 -> 95-97 MiB, glibc's
 * heap 14 -> 8-9 MiB, after 100 steps 116-119 -> 113-114; bench/RESULTS.md). Every stage is
 * imported by the agent server anyway: the order changes nothing else.
 */
const AGENT_SERVER_LOAD_STAGES: (() => Promise<unknown>)[] = [() => import('typebox'), () => import('../api/events/index.ts'), () => import('../agent/agent.ts'), () => import('../agent-server/app.ts')];
const USAGE = `Usage: agentyard <command> [options]

Commands:
  up             Run everything on this machine: API, controller and sandboxes as local processes (SQLite).
                 --port <n> (AGENTYARD_PORT, default 3000)  --data-dir <dir> (AGENTYARD_DATA_DIR, default ./.data)
                 OpenID Connect login (README "Login"; also for api): --oidc-issuer <url> --oidc-client-id <id>
                 [--oidc-client-secret-file <file>] [--oidc-admin-group <group>] [--oidc-role-claim <claim>]
                 [--public-url <url>] (AGENTYARD_OIDC_ISSUER, AGENTYARD_OIDC_CLIENT_ID, AGENTYARD_OIDC_CLIENT_SECRET[_FILE],
                 AGENTYARD_OIDC_ADMIN_GROUP, AGENTYARD_OIDC_ROLE_CLAIM, AGENTYARD_PUBLIC_URL)
  preflight      Check a cluster for what agentyard needs (CRDs, namespaces, storage class, URL settings,
                 secrets, RBAC) and say how to fix what is missing. Exit 1 when a check fails.
  support-bundle Collect versions, resource states, events and logs (secrets redacted) into one archive.
                 [-o <file>] [-n <namespace>] [--upload <https-url> [--ca-file <pem>] [--upload-secret <name>]]
                 The upload authenticates with AGENTYARD_SUPPORT_UPLOAD_TOKEN or the Secret
                 agentyard-support-upload (key token) in the release namespace.
  uninstall-cleanup  Delete every Conversation and Sandbox in the sandbox namespace and wait until the
                 controller has finalized them (the chart's pre-delete hook). [-n <namespace>] [--timeout <s>]
                 [--delete-archives] (also delete the agentyard-archive PVC)
  archive-upload Tar a workspace and PUT it to the presigned URL in AGENTYARD_ARCHIVE_UPLOAD_URL (the
                 workspace archive Pod, with an object store). --dir <dir>
  users          Manage users and API keys of an embedded installation (users create <name>, add-key, keys).
  agent-server   Run the agent server that executes agents inside a sandbox.
                 --port <n>  --workspace <dir>  [--data-dir <dir>]
  controller     Run the Kubernetes operator (reconciles Sandbox and Conversation resources; leader-elected).
                 In cluster or with KUBECONFIG. Needs STORAGE_CLASS, AGENTYARD_SANDBOX_IMAGE, RUNTIME_BASE_URL.
  api            Run the application API over the cluster's custom resources.
  help           Show this text.
`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'up': {
      const { runUp } = await loaded(import('./up.ts'));
      return runUp(rest);
    }
    case 'preflight': {
      const { runPreflightCli } = await loaded(import('./preflight/main.ts'));
      return runPreflightCli(rest);
    }
    case 'support-bundle': {
      const { runSupportBundleCli } = await loaded(import('./support-bundle.ts'));
      return runSupportBundleCli(rest);
    }
    case 'uninstall-cleanup': {
      const { runUninstallCleanupCli } = await loaded(import('./uninstall-cleanup.ts'));
      return runUninstallCleanupCli(rest);
    }
    case 'archive-upload': {
      const { runArchiveUploadCli } = await loaded(import('./archive-upload.ts'));
      return runArchiveUploadCli(rest);
    }
    case 'users': {
      const { runUsersCli } = await loaded(import('./users.ts'));
      return runUsersCli(rest);
    }
    case 'agent-server': {
      for (const stage of AGENT_SERVER_LOAD_STAGES) await loaded(stage());
      const { runAgentServerCli } = await loaded(import('../agent-server/main.ts'));
      return runAgentServerCli(rest);
    }
    case 'controller': {
      const { runControllerCli } = await loaded(import('./cluster.ts'));
      return runControllerCli(rest);
    }
    case 'api': {
      const { runApiCli } = await loaded(import('./cluster.ts'));
      return runApiCli(rest);
    }
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE);
      return command === undefined ? 2 : 0;
    default:
      process.stderr.write(`agentyard: unknown command '${command}'\n\n${USAGE}`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    // Long-running commands resolve only when they have shut down.
    if (code !== 0) process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`agentyard: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
