#!/usr/bin/env bash
# Builds the CNCF Distribution registry (github.com/distribution/distribution/v3, the reference OCI
# registry) from the Go module proxy, for the licensed chart pull tests in e2e/helm/registry.test.ts.
#
# Cached outside the repository, like hack/k8s-bin.sh, so a fresh clone on the same machine reuses it:
#   ${AGENTYARD_CACHE:-$HOME/.cache/agentyard}/registry/<version>/registry
# Idempotent and locked (hack/lib/go-tool.sh). Prints the binary's path on stdout (last line);
# progress goes to stderr. Nothing is written inside the repository.
set -euo pipefail
source "${0%/*}/lib/go-tool.sh"

REGISTRY_VERSION=${REGISTRY_VERSION:-3.0.0}

go_tool oci-registry "$CACHE/registry/$REGISTRY_VERSION/registry" \
  "github.com/distribution/distribution/v3/cmd/registry@v$REGISTRY_VERSION" "-s -w" --version
