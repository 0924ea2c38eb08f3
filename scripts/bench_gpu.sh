#!/usr/bin/env bash
# The GPU against every CPU core, on the machine it runs on: the avalanche at
# 512 blobs (600 steps, the three algorithms), 2048 and 8192 blobs (240 steps,
# predictive), each on the first OpenCL GPU and on the CPU reference with all
# cores, then the replay benchmark (bench_backends) on the GPU, and the
# deforming avalanche against GImpact on every core. One JSON line
# per run: {"run": ..., "command": ..., "result": <the program's JSON>}, with
# each run's batch profile (plan, run, finish; upload, device, download) in
# the result, and the pool's fork-join latency (test_task --bench). Installs
# nothing and needs no network: it needs a build (default build/release, or
# $1) and an OpenCL GPU (RTCD_DEVICES, default gpu).
#   scripts/bench_gpu.sh [BUILD_DIR] [--quick]   (--quick: 120 steps at 512, 60 beyond)
# A last line sums up the open issues' acceptance figures (python3 needed).
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build/release"
quick=0
for arg in "$@"; do
  case "$arg" in
    --quick) quick=1 ;;
    *) build="$arg" ;;
  esac
done
demos="$build/demos"
if [ ! -x "$demos/avalanche" ]; then
  echo "bench_gpu: no $demos/avalanche: build first (scripts/build.sh release)" >&2
  exit 2
fi
cores="$(nproc)"
steps_small=600 steps_big=240
if [ "$quick" = 1 ]; then steps_small=120 steps_big=60; fi

# One run: a label, then the command; its last stdout line is its JSON (kept
# in $log for the summary).
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
run() {
  local label="$1"; shift
  local out
  out="$("$@" 2>/dev/null | tail -n 1)"
  case "$out" in
    \{*) printf '{"run":"%s","command":"%s","result":%s}\n' "$label" "$*" "$out" ;;
    *) printf '{"run":"%s","command":"%s","result":null}\n' "$label" "$*" ;;
  esac | tee -a "$log"
}

export RTCD_DEVICES="${RTCD_DEVICES:-gpu}" # another device list for a try on a machine without one
common=(--json --penetration-every 0)
for algorithm in predictive iterative standard; do
  run "gpu_512_$algorithm" "$demos/avalanche" --backend opencl --algorithm "$algorithm" --steps "$steps_small" "${common[@]}"
  run "cpu${cores}_512_$algorithm" "$demos/avalanche" --backend cpu --threads "$cores" --algorithm "$algorithm" \
    --steps "$steps_small" "${common[@]}"
done
for objects in 2048 8192; do
  run "gpu_${objects}_predictive" "$demos/avalanche" --backend opencl --objects "$objects" --steps "$steps_big" "${common[@]}"
  run "cpu${cores}_${objects}_predictive" "$demos/avalanche" --backend cpu --threads "$cores" --objects "$objects" \
    --steps "$steps_big" "${common[@]}"
done
# The same GPU runs in one segment a call (the planning and the device one
# after the other): the baseline of the segments' overlap, in the same run.
for objects in 512 8192; do
  steps="$steps_big"; [ "$objects" = 512 ] && steps="$steps_small"
  run "gpu_${objects}_predictive_1segment" env RTCD_CL_SEGMENTS=1 "$demos/avalanche" --backend opencl \
    --objects "$objects" --steps "$steps" "${common[@]}"
done
run "bench_backends_gpu" "$demos/bench_backends" --devices gpu --threads "$cores" --steps "$steps_small"
# Issue 25 point 4 on every core (no GPU in it): 64 deforming blobs, rtcd
# against GImpact in one process, both sides' vertex updates counted; the
# first 300 steps, and 600 unless --quick (GImpact takes about 0.1 s a step).
for steps in 300 600; do
  [ "$quick" = 1 ] && [ "$steps" = 600 ] && continue
  run "cpu${cores}_deforming64_all_$steps" "$demos/avalanche" --deforming 64 --narrowphase all --backend cpu \
    --threads "$cores" --steps "$steps" "${common[@]}"
done
# The pool's fork-join latency on all cores (a loop of 8 items after a serial
# gap): what each of a call's parallel loops costs before any work.
if [ -x "$build/tests/test_task" ]; then run "pool_${cores}" "$build/tests/test_task" --bench "$cores"; fi
# The open issues' acceptance figures from the lines above (issue 21 point 5,
# issue 22 point 2 at 8192 blobs, issue 25 point 4 on every core), when
# python3 is there: one JSON line.
if command -v python3 >/dev/null 2>&1; then
  python3 - "$log" "$cores" <<'PY'
import json, sys
runs, tops = {}, {}
for line in open(sys.argv[1]):
    try:
        d = json.loads(line)
    except ValueError:
        continue
    r = d.get("result")
    if isinstance(r, dict):
        runs[d.get("run")] = r.get("runs", [r])[0] if "runs" in r else r
        tops[d.get("run")] = r
cores = sys.argv[2]
def get(name, key):
    r = runs.get(name)
    return r.get(key) if r else None
g512, g8k, c8k = "gpu_512_predictive", "gpu_8192_predictive", "cpu%s_8192_predictive" % cores
out = {"summary": "acceptance", "device": get(g512, "device"),
       "i21_512_batch_ms": get(g512, "batch_ms_mean"), "i21_512_batch_target": 0.4,
       "i21_512_narrowphase_ms": get(g512, "narrowphase_ms_mean"), "i21_512_narrowphase_target": 1.5,
       "i21_8192_batch_ms": get(g8k, "batch_ms_mean"), "i21_8192_batch_target": 12.0,
       "i21_8192_cpu_batch_ms": get(c8k, "batch_ms_mean")}
if out["i21_8192_batch_ms"] and out["i21_8192_cpu_batch_ms"]:
    out["i21_8192_gpu_over_cpu"] = round(out["i21_8192_cpu_batch_ms"] / out["i21_8192_batch_ms"], 3)
    out["i21_8192_gpu_over_cpu_target"] = 5.0
np, b = get(c8k, "narrowphase_ms_mean"), get(c8k, "batch_ms_mean")
if np is not None and b is not None:
    out["i22_8192_narrowphase_minus_batch_ms"] = round(np - b, 3)
    out["i22_8192_target_ms"] = 10.0
for steps in (300, 600):
    top = tops.get("cpu%s_deforming64_all_%d" % (cores, steps))
    if top:
        out["i25_%d_step_with_deformation_speedup" % steps] = top.get("step_with_deformation_speedup_vs_gimpact")
        out["i25_%d_penetration_max_ratio" % steps] = top.get("penetration_max_ratio_vs_gimpact")
        out["i25_%d_nan" % steps] = sum(r.get("nan_detected", 0) or 0 for r in top.get("runs", []))
        out["i25_target"] = 10.0
print(json.dumps(out))
PY
fi
