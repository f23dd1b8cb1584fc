#!/usr/bin/env bash
# System packages some suites need beyond npm and Go, from Debian's packages:
#   chromium  - the browser tools of the agent and the web-route tests (driven by playwright-core)
#   postgresql - the external app store tests (a throwaway server started by the test harness)
#   git       - repositories, clones and the local git HTTP server
#   patchelf, bubblewrap, debootstrap - the agent bundle and the Node-less root filesystems it is
#               tested in (e2e/build/agent-bundle.test.ts; hack/sandbox-rootfs.sh builds them, cached);
#               bubblewrap also isolates embedded sandboxes (a user and namespaces of their own each)
#   passt     - pasta: a network namespace of its own per embedded sandbox (e2e/embedded/isolation.test.ts)
#   iproute2  - ip: the routes that keep such a sandbox from the host's own addresses
#   nftables  - nft: the rule that keeps it from them over time (also needed by the node, below)
#   containerd, runc, containernetworking-plugins, iptables, nftables, conntrack - the real test
#               node of e2e/node (hack/k8s-node.sh, e2e/node/node.ts)
#   buildah, debootstrap, gcc + libc6-dev (a static pause) - its images, built without a registry
# Idempotent and quick when everything is present. Without root or apt it only reports what is
# missing; the suites that need a missing program then skip with a message naming it.
set -uo pipefail

need=()
command -v chromium >/dev/null || [ -x /usr/bin/chromium ] || need+=(chromium)
[ -n "$(ls /usr/lib/postgresql/*/bin/postgres 2>/dev/null)" ] || need+=(postgresql)
[ -x /usr/lib/git-core/git-http-backend ] || need+=(git)
command -v patchelf >/dev/null || need+=(patchelf)
command -v bwrap >/dev/null || need+=(bubblewrap)
command -v pasta >/dev/null || need+=(passt)
command -v ip >/dev/null || [ -x /usr/sbin/ip ] || need+=(iproute2)
command -v debootstrap >/dev/null || need+=(debootstrap)
rootfs() { "$(dirname "$0")/sandbox-rootfs.sh" || echo "test-deps: no sandbox root filesystems (hack/sandbox-rootfs.sh failed)" >&2; }
for tool in containerd runc buildah iptables nft conntrack gcc; do
  command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] || need+=("$tool")
done
need=("${need[@]/#nft/nftables}")
[ -x /usr/lib/cni/bridge ] || need+=(containernetworking-plugins)
[ -e /usr/lib/x86_64-linux-gnu/libc.a ] || [ -e /usr/lib/aarch64-linux-gnu/libc.a ] || need+=(libc6-dev)

[ ${#need[@]} -eq 0 ] && { rootfs; exit 0; }
echo "test-deps: installing ${need[*]}" >&2
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "test-deps: cannot install ${need[*]} (needs root and apt-get)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null 2>&1 \
  || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null; }
installed=$?
rootfs
exit $installed
