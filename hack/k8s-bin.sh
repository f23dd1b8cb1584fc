#!/usr/bin/env bash
# Builds the real Kubernetes control plane the e2e suites run against: kube-apiserver and
# kube-controller-manager (owner-reference garbage collection) from the Go module proxy, etcd from
# Debian's etcd-server package (built from Go modules when apt cannot provide it), helm v4, and
# helm v3 (as helm3, only to test that the chart refuses it). Exits non-zero when any is missing.
#
# The cache lives outside the repository so a fresh clone on the same machine (CI) reuses it:
#   ${AGENTYARD_CACHE:-$HOME/.cache/agentyard}/k8s/<version>/bin
# Idempotent: binaries already present are not rebuilt. Prints the bin dir on stdout (last line);
# progress goes to stderr. Nothing is written inside the repository.
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-1.34.4}    # k8s.io/kubernetes; staging modules are v0.<minor>.<patch>
ETCD_VERSION=${ETCD_VERSION:-3.6.16}  # only used when Debian's etcd-server is unavailable
HELM_VERSION=${HELM_VERSION:-4.3.1}
HELM3_VERSION=${HELM3_VERSION:-3.19.0} # only to test that the chart refuses Helm < 4 clearly
ETCD_FROM=${ETCD_FROM:-debian}        # debian (etcd-server package, Go build as fallback) or go

CACHE=${AGENTYARD_CACHE:-$HOME/.cache/agentyard}
ROOT="$CACHE/k8s/$K8S_VERSION"
BIN="$ROOT/bin"
WORK="$ROOT/work"

# Go caches under the cache dir, so a fresh clone never downloads or compiles twice.
export GOPATH="$CACHE/go"
export GOMODCACHE="$CACHE/go/pkg/mod"
export GOCACHE="$CACHE/go/build-cache"
export GOFLAGS="-mod=mod -buildvcs=false"
export GOTOOLCHAIN=local
export CGO_ENABLED=0

# hack/k8s-node.sh sources this file for the settings above and the wrapper module below; its
# messages then carry its own name.
LOG_NAME=${LOG_NAME:-k8s-bin}
log() { echo "$LOG_NAME: $*" >&2; }
die() { echo "$LOG_NAME: error: $*" >&2; exit 1; }

minor=$(cut -d. -f2 <<<"$K8S_VERSION")
staging="0.${K8S_VERSION#*.}"

# The wrapper module every Kubernetes component is built from (k8s.io/kubernetes itself cannot be
# `go install`ed: it has replace directives). Done once; later calls only cd into it.
kube_module() {
  local mod="$WORK/kube"
  mkdir -p "$mod"
  cd "$mod"
  grep -q "k8s.io/kubernetes v$K8S_VERSION" go.mod 2>/dev/null && return 0
  [[ -f go.mod ]] || go mod init local/k8sbin >/dev/null 2>&1
  log "resolving k8s.io/kubernetes@v$K8S_VERSION"
  local info gomod
  info=$(go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" || true)
  gomod=$(sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p' <<<"$info")
  [[ -f "$gomod" ]] || die "could not download k8s.io/kubernetes@v$K8S_VERSION from the Go module proxy: $(grep '"Error"' <<<"$info")"
  # k8s.io/kubernetes requires its staging modules at v0.0.0 with local replaces; point each
  # at its published version. The list comes from upstream's own replace block.
  local m
  for m in $(grep -oE 'k8s.io/[a-z0-9-]+ => ./staging' "$gomod" | awk '{print $1}'); do
    go mod edit -replace "$m=$m@v$staging"
  done
  go get "k8s.io/kubernetes@v$K8S_VERSION" >&2
}

# Compiles k8s.io/kubernetes/cmd/<name> for each name into $BIN, from the wrapper module.
build_kube_cmds() {
  kube_module || return 1
  local ldf="-s -w -X k8s.io/component-base/version.gitVersion=v$K8S_VERSION \
    -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor \
    -X k8s.io/component-base/version.gitTreeState=clean \
    -X k8s.io/client-go/pkg/version.gitVersion=v$K8S_VERSION"
  local name pkgs=()
  for name in "$@"; do pkgs+=("k8s.io/kubernetes/cmd/$name"); done
  log "compiling $* (slow on a cold cache)"
  go build -trimpath -ldflags "$ldf" -o "$WORK/out/" "${pkgs[@]}" >&2 || return 1
  for name in "$@"; do mv "$WORK/out/$name" "$BIN/"; done
}

build_kube() {
  build_kube_cmds kube-apiserver kube-controller-manager
}

# kubectl, so e2e suites can use the resources the way people do (apply, get, describe).
build_kubectl() {
  kube_module || return 1
  log "compiling kubectl"
  go build -trimpath -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=v$K8S_VERSION -X k8s.io/client-go/pkg/version.gitVersion=v$K8S_VERSION" \
    -o "$BIN/kubectl" k8s.io/kubernetes/cmd/kubectl >&2
}

etcd_from_debian() {
  command -v apt-get >/dev/null || return 1
  local tmp
  tmp=$(mktemp -d)
  # Download and unpack rather than install: installing may start a system etcd on :2379.
  if ! (cd "$tmp" && apt-get download etcd-server >&2 2>/dev/null); then
    [[ $(id -u) == 0 ]] && apt-get update -qq >&2 || true
    (cd "$tmp" && apt-get download etcd-server >&2) || { rm -rf "$tmp"; return 1; }
  fi
  dpkg-deb -x "$tmp"/etcd-server_*.deb "$tmp/x" || { rm -rf "$tmp"; return 1; }
  local version
  version=$("$tmp/x/usr/bin/etcd" --version 2>/dev/null | sed -n 's/^etcd Version: //p')
  # kube-apiserver 1.33/1.34 needs etcd >= 3.4.22 (docs); 3.4.23 works with a logged fallback
  # for consistent lists. Newer Kubernetes (1.35+) needs >= 3.4.31 / 3.5.13.
  case "$version" in
    3.4.2[2-9]|3.4.[3-9]*|3.5.*|3.6.*) ;;
    *) log "Debian etcd-server is $version, too old"; rm -rf "$tmp"; return 1 ;;
  esac
  install -m 0755 "$tmp/x/usr/bin/etcd" "$BIN/etcd"
  rm -rf "$tmp"
  log "etcd $version from Debian's etcd-server"
}

