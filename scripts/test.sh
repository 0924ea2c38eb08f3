#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite three times: a release build,
# an AddressSanitizer + UndefinedBehaviorSanitizer build, then a release build
# without OpenCL (RTCD_WITH_OPENCL=OFF, configured with find_package(OpenCL)
# disabled).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/setup.sh"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
for variant in release asan noopencl; do
  echo "== $variant build"
  "$root/scripts/build.sh" "$variant"
  echo "== $variant tests"
  exclude=()
  # test_avalanche_iterative (about a minute on 2 cores) runs on the CPU
  # backend only (o.backend = RTCD_BACKEND_CPU), so without OpenCL it runs the
  # same code on the same data as in the release build: not run twice.
  if [ "$variant" = noopencl ]; then exclude=(-E '^test_avalanche_iterative$'); fi
  ctest --test-dir "$root/build/$variant" --output-on-failure -j"$(nproc)" "${exclude[@]}"
done
