#!/usr/bin/env bash
# Builds rtcd's fuzz targets with clang and libFuzzer and runs each for a
# bounded time over its committed corpus and regression inputs; fails on any
# finding (crash, sanitizer report, timeout, out of memory).
#
#   run_fuzzers.sh --work DIR [--seconds N] [--target mesh|batch|bullet|import]...
#                  [--import-formats LIST]
#
# DIR holds the clang build (kept between runs, so later runs rebuild only
# what changed), the working corpora (fresh copies each run: the source
# tree is never written) and the artifacts of findings. Exits 77 (CTest's
# SKIP_RETURN_CODE) when clang or its libFuzzer runtime is missing
# (Debian: clang, libclang-rt-14-dev). Longer runs by hand, e.g.
#   tests/fuzz/run_fuzzers.sh --work build/fuzz --seconds 600 --target import
#
# fuzz_import runs on the formats of LIST only (RTCD_FUZZ_IMPORT_FORMATS,
# a comma list of obj stl ply off gltf glb; default all: every format the
# import reads with its own readers or hands to assimp, tests/fuzz/README.md).
# A campaign on one format: --import-formats ply.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="" seconds=20 targets=() import_formats="all"
while [ $# -gt 0 ]; do
  case "$1" in
    --work) work="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --target) targets+=("$2"); shift 2 ;;
    --import-formats) import_formats="$2"; shift 2 ;;
    *) echo "run_fuzzers: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[ -n "$work" ] || { echo "run_fuzzers: --work DIR is required" >&2; exit 2; }
mkdir -p "$work"
work="$(cd "$work" && pwd)"

skip() { echo "run_fuzzers: SKIPPED: $*"; exit 77; }

# clang (RTCD_FUZZ_CC overrides) and the matching clang++.
cc="${RTCD_FUZZ_CC:-}"
if [ -n "$cc" ]; then
  command -v "$cc" >/dev/null || skip "RTCD_FUZZ_CC=$cc not found"
  cc="$(command -v "$cc")"
else
  for c in clang clang-14 clang-15 clang-16; do
    if command -v "$c" >/dev/null; then cc="$(command -v "$c")"; break; fi
  done
fi
[ -n "$cc" ] || skip "clang not found (Debian: apt-get install clang libclang-rt-14-dev)"
cxx="$(dirname "$cc")/$(basename "$cc" | sed 's/^clang/clang++/')"
command -v "$cxx" >/dev/null || skip "$cxx not found beside $cc"
# The libFuzzer and sanitizer runtimes: link a trivial target.
probe="$work/probe"
printf 'int LLVMFuzzerTestOneInput(const unsigned char* d, unsigned long n) { (void)d; (void)n; return 0; }\n' > "$probe.c"
if ! "$cc" -fsanitize=fuzzer,address,undefined "$probe.c" -o "$probe" >"$probe.log" 2>&1; then
  sed 's/^/  /' "$probe.log"
  skip "$cc cannot link -fsanitize=fuzzer,address,undefined (libFuzzer runtime missing? Debian: libclang-rt-14-dev)"
fi

echo "run_fuzzers: building with $cc in $work/build"
build="$work/build"
# Configured once (later builds regenerate it when a CMakeLists.txt changes);
# again when the compiler is not the one it was configured with, or when the
# targets' list is older than standalone/CMakeLists.txt (a target added).
if [ ! -f "$build/fuzz_targets.txt" ] || ! grep -qx "CMAKE_C_COMPILER:[A-Z]*=$cc" "$build/CMakeCache.txt" ||
   [ "$here/standalone/CMakeLists.txt" -nt "$build/fuzz_targets.txt" ]; then
  rm -rf "$build/CMakeCache.txt" "$build/CMakeFiles"
  cmake -S "$here/standalone" -B "$build" -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRTCD_WITH_OPENCL=OFF -DCMAKE_DISABLE_FIND_PACKAGE_OpenCL=TRUE \
    -DRTCD_BUILD_TESTS=OFF -DRTCD_BUILD_DEMOS=OFF --no-warn-unused-cli >"$work/configure.log" 2>&1 \
    || { cat "$work/configure.log"; echo "run_fuzzers: configure failed"; exit 1; }
