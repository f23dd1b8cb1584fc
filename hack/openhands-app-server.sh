#!/usr/bin/env bash
# Installs the real OpenHands application server (the Python package openhands-ai, which brings its
# agent server, SDK and tools) into a virtualenv, for the side-by-side suite in e2e/app-parity: it and
# `agentyard up` are driven with the same flows over /api/v1 and what a client sees is compared.
#
# Cached outside the repository, so a fresh clone on the same machine reuses it:
#   ${AGENTYARD_CACHE:-$HOME/.cache/agentyard}/venv/openhands-ai-<version>/bin/python
# The two local patches it needs to run here with process sandboxes (hack/openhands-app-server-patch.py
# says which and why) are applied to the installed package (at install time, and again at each run:
# idempotent); the venv counts as ready only once they are (the marker file .agentyard-patched). Needs Python >= 3.12 (pyenv's 3.12 or 3.13,
# else python3.12/python3.13/python3 on the PATH) and pip's ordinary index. Idempotent and locked (two
# worktrees may ask at once). Prints the venv's python on stdout (last line); progress goes to stderr.
# Nothing is written inside the repository. Takes about 7 minutes the first time (measured on 2 busy cores).
set -euo pipefail

OPENHANDS_AI_VERSION=${OPENHANDS_AI_VERSION:-1.11.0}
CACHE=${AGENTYARD_CACHE:-$HOME/.cache/agentyard}
VENV="$CACHE/venv/openhands-ai-$OPENHANDS_AI_VERSION"
PY="$VENV/bin/python"
READY="$VENV/.agentyard-patched"
PATCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/openhands-app-server-patch.py"

die() { echo "openhands-app-server: error: $*" >&2; exit 1; }

source "$(dirname "${BASH_SOURCE[0]}")/lib/python.sh"

main() {
  mkdir -p "$CACHE/venv"
  exec 9>"$CACHE/venv/.openhands-ai-$OPENHANDS_AI_VERSION.lock"
  flock 9
  if [[ ! -f "$READY" ]]; then
    if ! "$PY" -c 'import importlib.util as u; import sys; sys.exit(0 if u.find_spec("openhands.app_server") else 1)' 2>/dev/null; then
      local py
      py=$(find_python) || die "no Python >= 3.12 (install one with pyenv)"
      echo "openhands-app-server: installing openhands-ai $OPENHANDS_AI_VERSION with $py (about 7 minutes)" >&2
      rm -rf "$VENV"
      "$py" -m venv "$VENV" >&2 || die "$py -m venv failed"
      "$VENV/bin/pip" install -q --disable-pip-version-check "openhands-ai==$OPENHANDS_AI_VERSION" >&2 \
        || { rm -rf "$VENV"; die "pip install openhands-ai==$OPENHANDS_AI_VERSION failed"; }
    fi
  fi
  # Every time (idempotent, a fraction of a second): a patch added since the install is applied too.
  "$PY" "$PATCH" || { rm -f "$READY"; die "patching openhands-ai $OPENHANDS_AI_VERSION failed (see above)"; }
  touch "$READY"
  echo "$PY"
}

main "$@"
