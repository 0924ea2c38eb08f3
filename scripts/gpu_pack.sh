#!/usr/bin/env bash
# What a lent GPU machine runs, built here and packed (that machine can
# install nothing): the OpenCL tests, the demos scripts/bench_gpu.sh runs,
# rtcd's libraries and every shared library they load beyond the C
# library's own, into build/gpu-pack (ignored by git). Carry build/gpu-pack
# with the working tree and run scripts/gpu_check.sh there.
#   scripts/gpu_pack.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build/gpu"
pack="$root/build/gpu-pack"
tests=(test_opencl test_batch test_profile test_identity test_deform_opencl test_device_faults test_multidevice test_task)
demos=(avalanche bench_backends)
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DRTCD_WITH_VIEWER=OFF -DRTCD_WITH_IMPORT=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target "${tests[@]}" "${demos[@]}" >/dev/null
rm -rf "$pack"
mkdir -p "$pack/tests" "$pack/demos" "$pack/lib"
for t in "${tests[@]}"; do cp "$build/tests/$t" "$pack/tests/"; done
for d in "${demos[@]}"; do cp "$build/demos/$d" "$pack/demos/"; done
# Every library the programs load (rtcd's, Bullet, the ICD loader, CMocka,
# libstdc++), not the C library's own: those the machine has, and a copy
# would not match its loader.
for f in "$pack"/tests/* "$pack"/demos/*; do
  ldd "$f" | awk '$3 ~ /^\// {print $3}'
done | sort -u | grep -v -E '/(libc|libm|libpthread|libdl|librt|libresolv|ld-linux[^/]*)\.so' |
  while read -r lib; do cp -L "$lib" "$pack/lib/"; done
du -sh "$pack"
echo "gpu_pack: carry build/gpu-pack, then run scripts/gpu_check.sh on the machine"
