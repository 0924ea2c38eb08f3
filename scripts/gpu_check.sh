#!/usr/bin/env bash
# On a lent GPU machine, from the pack scripts/gpu_pack.sh made here: the
# OpenCL tests on the GPU (each alone, under a time limit: NVIDIA builds the
# kernels for 20-40 s at each backend's creation), then scripts/bench_gpu.sh
# (--quick unless --full). Logs and JSON go to $OUT (the device tool's
# folder), else ./gpu-out. Installs nothing.
#   scripts/gpu_check.sh [--full] [--tests-only] [--limit SECONDS]
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
pack="$root/build/gpu-pack"
out="${OUT:-$root/gpu-out}"
quick=--quick tests_only=0 limit=240
while [ $# -gt 0 ]; do
  case "$1" in
    --full) quick= ;;
    --tests-only) tests_only=1 ;;
    --limit) limit="$2"; shift ;;
    *) echo "gpu_check: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
if [ ! -x "$pack/demos/avalanche" ]; then
  echo "gpu_check: no $pack: run scripts/gpu_pack.sh where the build is, and carry build/gpu-pack" >&2
  exit 2
fi
mkdir -p "$out" "$pack/icd"
# NVIDIA's OpenCL driver through the packed ICD loader.
nvidia="$(ldconfig -p | awk '/libnvidia-opencl.so.1/{print $NF; exit}')"
if [ -n "$nvidia" ]; then
  echo "$nvidia" > "$pack/icd/nvidia.icd"
  export OCL_ICD_VENDORS="$pack/icd"
fi
export LD_LIBRARY_PATH="$pack/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export RTCD_DEVICES="${RTCD_DEVICES:-gpu}"
{ nvidia-smi -L 2>/dev/null || echo "no nvidia-smi"; nproc; } > "$out/machine.txt"
: > "$out/tests.txt"
for t in test_opencl test_batch test_profile test_identity test_deform_opencl test_device_faults test_multidevice; do
  start=$(date +%s)
  # As ctest runs them: test_multidevice gets PoCL, if that is the platform, as two devices.
  env=()
  [ "$t" = test_multidevice ] && env=(POCL_DEVICES="pthread pthread" POCL_MAX_PTHREAD_COUNT=1)
  env "${env[@]}" timeout "$limit" "$pack/tests/$t" > "$out/$t.log" 2>&1
  echo "$t rc=$? $(( $(date +%s) - start )) s" | tee -a "$out/tests.txt"
done
[ "$tests_only" = 1 ] && exit 0
"$root/scripts/bench_gpu.sh" "$pack" $quick > "$out/bench_gpu.jsonl" 2> "$out/bench_gpu.err"
tail -n 1 "$out/bench_gpu.jsonl"
