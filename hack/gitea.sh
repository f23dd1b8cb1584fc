#!/usr/bin/env bash
# Builds Gitea (code.gitea.io/gitea, a self-hosted git server whose API is the one Forgejo forked and
# keeps compatible) from the Go module proxy: the real git provider behind the `forgejo` app-API git
# routes' tests (src/testing/gitea, src/facade git routes, e2e/app-parity).
#
# Cached outside the repository, like hack/seaweedfs.sh, so a fresh clone on the same machine reuses it:
#   ${AGENTYARD_CACHE:-$HOME/.cache/agentyard}/gitea/<version>/gitea    the binary
#   ${AGENTYARD_CACHE:-$HOME/.cache/agentyard}/gitea/<version>/src      its module source (a writable copy)
# The binary is built without the `bindata` tag, so templates, locales and options are read from disk
# at run time: the harness points Gitea's static/custom roots at src/ (the API needs no web assets, but
# Gitea loads its locale and option files on start).
# Idempotent and locked. Prints the binary's path on stdout (last line); progress goes to stderr.
# The first build, measured in Nov 2026 with the Go build cache the other hack/ builds share (some
# dependencies already compiled) and Gitea's modules downloaded fresh: 31 minutes on 2 cores shared at load 15-19 (CPU: user 5m03s +
# sys 47s); the binary is 105 MB, the source copy 51 MB. A cached run returns in 0.2 s.
#
# Not `go install pkg@version`: Gitea's go.mod carries replace directives, which go install refuses.
# The module is downloaded into the module cache, copied (the module cache is read-only) and built
# there as the main module, so those directives apply exactly as its authors build it. SQLite needs
# cgo (mattn/go-sqlite3) and the `sqlite sqlite_unlock_notify` tags, as Gitea's own Makefile sets.
set -euo pipefail
source "${0%/*}/lib/go-tool.sh"
export CGO_ENABLED=1

GITEA_VERSION=${GITEA_VERSION:-v1.26.0}
MODULE=code.gitea.io/gitea
TAGS="sqlite sqlite_unlock_notify"
root="$CACHE/gitea/$GITEA_VERSION"
bin="$root/gitea"

command -v go >/dev/null || { echo "gitea: error: Go toolchain not found (needed to build $MODULE)" >&2; exit 1; }
command -v cc >/dev/null || command -v gcc >/dev/null || { echo "gitea: error: no C compiler (cgo SQLite)" >&2; exit 1; }
mkdir -p "$root"
exec 9>"$root/.lock"
flock 9
if [[ ! -x "$bin" ]]; then
  echo "gitea: building $MODULE@$GITEA_VERSION from Go modules (cgo, tags: $TAGS)" >&2
  dir=$(cd "${TMPDIR:-/tmp}" && go mod download -json "$MODULE@$GITEA_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [[ -n "$dir" && -d "$dir" ]] || { echo "gitea: error: go mod download $MODULE@$GITEA_VERSION failed" >&2; exit 1; }
  rm -rf "$root/src" "$root/src.tmp"
  cp -R "$dir" "$root/src.tmp"
  chmod -R u+w "$root/src.tmp"
  mv "$root/src.tmp" "$root/src"
  tmp=$(mktemp "$root/gitea.XXXXXX")
  if ! (cd "$root/src" && nice go build -trimpath -tags "$TAGS" \
      -ldflags "-s -w -X main.MakeVersion=agentyard -X main.Version=${GITEA_VERSION#v} -X 'main.Tags=$TAGS'" \
      -o "$tmp" .) >&2; then
    rm -f "$tmp"
    echo "gitea: error: go build $MODULE failed" >&2
    exit 1
  fi
  mv "$tmp" "$bin"
fi
"$bin" --version >/dev/null 2>&1 || { echo "gitea: error: $bin does not run" >&2; exit 1; }
echo "$bin"
