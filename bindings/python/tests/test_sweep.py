"""examples/sweep.py on a local Ray cluster: one result per world, each as the same world run without Ray."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import EXAMPLES


def test_sweep_on_a_local_ray_cluster(examples_on_path, tmp_path):
    import avalanche

    env = dict(os.environ)
    env.pop("RAY_ADDRESS", None)  # a local cluster, whatever the caller's environment
    cmd = [sys.executable, str(EXAMPLES / "sweep.py"), "--seeds", "1-4", "--objects", "8", "--steps", "30",
           "--backend", "cpu", "--num-cpus", "2", "--json"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=240, env=env, cwd=tmp_path).stdout
    result = json.loads(out.splitlines()[-1])
    assert result["ray"] is True and result["worlds"] == 4
    runs = result["results"]
    assert len(runs) == 4 and sorted(r["seed"] for r in runs) == [1, 2, 3, 4]
    for r in runs:
        assert r["objects"] == 8 and r["steps"] == 30 and r["nan_detected"] == 0
        assert r["ms_per_step_mean"] > 0 and r["wall_s"] > 0 and r["penetration_max"] >= 0
        local = avalanche.run(avalanche.options(["--objects", "8", "--steps", "30", "--seed", str(r["seed"]),
                                                 "--backend", "cpu", "--threads", "1"]))
        assert r["pose_checksum"] == local["pose_checksum"], r["seed"]
    assert len({r["pose_checksum"] for r in runs}) == 4  # four different worlds