etcd_from_go() {
  # go.etcd.io/etcd/server/v3 has replace directives, so `go install` refuses it; build it from
  # a wrapper module instead (server/main.go is package main).
  local mod="$WORK/etcd"
  mkdir -p "$mod"
  cd "$mod"
  [[ -f go.mod ]] || go mod init local/etcdbin >/dev/null 2>&1
  local m
  for m in api/v3 client/pkg/v3 client/v3 pkg/v3 server/v3; do
    go mod edit -require "go.etcd.io/etcd/$m@v$ETCD_VERSION"
  done
  go get "go.etcd.io/etcd/server/v3@v$ETCD_VERSION" >&2
  go build -trimpath -ldflags "-s -w" -o "$BIN/etcd" go.etcd.io/etcd/server/v3 >&2
  log "etcd $ETCD_VERSION built from Go modules"
}

build_helm() {
  GOBIN="$BIN" go install -trimpath \
    -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=v$HELM_VERSION" \
    "helm.sh/helm/v4/cmd/helm@v$HELM_VERSION" >&2
}

# Helm 3 as bin/helm3, only for the test that the chart refuses Helm < 4 with a clear message.
build_helm3() {
  local tmp
  tmp=$(mktemp -d)
  GOBIN="$tmp" go install -trimpath \
    -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=v$HELM3_VERSION" \
    "helm.sh/helm/v3/cmd/helm@v$HELM3_VERSION" >&2 && mv "$tmp/helm" "$BIN/helm3"
  local rc=$?
  rm -rf "$tmp"
  return $rc
}

# Everything runs from main, called on the last line: bash reads a script as it goes, so a
# checkout that changes this file during a long build must not change what the rest of it does.
main() {
  command -v go >/dev/null || die "Go toolchain not found (Go >= 1.25 needed to build Kubernetes $K8S_VERSION)"
  mkdir -p "$BIN" "$WORK"

  # One build at a time per cache: CI and a developer may start this together.
  exec 9>"$ROOT/.lock"
  flock 9

  local start=$SECONDS
  if [[ ! -x "$BIN/kube-apiserver" || ! -x "$BIN/kube-controller-manager" ]]; then
    build_kube || die "building kube-apiserver/kube-controller-manager v$K8S_VERSION failed"
  fi
  if [[ ! -x "$BIN/etcd" ]]; then
    { [[ $ETCD_FROM == debian ]] && etcd_from_debian; } || etcd_from_go || die "could not get etcd (Debian etcd-server or go.etcd.io v$ETCD_VERSION)"
  fi
  if [[ ! -x "$BIN/kubectl" ]]; then
    build_kubectl || die "building kubectl v$K8S_VERSION failed"
  fi
  if [[ ! -x "$BIN/helm" ]]; then
    build_helm || die "building helm v$HELM_VERSION failed"
  fi
  if [[ ! -x "$BIN/helm3" ]]; then
    build_helm3 || die "building helm v$HELM3_VERSION (bin/helm3, for the Helm < 4 refusal test) failed"
  fi

  "$BIN/kube-apiserver" --version >/dev/null 2>&1 || die "$BIN/kube-apiserver does not run"
  if (( SECONDS - start > 1 )); then log "done in $((SECONDS - start)) s"; fi
  echo "$BIN"
}

[[ -n ${K8S_BIN_SOURCED:-} ]] || { main "$@"; exit; }
