#!/usr/bin/env bash
# Runs the Python bindings' tests (bindings/python/tests) against a CMake
# build of rtcd: scripts/test_python.sh [BUILD_DIR] [pytest arguments...]
# (default build/release, which must be built). Makes the virtual
# environment (scripts/python_env.sh), installs the bindings into it against
# that build's libraries (RTCD_BUILD_DIR: nothing is compiled twice) when the
# bindings, the headers, the libraries or the build changed since the last
# install, and runs pytest with the C demos of the same build (RTCD_DEMO_DIR)
# for the checksum comparison. With everything installed it touches no
# network and goes straight to the tests.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build/release}"
[ $# -gt 0 ] && shift
if [ ! -f "$build/CMakeCache.txt" ]; then
  echo "test_python: $build is not a CMake build (run scripts/build.sh release first)" >&2
  exit 1
fi
build="$(cd "$build" && pwd)"
venv="$("$root/scripts/python_env.sh")"
py="$venv/bin/python"

# What the installed bindings were built from: their sources, the public
# headers, the build's libraries (their contents) and the build's path.
fingerprint() {
  {
    echo "$build"
    find "$root/bindings/python/setup.py" "$root/bindings/python/build_ffi.py" "$root/bindings/python/pyproject.toml" \
         "$root/bindings/python/src" "$root/include/rtcd" -type f ! -name '*.pyc' ! -name '*.so' -print0 |
      sort -z | xargs -0 sha256sum
    for lib in "$build/librtcd.so" "$build/bullet_plugin/librtcd_bullet.so" "$build/import/librtcd_import.so"; do
      if [ -e "$lib" ]; then sha256sum "$(readlink -f "$lib")"; fi
    done
  } | sha256sum | cut -d' ' -f1
}
stamp_file="$venv/.rtcd-bindings"
want="$(fingerprint)"
if [ "$(cat "$stamp_file" 2>/dev/null || true)" != "$want" ] || ! "$py" -c "import rtcd" 2>/dev/null; then
  echo "test_python: installing bindings/python against $build"
  rm -f "$stamp_file"
  # no build isolation, no dependencies: cffi, setuptools and numpy come
  # from requirements-dev.txt, already in the environment (no network)
  RTCD_BUILD_DIR="$build" "$py" -m pip install -q --disable-pip-version-check --no-build-isolation --no-deps \
    "$root/bindings/python"
  echo "$want" >"$stamp_file"
fi

export RTCD_DEMO_DIR="$build/demos"
unset RAY_ADDRESS # the sweep test starts its own local cluster
cd "$root/bindings/python"
exec "$py" -m pytest -q -p no:cacheprovider tests "$@"
