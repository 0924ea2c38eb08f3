#!/usr/bin/env bash
# Configures and builds one variant: scripts/build.sh release|asan
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
variant="${1:-release}"
case "$variant" in
  release) flags=(-DCMAKE_BUILD_TYPE=Release) ;;
  asan) flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DRTCD_SANITIZE=ON) ;;
  *) echo "build: unknown variant '$variant' (release|asan)" >&2; exit 2 ;;
esac
cmake -S "$root" -B "$root/build/$variant" "${flags[@]}" >/dev/null
cmake --build "$root/build/$variant" -j"$(nproc)"
