#!/usr/bin/env python3
"""The JVRC 2013 avalanche in plain Python on the rtcd bindings.

Concave blobs (453 vertices, 902 triangles) in a cube above a plane fall,
60 Hz, through Bullet with rtcd's narrow phase. The scene is built exactly
as the C demo builds it (demos/scenes/demo_common.c: the same generator,
the same float arithmetic, the same calls in the same order), so

    python avalanche.py --objects 64 --steps 120 --seed 7 --backend cpu --json
    build/release/demos/avalanche --objects 64 --steps 120 --seed 7 --backend cpu --json

print the same ``pose_checksum`` (the final poses bit for bit) and the same
JSON keys. ``run()`` is importable (the Ray sweep example uses it).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

import rtcd

HZ = np.float32(60.0)
BLOB_RADIUS = np.float32(0.5)
RESTING_STEPS = 300  # the resting phase: the last 5 s of simulated time
PENETRATION_WINDOW = 100  # steps per window of the penetration-over-time figures
PENETRATION_WINDOWS_MAX = 256
U64 = 0xFFFFFFFFFFFFFFFF
f32 = np.float32


# ---- the scenes' generator and random orientations (demos/scenes/scene_util.c) ----


class SplitMix64:
    """splitmix64, as scene_rng_next: the demos' seeded generator."""

    def __init__(self, seed: int) -> None:
        self.state = seed & U64

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & U64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & U64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & U64
        return z ^ (z >> 31)

    def uniform(self) -> float:
        """[0, 1) with 53 bits, as scene_rng_uniform."""
        return float(self.next() >> 11) * (1.0 / 9007199254740992.0)


def random_pose(rng: SplitMix64, x: np.float32, y: np.float32, z: np.float32) -> np.ndarray:
    """A uniformly random rotation (Shoemake) at (x, y, z): 7 float32 (position, quaternion xyzw).

    Computed in double as scene_random_pose does, each component rounded to
    float; the world turns it into a transform with rtcd_transform_from_quat,
    as the C scene does.
    """
    u1, u2, u3 = rng.uniform(), rng.uniform(), rng.uniform()
    q = (math.sqrt(1 - u1) * math.sin(2 * math.pi * u2), math.sqrt(1 - u1) * math.cos(2 * math.pi * u2),
         math.sqrt(u1) * math.sin(2 * math.pi * u3), math.sqrt(u1) * math.cos(2 * math.pi * u3))
    return np.array([x, y, z, *q], dtype=np.float32)


def bounding_radius(shape: rtcd.Shape) -> np.float32:
    """Largest distance of a body-mesh vertex from the body origin, in float as the C demo sums it."""
    v = shape.body_mesh.vertices
    d2 = v[:, 0] * v[:, 0] + v[:, 1] * v[:, 1] + v[:, 2] * v[:, 2]  # float32, left to right
    return np.sqrt(max(f32(0.0), d2.max()))


# ---- the scene ----------------------------------------------------------------------


def world_options(o: argparse.Namespace) -> Dict[str, Any]:
    """The demo options as World keywords (demo_world_def)."""
    kw: Dict[str, Any] = dict(
        time_step=float(f32(1.0) / HZ),
        narrowphase=o.narrowphase,
        backend=o.backend,
        max_devices=o.devices,
        threads=o.threads,
        traversal=o.traversal,
        contact_normal=o.contact_normal,
        algorithm=o.algorithm,
        adaptive=o.params == "adaptive",
        speculative=o.speculative == "on",
        edge_crossings=o.edge_crossings == "on",
        deep_contacts=o.deep_contacts == "on",
        check=o.check,
    )
    if o.speculative_margin is not None:
        kw["speculative_margin"] = float(f32(o.speculative_margin))
    return kw


