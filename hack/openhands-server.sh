#!/usr/bin/env bash
# Installs the real OpenHands agent server (the Python package openhands-agent-server, with the SDK
# and tools of the same release) into a virtualenv, for the differential suite in e2e/parity: both
# servers are driven with the same flows and what a client sees is compared.
#
# Cached outside the repository, so a fresh clone on the same machine reuses it:
#   ${AGENTYARD_CACHE:-$HOME/.cache/agentyard}/venv/openhands-agent-server-<version>/bin/agent-server
# Needs Python >= 3.12 (pyenv's 3.12 or 3.13, else python3.12/python3.13/python3 on the PATH) and
# pip's ordinary index. Idempotent and locked (two worktrees may ask at once). Prints the server's
# path on stdout (last line); progress goes to stderr. Nothing is written inside the repository.
set -euo pipefail

OPENHANDS_VERSION=${OPENHANDS_VERSION:-1.58.2}
# openhands-sdk accepts a range of litellm releases; pinned so that a fresh virtualenv lists the same LLM
# models as src/agent-server/llm/catalog.gen.json (generated from this one: hack/gen-llm-catalog.py).
LITELLM_VERSION=${LITELLM_VERSION:-1.105.7}
CACHE=${AGENTYARD_CACHE:-$HOME/.cache/agentyard}
VENV="$CACHE/venv/openhands-agent-server-$OPENHANDS_VERSION"
BIN="$VENV/bin/agent-server"

die() { echo "openhands-server: error: $*" >&2; exit 1; }

source "$(dirname "${BASH_SOURCE[0]}")/lib/python.sh"

main() {
  mkdir -p "$CACHE/venv"
  exec 9>"$CACHE/venv/.openhands-$OPENHANDS_VERSION.lock"
  flock 9
  if [[ ! -x "$BIN" ]] || ! "$VENV/bin/python" -c 'import openhands.agent_server' 2>/dev/null; then
    local py
    py=$(find_python) || die "no Python >= 3.12 (install one with pyenv)"
    echo "openhands-server: installing openhands-agent-server $OPENHANDS_VERSION with $py (a few minutes)" >&2
    rm -rf "$VENV"
    "$py" -m venv "$VENV" >&2 || die "$py -m venv failed"
    "$VENV/bin/pip" install -q --disable-pip-version-check \
      "openhands-agent-server==$OPENHANDS_VERSION" "openhands-sdk==$OPENHANDS_VERSION" "openhands-tools==$OPENHANDS_VERSION" "litellm==$LITELLM_VERSION" >&2 \
      || { rm -rf "$VENV"; die "pip install openhands-agent-server==$OPENHANDS_VERSION failed"; }
  fi
  [[ -x "$BIN" ]] || die "$BIN is missing after the install"
  echo "$BIN"
}

main "$@"
