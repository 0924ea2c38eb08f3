"""Shared fixtures: meshes made by hand (independent of rtcd's generators) and the paths the tests need."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Tuple

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
REPO = Path(__file__).resolve().parents[3]


def cube_arrays(half: float = 0.5, center: Tuple[float, float, float] = (0.0, 0.0, 0.0)):
    """A closed cube, 8 vertices and 12 outward counter-clockwise triangles, as numpy arrays."""
    v = np.array([[x, y, z] for z in (-half, half) for y in (-half, half) for x in (-half, half)], dtype=np.float64)
    v += np.asarray(center)
    # vertex index = x + 2 y + 4 z (each 0 or 1)
    t = np.array([[0, 2, 1], [1, 2, 3],   # z = -half, facing -z
                  [4, 5, 6], [5, 7, 6],   # z = +half
                  [0, 1, 4], [1, 5, 4],   # y = -half
                  [2, 6, 3], [3, 6, 7],   # y = +half
                  [0, 4, 2], [2, 4, 6],   # x = -half
                  [1, 3, 5], [3, 7, 5]],  # x = +half
                 dtype=np.int64)
    return v, t


@pytest.fixture
def cube():
    return cube_arrays()


@pytest.fixture(scope="session")
def examples_on_path():
    """The examples folder importable (avalanche.py, sweep.py)."""
    sys.path.insert(0, str(EXAMPLES))
    yield EXAMPLES
    sys.path.remove(str(EXAMPLES))


@pytest.fixture(scope="session")
def demo_dir() -> Path:
    """The C demos of the build the bindings were installed against (RTCD_DEMO_DIR, set by scripts/test_python.sh)."""
    value = os.environ.get("RTCD_DEMO_DIR")
    if not value:
        pytest.fail("RTCD_DEMO_DIR is not set: the folder of the C demos (e.g. build/release/demos); "
                    "scripts/test_python.sh sets it")
    d = Path(value)
    if not (d / "avalanche").is_file():
        pytest.fail(f"RTCD_DEMO_DIR={d} holds no avalanche program")
    return d