def build_scene(o: argparse.Namespace) -> Tuple[rtcd.World, int]:
    """The avalanche (demo_scene_create): a plane, one blob shape, a cube of bodies.

    Returns the world and the triangles of all bodies.
    """
    world = rtcd.World(**world_options(o))
    world.add_plane((0.0, 0.0, 1.0), 0.0)
    mesh = rtcd.Mesh.blob(rtcd.AVALANCHE_BLOB_VERTICES, float(BLOB_RADIUS), o.seed, name="blob")
    shape = world.create_shape(mesh)
    triangles = mesh.triangle_count
    r = bounding_radius(shape)
    rng = SplitMix64(o.seed)
    # A cube of blobs, seeded orientations, lowest layer 1 m up; spacing: the
    # bounding diameter plus 2 cm, so no two blobs touch at the start.
    side = 1
    while side * side * side < o.objects:
        side += 1
    spacing = f32(2.0) * r + f32(0.02)
    z0 = max(f32(1.0), r + f32(0.1))
    half = f32(0.5) * f32(side - 1)
    for b in range(o.objects):
        x = (f32(b % side) - half) * spacing
        y = (f32(b // side % side) - half) * spacing
        z = z0 + f32(b // (side * side)) * spacing
        world.add_body(shape, 1.0, random_pose(rng, x, y, z))
    return world, triangles * o.objects


def _median(values: List[float]) -> float:
    s = sorted(values)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def run(o: argparse.Namespace) -> Dict[str, Any]:
    """Runs the scene and returns the C demo's JSON summary as a dict (same keys, same order)."""
    world, triangles_total = build_scene(o)
    step_ms: List[float] = []
    np_ms: List[float] = []
    sums = dict.fromkeys(["batch", "batch_resting", "contacts", "rays", "colliding", "standard_ms", "iterative_ms",
                          "ray_length", "check_ray_length", "pen_sum", "step_active", "np_active"], 0.0)
    counts = dict.fromkeys(["standard_pairs", "iterative_pairs", "predictive_rays", "walk_steps", "kept_rays",
                            "check_rays", "check_incorrect", "pen_samples", "pen_inside", "active"], 0)
    # The batch's profile (rtcd_batch_stats), summed over the calls that ran.
    profile_keys = ["ms", "plan_ms", "run_ms", "finish_ms", "upload_ms", "device_ms", "download_ms", "fallback_ms",
                    "reduce_ms", "cpu_fallback_pairs", "upload_bytes", "download_bytes"]
    profile = dict.fromkeys(profile_keys, 0.0)
    profile_calls = 0
    # rtcd's narrow phase in parts and the manifolds (rtcd_step_stats), as the C demo's.
    part_keys = ["gather_ms", "plane_ms", "writeback_ms", "dispatch_ms", "pairs_owned", "manifolds", "manifolds_total",
                 "manifolds_created", "manifolds_released", "solver_ms"]
    parts = dict.fromkeys(part_keys, 0.0)
    manifolds_total_last = 0
    rest_ms: List[float] = []
    pairs_max = 0
    pen_max = 0.0
    windows: Dict[int, Dict[str, Any]] = {}
    nan = 0
    for step in range(o.steps):
        world.step()
        st = world.last_step_stats()
        step_ms.append(st["step_ms"])
        np_ms.append(st["narrowphase_ms"])
        rest_ms.append(st["step_ms"] - st["narrowphase_ms"])
        for k in part_keys:
            parts[k] += st[k]
        manifolds_total_last = st["manifolds_total"]
        sums["batch"] += st["batch_ms"]
        if st["batch"]["ms"] > 0.0:
            profile_calls += 1
            for k in profile_keys:
                profile[k] += st["batch"][k]
        if step + RESTING_STEPS >= o.steps:
            sums["batch_resting"] += st["batch_ms"]
        sums["contacts"] += st["contacts"]
        sums["rays"] += st["rays_cast"]
        sums["colliding"] += st["colliding_rays"]
        pairs_max = max(pairs_max, st["broadphase_pairs"])
        for k in ("standard_ms", "iterative_ms", "ray_length", "check_ray_length"):
            sums[k] += st[k]
        for k in ("standard_pairs", "iterative_pairs", "predictive_rays", "walk_steps", "kept_rays", "check_rays",
                  "check_incorrect"):
            counts[k] += st[k]
        if not np.all(np.isfinite(world.transforms())):
            nan = 1
            print(f"avalanche.py: non-finite pose at step {step}", file=sys.stderr)
            break
        if np.any(world.velocities() != 0):  # sleeping bodies have none
            counts["active"] += 1
            sums["step_active"] += st["step_ms"]
            sums["np_active"] += st["narrowphase_ms"]
        if o.penetration_every and (step + 1) % o.penetration_every == 0:
            pen = world.measure_penetration()
            pen_max = max(pen_max, pen["max"])
            sums["pen_sum"] += pen["sum"]
            counts["pen_samples"] += 1
            counts["pen_inside"] += pen["vertices_inside"]
            w = step // PENETRATION_WINDOW
            if w < PENETRATION_WINDOWS_MAX:
                win = windows.setdefault(w, {"max": 0.0, "sum": 0.0, "samples": 0})
                win["max"] = max(win["max"], pen["max"])
                win["sum"] += pen["sum"]
                win["samples"] += 1
    done = len(step_ms)
    n = done or 1
    resting = min(done, RESTING_STEPS)
    window_list: List[Dict[str, Any]] = []
    truncated = False
    if o.penetration_every and done:
        count = (done + PENETRATION_WINDOW - 1) // PENETRATION_WINDOW
        truncated = count > PENETRATION_WINDOWS_MAX
        for w in range(min(count, PENETRATION_WINDOWS_MAX)):
            win = windows.get(w, {"max": 0.0, "sum": 0.0, "samples": 0})
            window_list.append({"first": w * PENETRATION_WINDOW,
                                "last": min(w * PENETRATION_WINDOW + PENETRATION_WINDOW - 1, done - 1),
                                "samples": win["samples"],
                                "max": win["max"] if win["samples"] else None,
                                "mean_sum": win["sum"] / win["samples"] if win["samples"] else None})
    rtcd_np = o.narrowphase == "rtcd"
    devices = world.device_names
    checked = bool(o.check) and counts["check_rays"] > 0
    summary: Dict[str, Any] = {
        "scene": "avalanche",
        "narrowphase": o.narrowphase,
        "backend": world.backend,
        "devices": len(devices),
        "device": devices[0] if devices else "",
        "threads": world.thread_count,
        "objects": world.body_count,
        "steps": done,
        "pose_checksum": f"{rtcd.pose_checksum(world.transforms()):016x}",
        "algorithm": o.algorithm if rtcd_np else None,
        "params": o.params if rtcd_np else None,
        "traversal": o.traversal if rtcd_np else None,
        "contact_normal": o.contact_normal if rtcd_np else None,
        "check": bool(o.check),
        "speculative": (o.speculative == "on") if rtcd_np else None,
        "speculative_margin": (float(f32(o.speculative_margin)) if o.speculative_margin is not None
                               else float(rtcd.lib.rtcd_default_narrowphase_def().speculative_margin))
                               if rtcd_np else None,
        "edge_crossings": (o.edge_crossings == "on") if rtcd_np else None,
        "deep_contacts": (o.deep_contacts == "on") if rtcd_np else None,
        "ms_per_step_mean": sum(step_ms) / n,
        "ms_per_step_p95": sorted(step_ms)[int(0.95 * (done - 1))] if done else 0.0,
        "first_step_ms": step_ms[0] if done else 0.0,
        "narrowphase_ms_mean": sum(np_ms) / n,
        "narrowphase_ms_median": _median(np_ms) if done else 0.0,
        "narrowphase_ms_resting": sum(np_ms[done - resting:]) / resting if resting else 0.0,
        "batch_ms_mean": sums["batch"] / n,
        "batch_ms_resting": sums["batch_resting"] / (resting or 1),
        "resting_steps": resting,
        "pairs_max": pairs_max,
        "contacts_mean": sums["contacts"] / n,
        "penetration_max": pen_max,
        "penetration_sum_mean": sums["pen_sum"] / counts["pen_samples"] if counts["pen_samples"] else 0.0,
        "penetration_sampled_every": o.penetration_every,
        "triangles_total": triangles_total,
        "rays_cast_mean": sums["rays"] / n,
        "colliding_rays_mean": sums["colliding"] / n,
        "incorrect_rays_pct": 100.0 * counts["check_incorrect"] / counts["check_rays"] if checked else None,
        "check_rays": counts["check_rays"],
        "check_incorrect": counts["check_incorrect"],
        "cumulative_ray_length": sums["check_ray_length"] if o.check else sums["ray_length"],
        "cumulative_ray_length_source": "standard" if o.check else "own",
        "own_ray_length_total": sums["ray_length"],
        "standard_ms_total": sums["standard_ms"],
        "iterative_ms_total": sums["iterative_ms"],
        "standard_pair_steps": counts["standard_pairs"],
        "iterative_pair_steps": counts["iterative_pairs"],
        "predictive_rays": counts["predictive_rays"],
        "walk_steps": counts["walk_steps"],
        "kept_rays": counts["kept_rays"],
        "ms_per_step_median": _median(step_ms) if done else 0.0,
        "active_steps": counts["active"],
        "ms_per_step_mean_active": sums["step_active"] / counts["active"] if counts["active"] else 0.0,
        "narrowphase_ms_mean_active": sums["np_active"] / counts["active"] if counts["active"] else 0.0,
        "penetration_mean": sums["pen_sum"] / counts["pen_inside"] if counts["pen_inside"] else 0.0,
        "user_meshes": 0,
        "deforming": 0,
        "deform_ms_mean": 0.0,
        # as the C demo's batch_profile: means per call
        "batch_profile": {"calls": profile_calls,
                          **{("fallback_pairs" if k == "cpu_fallback_pairs" else k): profile[k] / (profile_calls or 1)
                             for k in profile_keys}},
        "narrowphase_parts": {**{f"{k}_mean": parts[k] / n for k in ("gather_ms", "plane_ms", "writeback_ms",
                                                                      "dispatch_ms", "pairs_owned")},
                              "narrowphase_minus_batch_us_per_pair":
                                  1e3 * (sum(np_ms) / n - sums["batch"] / n) / (parts["pairs_owned"] / n)
                                  if parts["pairs_owned"] > 0 else 0.0},
        "manifolds_mean": parts["manifolds"] / n,
        "manifolds_total_mean": parts["manifolds_total"] / n,
        "manifolds_total_last": manifolds_total_last,
        "manifolds_created": int(parts["manifolds_created"]),
        "manifolds_released": int(parts["manifolds_released"]),
        "step_minus_narrowphase_ms_mean": sum(step_ms) / n - sum(np_ms) / n,
        "step_minus_narrowphase_ms_median": _median(rest_ms) if done else 0.0,
        "solver_ms_mean": parts["solver_ms"] / n,
        "penetration_window_steps": PENETRATION_WINDOW,
        "penetration_windows_truncated": truncated,
        "penetration_windows": window_list,
        "nan_detected": nan,
    }
    world.close()
    return summary


# The C demo's printf formats, so that the two lines can be compared field by field.
_FORMATS = {"speculative_margin": "%.6g", "contacts_mean": "%.1f", "rays_cast_mean": "%.1f",
            "colliding_rays_mean": "%.1f", "penetration_max": "%.5f", "penetration_sum_mean": "%.5f",
            "incorrect_rays_pct": "%.4f", "cumulative_ray_length": "%.6f", "own_ray_length_total": "%.6f",
            "penetration_mean": "%.6f", "deform_ms_mean": "%.4f", "max": "%.5f", "mean_sum": "%.5f",
            # batch_profile's fields
            **dict.fromkeys(["ms", "plan_ms", "run_ms", "finish_ms", "upload_ms", "device_ms", "download_ms",
                             "fallback_ms", "reduce_ms"], "%.4f"),
            "fallback_pairs": "%.1f", "upload_bytes": "%.0f", "download_bytes": "%.0f",
            # narrowphase_parts and the manifolds
            **dict.fromkeys(["gather_ms_mean", "plane_ms_mean", "writeback_ms_mean", "dispatch_ms_mean",
                             "narrowphase_minus_batch_us_per_pair", "step_minus_narrowphase_ms_mean",
                             "step_minus_narrowphase_ms_median", "solver_ms_mean"], "%.4f"),
            **dict.fromkeys(["pairs_owned_mean", "manifolds_mean", "manifolds_total_mean"], "%.1f")}


def _json_value(key: str, value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(k)}:{_json_value(k, v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_json_value(key, v) for v in value) + "]"
    if isinstance(value, float):
        return _FORMATS.get(key, "%.3f") % value
    return json.dumps(value)


def json_line(summary: Dict[str, Any]) -> str:
    """The summary as the C demo prints it (one line, the same number formats)."""
    return _json_value("", summary)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description="The JVRC 2013 avalanche (blobs falling on a plane) on rtcd's Python "
                                            "bindings; the same scene and checksum as demos/avalanche.")
    p.add_argument("--objects", type=int, default=512, help="bodies (default 512)")
    p.add_argument("--steps", type=int, default=600, help="60 Hz steps (default 600)")
    p.add_argument("--seed", type=int, default=1, help="meshes and poses (default 1)")
    p.add_argument("--narrowphase", choices=list(rtcd.NARROWPHASES), default="rtcd")
    p.add_argument("--backend", choices=list(rtcd.BACKENDS), default="auto", help="rtcd's backend (default auto)")
    p.add_argument("--devices", type=int, default=0, help="OpenCL devices at most (default 0: all selected)")
    p.add_argument("--threads", type=int, default=0, help="CPU worker threads (default 0: all cores)")
    p.add_argument("--algorithm", choices=list(rtcd.ALGORITHMS), default="predictive")
    p.add_argument("--params", choices=["adaptive", "fixed"], default="adaptive")
    p.add_argument("--check", action="store_true", help="also run the standard algorithm every step")
    p.add_argument("--traversal", choices=["bvh", "brute-force"], default="bvh")
    p.add_argument("--contact-normal", choices=list(rtcd.CONTACT_NORMALS), default="reprojected")
    p.add_argument("--speculative", choices=["on", "off"], default="on")
    p.add_argument("--speculative-margin", type=float, default=None, metavar="M",
                   help="speculative contacts' margin in metres (default 0.005)")
    p.add_argument("--edge-crossings", choices=["on", "off"], default="on")
    p.add_argument("--deep-contacts", choices=["on", "off"], default="on")
    p.add_argument("--penetration-every", type=int, default=10, metavar="K",
                   help="measure penetration every K steps (default 10; 0: never)")
    p.add_argument("--json", action="store_true", help="one-line JSON summary on stdout")
    return p


def options(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    """Parsed options (the defaults for argv=[]); errors exit with status 2 as the C demo's."""
    o = parser().parse_args(argv)
    if o.objects < 1 or o.steps < 0 or o.seed < 0 or o.penetration_every < 0:
        parser().error("--objects must be >= 1; --steps, --seed and --penetration-every >= 0")
    return o


def main(argv: Optional[Sequence[str]] = None) -> int:
    o = options(argv)
    try:
        r = run(o)
    except rtcd.Error as e:
        print(f"avalanche.py: {e.name}: {e.message}", file=sys.stderr)
        return 1
    if o.json:
        print(json_line(r))
    else:
        print(f"avalanche through {r['narrowphase']} ({r['backend']} backend): {r['objects']} objects, "
              f"{r['triangles_total']} triangles, {r['steps']} steps")
        print(f"  step {r['ms_per_step_mean']:.2f} ms mean, {r['ms_per_step_p95']:.2f} ms p95; narrow phase "
              f"{r['narrowphase_ms_mean']:.2f} ms mean; up to {r['pairs_max']} pairs; {r['contacts_mean']:.0f} contacts")
        print(f"  penetration (every {r['penetration_sampled_every']} steps): max {r['penetration_max']:.4f} m, "
              f"sum {r['penetration_sum_mean']:.4f} m mean")
        print(f"  threads {r['threads']}; final poses of {r['objects']} bodies: pose_checksum {r['pose_checksum']}")
    return 1 if r["nan_detected"] else 0


if __name__ == "__main__":
    sys.exit(main())
