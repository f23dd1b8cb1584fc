#!/usr/bin/env bash
# Minimal root filesystems without Node, to prove that the agent bundle
# (src/runtime/kubernetes/agent-bundle.sh) is self-contained (e2e/build/agent-bundle.test.ts runs
# it in them under bubblewrap):
#   busybox   a statically linked busybox and nothing else: no libc, no /lib at all
#   minbase   `debootstrap --variant=minbase` of this host's suite from apt's configured mirror
#             (bash, glibc, no Node); a few minutes, once
# Cached in ${AGENTYARD_CACHE:-$HOME/.cache/agentyard}/rootfs/<name>, shared by all worktrees,
# built under a lock. Needs root and apt (Debian's busybox-static, debootstrap).
#   hack/sandbox-rootfs.sh [busybox] [minbase]     (default: both)
set -euo pipefail
CACHE=${AGENTYARD_CACHE:-$HOME/.cache/agentyard}
DIR=$CACHE/rootfs
mkdir -p "$DIR"
exec 9>"$DIR/.lock"
flock 9

log() { echo "sandbox-rootfs: $*" >&2; }

# Where the test mounts things (a read-only root cannot have them made on the fly): the bundle's
# parts, the workspace, and the kernel file systems.
mountpoints() { mkdir -p "$1"/{proc,dev,tmp,workspace} "$1"/agentyard/{bin,lib,app}; }

busybox() {
  [[ -x $DIR/busybox/bin/busybox ]] && { mountpoints "$DIR/busybox"; return 0; }
  local tmp
  tmp=$(mktemp -d)
  (cd "$tmp" && apt-get download busybox-static >/dev/null 2>&1) \
    || { apt-get update -q >/dev/null 2>&1 && (cd "$tmp" && apt-get download busybox-static >/dev/null); }
  dpkg-deb -x "$tmp"/busybox-static_*.deb "$tmp/pkg"
  mkdir -p "$tmp/root/bin" "$tmp/root/tmp" "$tmp/root/etc"
  cp "$tmp/pkg/bin/busybox" "$tmp/root/bin/busybox"
  for applet in $("$tmp/root/bin/busybox" --list); do
    [[ $applet == busybox ]] || ln -s busybox "$tmp/root/bin/$applet"
  done
  mountpoints "$tmp/root"
  rm -rf "$DIR/busybox" && mv "$tmp/root" "$DIR/busybox" && rm -rf "$tmp"
  log "busybox rootfs in $DIR/busybox"
}

minbase() {
  [[ -x $DIR/minbase/bin/bash ]] && { mountpoints "$DIR/minbase"; return 0; }
  command -v debootstrap >/dev/null || { log "debootstrap is missing (apt-get install debootstrap)"; return 1; }
  local suite mirror tmp
  suite=$(. /etc/os-release && echo "$VERSION_CODENAME")
  # The mirror apt is configured with, never written anywhere.
  mirror=$(apt-cache policy | awk -v s="$suite/main" '$3 == s { print $2; exit }')
  [[ -n $mirror ]] || { log "apt has no mirror configured for $suite/main"; return 1; }
  tmp=$(mktemp -d "$DIR/.minbase.XXXXXX")
  log "debootstrap --variant=minbase $suite (a few minutes, once)"
  debootstrap --variant=minbase "$suite" "$tmp/root" "$mirror" >"$tmp/log" 2>&1 || { tail -20 "$tmp/log" >&2; rm -rf "$tmp"; return 1; }
  rm -rf "$tmp/root/var/cache/apt/archives/"*.deb "$tmp/root/var/lib/apt/lists/"*
  mountpoints "$tmp/root"
  rm -rf "$DIR/minbase" && mv "$tmp/root" "$DIR/minbase" && rm -rf "$tmp"
  log "minbase rootfs in $DIR/minbase"
}

for name in "${@:-busybox minbase}"; do
  for n in $name; do "$n"; done
done
