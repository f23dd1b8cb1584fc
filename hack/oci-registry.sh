#!/usr/bin/env bash
# Builds the CNCF Distribution registry (github.com/distribution/distribution/v3, the reference OCI
# registry) from the Go module proxy, for the licensed chart pull tests in e2e/helm/registry.test.ts.
#
# Cached outside the repository, like hack/k8s-bin.sh, so a fresh clone on the same machine reuses it:
#   ${AGENTYARD_CACHE:-$HOME/.cache/agentyard}/registry/<version>/registry
# Idempotent and locked (two worktrees may ask at once). Prints the binary's path on stdout (last
# line); progress goes to stderr. Nothing is written inside the repository.
set -euo pipefail

REGISTRY_VERSION=${REGISTRY_VERSION:-3.0.0}

CACHE=${AGENTYARD_CACHE:-$HOME/.cache/agentyard}
ROOT="$CACHE/registry/$REGISTRY_VERSION"
BIN="$ROOT/registry"

export GOPATH="$CACHE/go"
export GOMODCACHE="$CACHE/go/pkg/mod"
export GOCACHE="$CACHE/go/build-cache"
export GOFLAGS="-buildvcs=false"
export GOTOOLCHAIN=local
export CGO_ENABLED=0

die() { echo "oci-registry: error: $*" >&2; exit 1; }

main() {
  command -v go >/dev/null || die "Go toolchain not found (needed to build the registry v$REGISTRY_VERSION)"
  mkdir -p "$ROOT"
  exec 9>"$ROOT/.lock"
  flock 9
  if [[ ! -x "$BIN" ]]; then
    echo "oci-registry: building github.com/distribution/distribution/v3 v$REGISTRY_VERSION from Go modules" >&2
    local tmp
    tmp=$(mktemp -d)
    GOBIN="$tmp" go install -trimpath -ldflags "-s -w" \
      "github.com/distribution/distribution/v3/cmd/registry@v$REGISTRY_VERSION" >&2 || { rm -rf "$tmp"; die "go install github.com/distribution/distribution/v3/cmd/registry@v$REGISTRY_VERSION failed"; }
    mv "$tmp/registry" "$BIN"
    rm -rf "$tmp"
  fi
  "$BIN" --version >/dev/null 2>&1 || die "$BIN does not run"
  echo "$BIN"
}

main "$@"; exit
