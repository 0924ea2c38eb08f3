#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite three times: a release build
# (and the Python bindings' tests against it), an AddressSanitizer +
# UndefinedBehaviorSanitizer build, then a release build without OpenCL
# (RTCD_WITH_OPENCL=OFF, configured with find_package(OpenCL) disabled).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/setup.sh"
# The Python environment (build/venv) before configuring: the plot test is
# registered where it exists.
"$root/scripts/python_env.sh" >/dev/null
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
  # Under the sanitizers the three runs take about 150 s each (half the
  # variant's time on 2 cores): the iterative passes' memory is checked there
  # by test_iterative, test_iterative_unseen, test_steady and
  # bench_iterative_quick on smaller scenes, and the avalanche's step-by-step
  # comparison is the release build's.
  if [ "$variant" = noopencl ] || [ "$variant" = asan ]; then exclude=(-E '^test_avalanche_iterative'); fi
  # LeakSanitizer's leak check at exit can crash in its own tracer while
  # PoCL's worker threads wind down ("Tracer caught signal 11 ... LeakSanitizer
  # has encountered a fatal error", seen once under load after every test of
  # test_opencl had passed): a test of the sanitizer variant that fails gets
  # one more run. A real failure fails twice.
  retry=()
  if [ "$variant" = asan ]; then retry=(--repeat until-pass:2); fi
  ctest --test-dir "$root/build/$variant" --output-on-failure -j"$(nproc)" "${exclude[@]}" "${retry[@]}"
  # The Python bindings (pytest, bindings/python/tests) against the release
  # build's libraries and demos; the sanitizer build's libraries need their
  # runtime preloaded into Python, and the bindings' C is the same.
  if [ "$variant" = release ]; then
    echo "== python tests"
    "$root/scripts/test_python.sh" "$root/build/release"
  fi
done
