#!/usr/bin/env bash
# A real ACP agent for the ACP suites (src/agent-server/acp/*.test.ts and the ACP flows of e2e/parity):
# opencode (the npm package opencode-ai, the version OpenHands 1.58.2's install catalog pins), whose
# `opencode acp` speaks the Agent Client Protocol over stdio. The tests point it at the scripted
# model server through its config file, so no real provider is ever reached.
#
# Cached outside the repository, so a fresh clone on the same machine reuses it:
#   ${AGENTYARD_CACHE:-$HOME/.cache/agentyard}/acp/opencode-<version>/node_modules/.bin/opencode
# Idempotent and locked (two worktrees may ask at once). Prints the binary's path on stdout (last
# line); progress goes to stderr. Nothing is written inside the repository.
set -euo pipefail

OPENCODE_VERSION=${OPENCODE_VERSION:-1.18.23}
CACHE=${AGENTYARD_CACHE:-$HOME/.cache/agentyard}
dir="$CACHE/acp/opencode-$OPENCODE_VERSION"
bin="$dir/node_modules/.bin/opencode"

mkdir -p "$dir"
exec 9>"$dir/.lock"
flock 9
if [[ ! -x "$bin" ]] || ! "$bin" --version >/dev/null 2>&1; then
  command -v npm >/dev/null || { echo "acp-agent: error: npm not found" >&2; exit 1; }
  echo "acp-agent: installing opencode-ai@$OPENCODE_VERSION (npm)" >&2
  rm -rf "$dir/node_modules" "$dir/package.json" "$dir/package-lock.json"
  (cd "$dir" && npm init -y >/dev/null && npm install --no-audit --no-fund --loglevel=error "opencode-ai@$OPENCODE_VERSION" >&2) \
    || { rm -rf "$dir/node_modules"; echo "acp-agent: error: npm install opencode-ai@$OPENCODE_VERSION failed" >&2; exit 1; }
fi
"$bin" --version >/dev/null 2>&1 || { echo "acp-agent: error: $bin does not run" >&2; exit 1; }
echo "$bin"
