#!/usr/bin/env bash
# Builds SeaweedFS (github.com/seaweedfs/seaweedfs, an S3-compatible object store) from the Go module
# proxy: the real S3 server behind the object-store tests (src/objstore/s3-store.test.ts, e2e) and
# the server the chart's bundled object store runs.
#
# Cached outside the repository, like hack/oci-registry.sh, so a fresh clone on the same machine reuses it:
#   ${AGENTYARD_CACHE:-$HOME/.cache/agentyard}/seaweedfs/<version>/weed
# Idempotent and locked. Prints the binary's path on stdout (last line); progress goes to stderr.
# Nothing is written inside the repository. The first build is the largest of `make test`: ~1,480
# packages, ~475 s of CPU (user 409 s + sys 65 s, 2.2 GB peak memory), measured with empty module and
# build caches in Nov 2026 — about 5 minutes on 2 idle cores, 32 minutes on 2 cores shared at load
# 20-26; the modules (3.4 GB, the whole graph) download in ~40 s. It is already as small as SeaweedFS
# allows: no build tags are set (every optional store — rocksdb, tikv, ydb, sqlite, elastic, gocdk... —
# sits behind a tag that is off), and -trimpath -ldflags "-s -w" is all the linker can drop.
#
# Not `go install pkg@version` (hack/lib/go-tool.sh): SeaweedFS's go.mod carries a replace directive,
# which go install refuses. The module is downloaded into the module cache and built there as the
# main module, so that directive applies exactly as its authors build it.
set -euo pipefail
source "${0%/*}/lib/go-tool.sh"

# The module publishes no tagged Go versions; this is the pseudo-version of a November 2026 commit.
SEAWEEDFS_VERSION=${SEAWEEDFS_VERSION:-v0.0.0-20261109003541-7506e5f91cd6}
MODULE=github.com/seaweedfs/seaweedfs
bin="$CACHE/seaweedfs/$SEAWEEDFS_VERSION/weed"

command -v go >/dev/null || { echo "seaweedfs: error: Go toolchain not found (needed to build $MODULE)" >&2; exit 1; }
mkdir -p "${bin%/*}"
exec 9>"${bin%/*}/.lock"
flock 9
if [[ ! -x "$bin" ]]; then
  echo "seaweedfs: building $MODULE@$SEAWEEDFS_VERSION from Go modules" >&2
  dir=$(cd "${TMPDIR:-/tmp}" && go mod download -json "$MODULE@$SEAWEEDFS_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [[ -n "$dir" && -d "$dir" ]] || { echo "seaweedfs: error: go mod download $MODULE@$SEAWEEDFS_VERSION failed" >&2; exit 1; }
  tmp=$(mktemp "${bin%/*}/weed.XXXXXX")
  if ! (cd "$dir" && go build -trimpath -ldflags "-s -w" -o "$tmp" ./weed) >&2; then
    rm -f "$tmp"
    echo "seaweedfs: error: go build $MODULE/weed failed" >&2
    exit 1
  fi
  mv "$tmp" "$bin"
fi
"$bin" version >/dev/null 2>&1 || { echo "seaweedfs: error: $bin does not run" >&2; exit 1; }
echo "$bin"