fi
# The targets this configuration has (fuzz_import only where assimp was found).
read -r -a available < "$build/fuzz_targets.txt"
[ ${#targets[@]} -gt 0 ] || targets=("${available[@]}")
build_targets=()
for t in "${targets[@]}"; do
  case " ${available[*]} " in
    *" $t "*) build_targets+=("fuzz_$t") ;;
    *) echo "run_fuzzers: fuzz_$t is not built here (the import target needs assimp: libassimp-dev); not run" ;;
  esac
done
[ ${#build_targets[@]} -gt 0 ] || skip "no fuzz target to build"
cmake --build "$build" -j"$(nproc)" --target "${build_targets[@]}" >"$work/build.log" 2>&1 \
  || { tail -n 60 "$work/build.log"; echo "run_fuzzers: build failed"; exit 1; }

# Sanitizer settings of the runs: leaks are findings, except allocations
# made inside libassimp (lsan_import.supp).
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:symbolize=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export LSAN_OPTIONS="suppressions=$here/lsan_import.supp:print_suppressions=0"
export RTCD_FUZZ_IMPORT_FORMATS="$import_formats"

failed=0
for target in "${build_targets[@]}"; do
  t="${target#fuzz_}"
  corpus="$work/corpus/$t"
  artifacts="$work/artifacts/$t"
  rm -rf "$corpus"
  mkdir -p "$corpus" "$artifacts"
  # Seeds: the committed corpus and every regression input, less those
  # listed in regressions/EXCLUDED (findings not fixed yet).
  for f in "$here/corpus/$t"/* "$here/regressions/$t"/*; do
    [ -f "$f" ] || continue
    name="$(basename "$f")"
    case "$name" in README*) continue ;; esac
    # Import seeds are named after their format (cube.obj): only the formats run.
    if [ "$t" = import ] && [ "$import_formats" != all ]; then
      case ",$import_formats," in *",${name##*.},"*) ;; *) continue ;; esac
    fi
    if grep -qxF "$name" <(sed 's/#.*//; s/[[:space:]]*$//; s/^[[:space:]]*//' "$here/regressions/EXCLUDED" 2>/dev/null); then
      continue
    fi
    cp "$f" "$corpus/$(basename "$(dirname "$f")")-$name"
  done
  dict=()
  [ -f "$here/$t.dict" ] && dict=(-dict="$here/$t.dict")
  what=""
  [ "$t" = import ] && what=" (formats: $import_formats)"
  echo "run_fuzzers: $target for ${seconds}s over $(ls "$corpus" | wc -l) seeds$what"
  log="$work/$target.log"
  "$build/$target" "$corpus" "${dict[@]}" -max_total_time="$seconds" -max_len=4096 -rss_limit_mb=2048 -timeout=10 \
    -artifact_prefix="$artifacts/" -print_final_stats=1 >"$log" 2>&1
  rc=$?
  if [ $rc -ne 0 ]; then
    failed=1
    tail -n 80 "$log"
    echo "run_fuzzers: $target FAILED (exit $rc): finding(s) in $artifacts:"
    ls -l "$artifacts"
    echo "  Reproduce with $build/$target FILE; once understood, copy FILE to"
    echo "  tests/fuzz/regressions/$t/ (replayed by fuzz_replay_$t in every build)."
  else
    grep -E "^(#[0-9]+.*DONE|stat::number_of_executed_units|stat::peak_rss_mb)" "$log" | sed "s/^/  /"
    echo "run_fuzzers: $target: no finding ($(ls "$corpus" | wc -l) corpus entries now)"
  fi
done
exit $failed
