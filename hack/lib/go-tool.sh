# Sourced by the hack/*.sh scripts that build one Go program from the Go module proxy into the
# cache outside the repository (a fresh clone on the same machine reuses it): the shared Go caches,
# the lock (two worktrees may ask at once), the install into a throwaway GOBIN, and the check that
# the binary runs. Progress goes to stderr; the binary's path is printed on stdout (last line).

CACHE=${AGENTYARD_CACHE:-$HOME/.cache/agentyard}
export GOPATH="$CACHE/go"
export GOMODCACHE="$CACHE/go/pkg/mod"
export GOCACHE="$CACHE/go/build-cache"
export GOFLAGS="-buildvcs=false"
export GOTOOLCHAIN=local
export CGO_ENABLED=0

# go_tool <log name> <binary path> <package@version> <ldflags> <arguments that make it print its version>...
go_tool() {
  # Parameter expansion, not dirname/basename: the scripts' tests run them on a bare PATH.
  local name=$1 bin=$2 pkg=$3 ldflags=$4 dir=${2%/*} module=${3%@*}
  shift 4
  command -v go >/dev/null || { echo "$name: error: Go toolchain not found (needed to build $pkg)" >&2; exit 1; }
  mkdir -p "$dir"
  exec 9>"$dir/.lock"
  flock 9
  if [[ ! -x "$bin" ]]; then
    echo "$name: building $pkg from Go modules" >&2
    local tmp
    tmp=$(mktemp -d)
    if ! GOBIN="$tmp" go install -trimpath -ldflags "$ldflags" "$pkg" >&2; then
      rm -rf "$tmp"
      echo "$name: error: go install $pkg failed" >&2
      exit 1
    fi
    mv "$tmp/${module##*/}" "$bin"
    rm -rf "$tmp"
  fi
  "$bin" "$@" >/dev/null 2>&1 || { echo "$name: error: $bin does not run" >&2; exit 1; }
  echo "$bin"
}
