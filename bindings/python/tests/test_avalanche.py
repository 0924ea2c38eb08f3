"""examples/avalanche.py against the C demo: the same scene, bit for bit."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import EXAMPLES

ARGS = ["--objects", "64", "--steps", "120", "--seed", "7", "--backend", "cpu", "--json"]


def run_json(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=300).stdout
    lines = [line for line in out.splitlines() if line.startswith("{")]
    assert len(lines) == 1, out
    return json.loads(lines[0])


def timing(key: str) -> bool:
    """Measured times differ from run to run; everything else must not
    (batch_profile: the batch's times per call, and its bytes;
    narrowphase_parts: the narrow phase's times in parts)."""
    return "ms" in key.split("_") or key in ("batch_profile", "narrowphase_parts")


def test_avalanche_py_matches_the_c_demo(demo_dir):
    c = run_json([str(demo_dir / "avalanche"), *ARGS])
    py = run_json([sys.executable, str(EXAMPLES / "avalanche.py"), *ARGS])
    assert len(c["pose_checksum"]) == 16
    assert py["pose_checksum"] == c["pose_checksum"]
    assert list(py) == list(c)  # the same keys, in the same order
    same = {k: v for k, v in c.items() if not timing(k)}
    assert {k: py[k] for k in same} == same  # counts, penetration, rays: the same run
    assert py["objects"] == 64 and py["steps"] == 120 and py["nan_detected"] == 0


def test_avalanche_py_seed_changes_the_run(examples_on_path):
    import avalanche

    a = avalanche.run(avalanche.options(["--objects", "8", "--steps", "20", "--seed", "1", "--backend", "cpu"]))
    b = avalanche.run(avalanche.options(["--objects", "8", "--steps", "20", "--seed", "2", "--backend", "cpu"]))
    again = avalanche.run(avalanche.options(["--objects", "8", "--steps", "20", "--seed", "1", "--backend", "cpu",
                                             "--threads", "1"]))
    assert a["pose_checksum"] != b["pose_checksum"]
    assert a["pose_checksum"] == again["pose_checksum"]  # deterministic, whatever the threads
    line = json.loads(avalanche.json_line(a))
    assert line["pose_checksum"] == a["pose_checksum"]


def test_pose_checksum_is_fnv1a_over_the_bytes():
    import numpy as np

    import rtcd

    # FNV-1a 64 of no bytes is its offset basis; of one zero byte, basis * prime
    assert rtcd.pose_checksum(np.zeros((0, 12), np.float32)) == 0xCBF29CE484222325
    t = np.zeros((1, 12), np.float32)
    h = 0xCBF29CE484222325
    for _ in range(48):
        h = (h * 0x100000001B3) % 2**64
    assert rtcd.pose_checksum(t) == h
    with pytest.raises(ValueError):
        rtcd.pose_checksum(np.zeros((2, 7), np.float32))
