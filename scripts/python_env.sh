#!/usr/bin/env bash
# Creates (once) the virtual environment build/venv with the Python packages the
# bindings, their tests, the sweep example and the plots need, and prints its
# path. Idempotent: with every package present it touches no network.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="$root/build/venv"
req="$root/bindings/python/requirements-dev.txt"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" >&2
fi
stamp="$venv/.requirements"
if ! cmp -s "$req" "$stamp"; then
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$req" >&2
  cp "$req" "$stamp"
fi
echo "$venv"
