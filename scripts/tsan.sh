#!/usr/bin/env bash
# Data races in rtcd's own threads: builds the ThreadSanitizer variant
# (scripts/build.sh tsan: no OpenCL, no wrap) and runs the tests that use
# them (rtcd's pool, the batch's workers, the plugin's parallel gather and
# write-back, many meshes updated at once, lazy grids filled by many
# readers). Any report fails its test. Not part of ./scripts/test.sh (it
# adds a build and about 2 minutes on 2 cores); run it after changing
# threaded code: scripts/tsan.sh [extra ctest arguments]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/build.sh" tsan
# halt_on_error: the first race ends the test with exitcode, so ctest fails it.
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1 exitcode=66 report_signal_unsafe=0}"
ctest --test-dir "$root/build/tsan" --output-on-failure -j"$(nproc)" --timeout 900 \
  -R '^(test_batch|test_batch_bodies|test_batch_parallel|test_deform|test_key_map|test_task|test_world|test_world_batch|test_world_faults|test_plugin|test_plugin_manifolds|test_deform_dropin|test_soft_dropin|test_hostile|test_iterative|dropin_plain_runs|avalanche_checksum_threads|avalanche_checksum_plugin_parallel|demo_threads_option|demo_avalanche_deforming)$' \
  "$@"
