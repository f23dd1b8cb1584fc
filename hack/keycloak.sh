#!/usr/bin/env bash
# Keycloak (org.keycloak:keycloak-quarkus-dist, from Maven Central through Maven) for the login tests
# in e2e/login: a real OpenID provider whose real login form the browser fills in.
#
# Cached outside the repository, like hack/oci-registry.sh, so a fresh clone on the same machine reuses it:
#   ${AGENTYARD_CACHE:-$HOME/.cache/agentyard}/keycloak/<version>/keycloak-<version>/
#   ${AGENTYARD_CACHE:-$HOME/.cache/agentyard}/keycloak/<version>/kc   (kc.sh with a JDK it runs on)
# Keycloak 26 needs Java 21 or newer: the newest JDK under /usr/lib/jvm (or JAVA_HOME) of at least
# that version is written into the wrapper (KEYCLOAK_JVM_DIRS: where to look instead of /usr/lib/jvm/*). Idempotent and locked (two worktrees may ask at once).
# Prints the wrapper's path on stdout (last line); progress goes to stderr. Nothing is written
# inside the repository.
set -euo pipefail

KEYCLOAK_VERSION=${KEYCLOAK_VERSION:-26.7.3}
CACHE=${AGENTYARD_CACHE:-$HOME/.cache/agentyard}
dir="$CACHE/keycloak/$KEYCLOAK_VERSION"
wrapper="$dir/kc"

java_major() { "$1/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = \([0-9]*\).*/\1/p'; }

pick_java() {
  local best='' best_major=0 home major
  for home in ${JAVA_HOME:-} ${KEYCLOAK_JVM_DIRS:-/usr/lib/jvm/*}; do
    [[ -x "$home/bin/java" ]] || continue
    major=$(java_major "$home")
    [[ -n "$major" ]] || continue
    if (( major >= 21 && major > best_major )); then best=$home best_major=$major; fi
  done
  [[ -n "$best" ]] || { echo "keycloak: error: no JDK 21 or newer found (JAVA_HOME, /usr/lib/jvm); Keycloak $KEYCLOAK_VERSION needs one" >&2; return 1; }
  echo "$best"
}

mkdir -p "$dir"
exec 9>"$dir/.lock"
flock 9
if [[ ! -x "$wrapper" ]]; then
  command -v mvn >/dev/null || { echo "keycloak: error: Maven (mvn) not found; it fetches Keycloak from Maven Central" >&2; exit 1; }
  java_home=$(pick_java) || exit 1
  echo "keycloak: fetching org.keycloak:keycloak-quarkus-dist:$KEYCLOAK_VERSION (zip) with Maven" >&2
  repo="$CACHE/keycloak/m2"
  mvn -q -B dependency:get -Dmaven.repo.local="$repo" -Dtransitive=false -Dartifact="org.keycloak:keycloak-quarkus-dist:$KEYCLOAK_VERSION:zip" >&2
  zip="$repo/org/keycloak/keycloak-quarkus-dist/$KEYCLOAK_VERSION/keycloak-quarkus-dist-$KEYCLOAK_VERSION.zip"
  tmp=$(mktemp -d "$dir/unzip.XXXXXX")
  unzip -q "$zip" -d "$tmp"
  rm -rf "$dir/keycloak-$KEYCLOAK_VERSION"
  mv "$tmp/keycloak-$KEYCLOAK_VERSION" "$dir/"
  rmdir "$tmp"
  rm -f "$zip" # the unpacked server is what is kept
  cat >"$wrapper.tmp" <<EOF
#!/usr/bin/env bash
# Keycloak $KEYCLOAK_VERSION on the JDK hack/keycloak.sh chose.
export JAVA_HOME='$java_home'
exec '$dir/keycloak-$KEYCLOAK_VERSION/bin/kc.sh' "\$@"
EOF
  chmod +x "$wrapper.tmp"
  mv "$wrapper.tmp" "$wrapper"
fi
"$wrapper" --version >/dev/null 2>&1 || { echo "keycloak: error: $wrapper does not run" >&2; exit 1; }
echo "$wrapper"
