# shellcheck shell=bash disable=SC2034  # PEERS_PY is read by the scripts that source this file
# Sourced by the benchmark scripts (from the repository root): makes sure the virtual environment
# of the peers' Python packages (bench/peers_requirements.txt) exists and is current, and sets
# PEERS_PY to its interpreter. Rebuilt from scratch only when the requirements file or the Python
# version changed (the venv's requirements.stamp records both); needs PyPI the first time.
#   PEERS_VENV=DIR   another place for it (default build/bench/peers-venv)
peers_venv() {
  local venv=${PEERS_VENV:-build/bench/peers-venv}
  local req=bench/peers_requirements.txt
  local base=/usr/bin/python3
  [ -x "$base" ] || base=$(command -v python3)
  local stamp
  stamp="$(sha256sum "$req" | cut -d' ' -f1) python$("$base" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
  if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/requirements.stamp" 2>/dev/null)" = "$stamp" ]; then
    PEERS_PY=$venv/bin/python
    return 0
  fi
  echo "Creating the benchmark's Python environment $venv from $req (PyPI, about 180 MB of wheels)" >&2
  rm -rf "$venv"
  mkdir -p "$(dirname "$venv")"
  if ! "$base" -m venv "$venv"; then
    echo "error: '$base -m venv' failed (on Debian: apt-get install python3-venv)" >&2
    return 1
  fi
  if ! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --require-virtualenv \
      --only-binary=:all: --no-deps -r "$req" >&2; then
    echo "error: installing $req into $venv failed (is PyPI reachable?)" >&2
    return 1
  fi
  local check
  check=$("$venv/bin/python" -m pip check --disable-pip-version-check 2>&1 \
    | grep -v -E '^pnnx [0-9]+ requires torch, which is not installed\.$' || true)
  if [ -n "$check" ] && [ "$check" != "No broken requirements found." ]; then
    echo "error: pip check in $venv: $check" >&2
    return 1
  fi
  echo "$stamp" > "$venv/requirements.stamp"
  PEERS_PY=$venv/bin/python
}
