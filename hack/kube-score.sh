#!/usr/bin/env bash
# Builds kube-score (github.com/zegl/kube-score, an outside best-practice checker for Kubernetes
# manifests) from the Go module proxy, for the chart check in e2e/helm/kube-score.test.ts.
#
# Cached outside the repository, like hack/k8s-bin.sh, so a fresh clone on the same machine reuses it:
#   ${AGENTYARD_CACHE:-$HOME/.cache/agentyard}/kube-score/<version>/kube-score
# Idempotent and locked (two worktrees may ask at once). Prints the binary's path on stdout (last
# line); progress goes to stderr. Nothing is written inside the repository.
set -euo pipefail

KUBE_SCORE_VERSION=${KUBE_SCORE_VERSION:-1.20.0}

CACHE=${AGENTYARD_CACHE:-$HOME/.cache/agentyard}
ROOT="$CACHE/kube-score/$KUBE_SCORE_VERSION"
BIN="$ROOT/kube-score"

export GOPATH="$CACHE/go"
export GOMODCACHE="$CACHE/go/pkg/mod"
export GOCACHE="$CACHE/go/build-cache"
export GOFLAGS="-buildvcs=false"
export GOTOOLCHAIN=local
export CGO_ENABLED=0

die() { echo "kube-score: error: $*" >&2; exit 1; }

main() {
  command -v go >/dev/null || die "Go toolchain not found (needed to build kube-score v$KUBE_SCORE_VERSION)"
  mkdir -p "$ROOT"
  exec 9>"$ROOT/.lock"
  flock 9
  if [[ ! -x "$BIN" ]]; then
    echo "kube-score: building v$KUBE_SCORE_VERSION from Go modules" >&2
    local tmp
    tmp=$(mktemp -d)
    GOBIN="$tmp" go install -trimpath -ldflags "-s -w -X main.version=$KUBE_SCORE_VERSION" \
      "github.com/zegl/kube-score/cmd/kube-score@v$KUBE_SCORE_VERSION" >&2 || { rm -rf "$tmp"; die "go install github.com/zegl/kube-score/cmd/kube-score@v$KUBE_SCORE_VERSION failed"; }
    mv "$tmp/kube-score" "$BIN"
    rm -rf "$tmp"
  fi
  "$BIN" version >/dev/null 2>&1 || die "$BIN does not run"
  echo "$BIN"
}

main "$@"; exit
