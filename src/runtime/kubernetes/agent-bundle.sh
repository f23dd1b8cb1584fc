#!/bin/sh
# Assembles the agent bundle: a Node runtime that needs nothing from the image it runs in, so any
# Linux image with a shell can be a sandbox image (the Pod's init container copies the bundle into
# a shared volume mounted at the same prefix; see src/runtime/kubernetes/bundle.ts).
#
#   src/runtime/kubernetes/agent-bundle.sh NODE OUT [APP]
#
# NODE is a Node 24 binary, OUT the bundle directory to create, APP (optional) the application
# (package.json, bin, src and production node_modules), copied to OUT/app. The result:
#   OUT/bin/node   that binary, its ELF interpreter and library path pointed at PREFIX/lib
#   OUT/lib/       the dynamic loader and every shared library Node and the native addons need,
#                  taken from the build system (glibc, libstdc++, libgcc_s)
# and it only runs once OUT is at PREFIX (AGENTYARD_BUNDLE_PREFIX, default /agentyard). Nothing in
# the environment changes (no LD_LIBRARY_PATH), so the programs the agent runs use the image's own
# libraries. Needs patchelf and ldd.
set -eu
node=$1
out=$2
app=${3:-}
prefix=${AGENTYARD_BUNDLE_PREFIX:-/agentyard}

for tool in patchelf ldd; do
  command -v "$tool" >/dev/null || { echo "agent-bundle: $tool is required" >&2; exit 1; }
done
mkdir -p "$out/bin" "$out/lib"
cp "$node" "$out/bin/node"
chmod 0755 "$out/bin/node"

if [ -n "$app" ]; then
  mkdir -p "$out/app"
  cp -R "$app/package.json" "$app/bin" "$app/src" "$app/node_modules" "$out/app/"
fi

# The loader Node names, and every library that Node or a native addon of this platform loads.
interp=$(patchelf --print-interpreter "$out/bin/node")
cp -L "$interp" "$out/lib/$(basename "$interp")"
objects="$out/bin/node"
if [ -d "$out/app/node_modules" ]; then
  objects="$objects $(find "$out/app/node_modules" -name '*.node' -type f | tr '\n' ' ')"
fi
for obj in $objects; do
  # Addons for other platforms (musl, arm64, ...) are not this loader's: ldd refuses them.
  ldd "$obj" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 }'
done | sort -u | while read -r lib; do
  cp -L "$lib" "$out/lib/$(basename "$lib")"
done

patchelf --set-interpreter "$prefix/lib/$(basename "$interp")" --force-rpath --set-rpath "$prefix/lib" "$out/bin/node"
echo "agent bundle for $prefix in $out: $(ls "$out/lib" | tr '\n' ' ')"
