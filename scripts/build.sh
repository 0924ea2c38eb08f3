#!/usr/bin/env bash
# Configures and builds one variant: scripts/build.sh release|asan|noopencl|tsan
#   noopencl: Release without the OpenCL backend; find_package(OpenCL) is
#   disabled, so the configure proves no OpenCL headers or loader are needed.
#   It also leaves out the watertight wrap (OpenVDB), so the suite covers
#   "wrap not available" too.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
variant="${1:-release}"
case "$variant" in
  release) flags=(-DCMAKE_BUILD_TYPE=Release) ;;
  asan) flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DRTCD_SANITIZE=ON) ;;
  # --no-warn-unused-cli: CMAKE_DISABLE_FIND_PACKAGE_OpenCL goes unused, as it should.
  noopencl) flags=(-DCMAKE_BUILD_TYPE=Release -DRTCD_WITH_OPENCL=OFF -DCMAKE_DISABLE_FIND_PACKAGE_OpenCL=TRUE
                   -DRTCD_WITH_WRAP=OFF --no-warn-unused-cli) ;;
  # tsan: ThreadSanitizer over rtcd's own threads (scripts/tsan.sh). Without
  # OpenCL and the wrap, whose libraries (PoCL, TBB) are not instrumented:
  # their synchronisation is invisible to it and would read as races.
  tsan) flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DRTCD_SANITIZE_THREAD=ON -DRTCD_WITH_OPENCL=OFF
               -DCMAKE_DISABLE_FIND_PACKAGE_OpenCL=TRUE -DRTCD_WITH_WRAP=OFF -DRTCD_WITH_VIEWER=OFF --no-warn-unused-cli) ;;
  *) echo "build: unknown variant '$variant' (release|asan|noopencl|tsan)" >&2; exit 2 ;;
esac
cmake -S "$root" -B "$root/build/$variant" "${flags[@]}" >/dev/null
cmake --build "$root/build/$variant" -j"$(nproc)"
