#!/usr/bin/env bash
# Runs the demos' JSON runs that ctest checks (and the default avalanche)
# and writes each one's output to OUTDIR/<name>.json, for a before/after
# comparison with scripts/json_compare.py (issue 26: a move that must not
# change results). scripts/demo_json_runs.sh build/release OUTDIR
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${1:?build folder}"/demos
out="${2:?output folder}"
data="$root/tests/data"
mkdir -p "$out"
run() { # name, program and arguments
    local name="$1"; shift
    local start=$SECONDS
    "$@" > "$out/$name.json" 2> "$out/$name.stderr"
    echo "$name: exit $? in $((SECONDS - start)) s"
}
run avalanche_default "$bin/avalanche" --json
run avalanche_small "$bin/avalanche" --objects 27 --steps 120 --json
run spawner_small "$bin/spawner" --steps 240 --json --penetration-every 30
run avalanche_deforming "$bin/avalanche" --objects 27 --steps 90 --deforming 6 --narrowphase all --backend cpu --json
run spawner_deforming "$bin/spawner" --steps 120 --deforming 5 --json --penetration-every 30
run avalanche_iterative "$bin/avalanche" --objects 8 --steps 60 --json --backend cpu --algorithm iterative \
    --params fixed --check --csv "$out/avalanche_iterative.csv"
run avalanche_checksum "$bin/avalanche" --objects 16 --steps 40 --backend cpu --json
run avalanche_checksum_seed2 "$bin/avalanche" --objects 16 --steps 40 --backend cpu --json --seed 2
run spawner_threads "$bin/spawner" --steps 12 --backend cpu --threads 2 --json
run avalanche_128_cpu "$bin/avalanche" --objects 128 --steps 300 --backend cpu --json --penetration-every 0
run avalanche_128_opencl "$bin/avalanche" --objects 128 --steps 300 --json --penetration-every 0 --backend opencl --devices 1
run mixed_600 "$bin/mixed" --objects 96 --steps 600 --backend cpu --json
run mixed_checksum "$bin/mixed" --objects 24 --steps 60 --backend cpu --json
run avalanche_mesh "$bin/avalanche" --mesh "$data/icosphere.obj" --objects 27 --steps 120 --backend cpu --json
run mixed_mesh "$bin/mixed" --mesh "$data/icosphere.obj" --mesh "$data/two_cubes.obj" --objects 24 --steps 120 \
    --backend cpu --json
run bench_iterative_quick "$bin/bench_iterative" --quick --backend cpu --check
run bench_contacts_quick "$bin/bench_contacts" --quick
run bench_mixed_quick "$bin/bench_mixed" --quick --backend cpu
