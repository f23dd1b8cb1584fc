# Sourced by the hack/*.sh scripts that install an OpenHands server from PyPI into a cached
# virtualenv: finds a Python >= 3.12, pyenv's installed versions first (the system python3 is
# often older). Prints its path; fails when there is none.
find_python() {
  local root candidates=()
  root=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
  for v in 3.12 3.13; do
    candidates+=($(ls -d "$root"/versions/"$v".*/bin/python"$v" 2>/dev/null | sort -V | tail -1))
  done
  candidates+=(python3.12 python3.13 python3)
  for p in "${candidates[@]}"; do
    command -v "$p" >/dev/null 2>&1 || continue
    if "$p" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' 2>/dev/null; then echo "$p"; return; fi
  done
  return 1
}
