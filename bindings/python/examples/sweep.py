#!/usr/bin/env python3
"""Many independent rtcd worlds on Ray: a sweep over seeds and object counts.

Each world is one avalanche (avalanche.py, the C demo's scene) run as a Ray
task, the way a dataset or a training run uses a simulator; each returns one
dict (seed, objects, steps, pose_checksum, timings, max penetration). The
results are printed as JSON.

    python sweep.py --seeds 1,2,3,4 --objects 8,64 --steps 120          # a local Ray cluster
    python sweep.py --address ray://head:10001 --seeds 1-100 --objects 512
    RAY_ADDRESS=auto python sweep.py ...                               # an existing cluster

With no --address and no RAY_ADDRESS, Ray starts a local cluster of at most
the CPUs present. The folder of this script is the job's working_dir, so the
workers of any cluster import avalanche.py from it; they need the rtcd
package installed (pip install ./bindings/python). --no-ray runs the same
worlds one after the other in this process (the reference the test compares
the Ray results with).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import avalanche  # noqa: E402  (beside this file)

# What each world reports: these keys of the avalanche summary.
KEPT = ("pose_checksum", "backend", "threads", "ms_per_step_mean", "ms_per_step_median", "narrowphase_ms_mean",
        "penetration_max", "penetration_sum_mean", "contacts_mean", "nan_detected")


def run_world(seed: int, objects: int, steps: int, backend: str, threads: int,
              penetration_every: int) -> Dict[str, Any]:
    """One avalanche world, start to end; its result dict (no Ray involved)."""
    start = time.perf_counter()
    o = avalanche.options(["--objects", str(objects), "--steps", str(steps), "--seed", str(seed), "--backend",
                           backend, "--threads", str(threads), "--penetration-every", str(penetration_every)])
    summary = avalanche.run(o)
    result: Dict[str, Any] = {"seed": seed, "objects": objects, "steps": summary["steps"]}
    result.update({k: summary[k] for k in KEPT})
    result["wall_s"] = time.perf_counter() - start
    result["host"] = os.uname().nodename
    return result


def int_list(text: str) -> List[int]:
    """"1,2,5-8" -> [1, 2, 5, 6, 7, 8]."""
    out: List[int] = []
    for part in text.split(","):
        if "-" in part:
            lo, hi = part.split("-", 1)
            out.extend(range(int(lo), int(hi) + 1))
        elif part:
            out.append(int(part))
    return out


def sweep(worlds: List[Dict[str, int]], o: argparse.Namespace) -> List[Dict[str, Any]]:
    """Runs every world (Ray tasks unless --no-ray) and returns their results in the given order."""
    args = lambda w: (w["seed"], w["objects"], o.steps, o.backend, o.threads, o.penetration_every)  # noqa: E731
    if o.no_ray:
        return [run_world(*args(w)) for w in worlds]
    import ray

    address = o.address or os.environ.get("RAY_ADDRESS") or None
    init: Dict[str, Any] = dict(address=address, include_dashboard=False,
                                runtime_env={"working_dir": str(HERE), "excludes": ["__pycache__", "*.pyc"]})
    if address is None:  # a local cluster: no more CPUs than there are
        cpus = os.cpu_count() or 1
        init["num_cpus"] = min(o.num_cpus or cpus, cpus)
    ray.init(**init)
    try:
        task = ray.remote(num_cpus=max(o.threads, 1))(run_world)
        return ray.get([task.remote(*args(w)) for w in worlds])
    finally:
        ray.shutdown()


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description="A sweep of independent avalanche worlds over seeds and object counts, "
                                            "one Ray task per world.")
    p.add_argument("--seeds", type=int_list, default=[1, 2, 3, 4], help="e.g. 1,2,5-8 (default 1-4)")
    p.add_argument("--objects", type=int_list, default=[8, 27], help="object counts (default 8,27)")
    p.add_argument("--steps", type=int, default=120, help="60 Hz steps per world (default 120)")
    p.add_argument("--backend", choices=["auto", "cpu", "opencl"], default="cpu")
    p.add_argument("--threads", type=int, default=1,
                   help="rtcd CPU threads per world, and the CPUs each Ray task asks for (default 1)")
    p.add_argument("--penetration-every", type=int, default=10, metavar="K")
    p.add_argument("--address", default=None,
                   help="Ray cluster address (default: RAY_ADDRESS, else a new local cluster)")
    p.add_argument("--num-cpus", type=int, default=0, help="local cluster only: CPUs (default and at most: all)")
    p.add_argument("--no-ray", action="store_true", help="run the worlds one after the other in this process")
    p.add_argument("--json", action="store_true", help="one JSON object on one line (default: indented)")
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    o = parser().parse_args(argv)
    worlds = [{"seed": s, "objects": n} for n in o.objects for s in o.seeds]
    start = time.perf_counter()
    results = sweep(worlds, o)
    out = {"worlds": len(worlds), "steps": o.steps, "backend": o.backend, "ray": not o.no_ray,
           "wall_s": time.perf_counter() - start, "results": results}
    print(json.dumps(out) if o.json else json.dumps(out, indent=1))
    return 1 if any(r["nan_detected"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
