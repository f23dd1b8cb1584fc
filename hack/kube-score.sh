#!/usr/bin/env bash
# Builds kube-score (github.com/zegl/kube-score, an outside best-practice checker for Kubernetes
# manifests) from the Go module proxy, for the chart check in e2e/helm/kube-score.test.ts.
#
# Cached outside the repository, like hack/k8s-bin.sh, so a fresh clone on the same machine reuses it:
#   ${AGENTYARD_CACHE:-$HOME/.cache/agentyard}/kube-score/<version>/kube-score
# Idempotent and locked (hack/lib/go-tool.sh). Prints the binary's path on stdout (last line);
# progress goes to stderr. Nothing is written inside the repository.
set -euo pipefail
source "${0%/*}/lib/go-tool.sh"

KUBE_SCORE_VERSION=${KUBE_SCORE_VERSION:-1.20.0}

go_tool kube-score "$CACHE/kube-score/$KUBE_SCORE_VERSION/kube-score" \
  "github.com/zegl/kube-score/cmd/kube-score@v$KUBE_SCORE_VERSION" "-s -w -X main.version=$KUBE_SCORE_VERSION" version
