#!/usr/bin/env python3
"""The papers' kind of figures from the demos' CSV (--csv) and JSON (--json).

Three figures, each from the avalanche demo (demos/avalanche.c):

  narrowphase_algorithms   narrow-phase time per step, standard / iterative /
                           predictive (--algorithm), from one CSV each
  penetration              penetration over time (max and sum, measured every
                           K steps) through rtcd, GImpact and convex hulls
                           (--narrowphase), from one CSV each
  scaling                  time per step against the object count (--objects),
                           from one JSON summary per run

One command runs the demos and writes every figure:

  build/venv/bin/python scripts/plots.py --demo-dir build/release/demos --out docs/images

The runs' CSV and JSON files go to --data (default build/plots-data), named
  algorithm_<name>.csv, penetration_<narrowphase>.csv, scaling_<narrowphase>_<objects>.json;
--from-data skips the runs and builds the figures from the files found there
(any <name>: drop your own runs in with those names). --quick makes small,
short runs (what the test suite runs). Besides the figures, the two pictures
avalanche.png and spawner.png (--only pictures): one 800x600 frame of each
demo rendered off-screen with --frames. Needs matplotlib and numpy
(scripts/python_env.sh puts them in build/venv).
"""
import argparse
import csv
import glob
import json
import os
import shutil
import subprocess
import sys
import time

import matplotlib

matplotlib.use("Agg")  # files only: no display needed
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker as ticker  # noqa: E402
import numpy as np  # noqa: E402

ALGORITHMS = ["standard", "iterative", "predictive"]
NARROWPHASES = ["rtcd", "gimpact", "hull"]
LABELS = {"rtcd": "rtcd", "gimpact": "Bullet GImpact", "hull": "convex hulls"}
COLOURS = {"standard": "#1f77b4", "iterative": "#ff7f0e", "predictive": "#2ca02c",
           "rtcd": "#2ca02c", "gimpact": "#d62728", "hull": "#9467bd"}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("--demo-dir", default="build/release/demos", help="folder holding the avalanche program")
    p.add_argument("--out", default="docs/images", help="where the figures go")
    p.add_argument("--data", default="build/plots-data", help="where the runs' CSV and JSON go (or are read from)")
    p.add_argument("--from-data", action="store_true", help="no runs: the figures from the files in --data")
    p.add_argument("--quick", action="store_true",
                   help="small short runs (27 objects, 60 steps; scaling 8 and 27 objects, 30 steps)")
    p.add_argument("--only", help="comma-separated: algorithms, penetration, scaling, pictures (default all; "
                   "--quick and --from-data: no pictures)")
    p.add_argument("--formats", default="png", help="comma-separated: png, svg")
    p.add_argument("--backend", default="cpu", help="the demos' --backend (default cpu)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--objects", type=int, help="algorithms: blobs (default 512)")
    p.add_argument("--steps", type=int, help="algorithms: steps (default 600)")
    p.add_argument("--penetration-objects", type=int, help="penetration: blobs (default 512)")
    p.add_argument("--penetration-steps", type=int, help="penetration: steps (default 600)")
    p.add_argument("--penetration-every", type=int, default=10, help="penetration: measure every K steps")
    p.add_argument("--sizes", help="scaling: comma-separated object counts (default 64,128,256,512,1024)")
    p.add_argument("--scaling-steps", type=int, help="scaling: steps per run (default 300)")
    p.add_argument("--gimpact-max", type=int,
                   help="scaling: GImpact only up to this many objects, it is slow (default 512)")
    a = p.parse_args(argv)
    quick = a.quick
    a.objects = a.objects or (27 if quick else 512)
    a.steps = a.steps or (60 if quick else 600)
    a.penetration_objects = a.penetration_objects or (27 if quick else 512)
    a.penetration_steps = a.penetration_steps or (60 if quick else 600)
    a.sizes = [int(s) for s in (a.sizes or ("8,27" if quick else "64,128,256,512,1024")).split(",")]
    a.scaling_steps = a.scaling_steps or (30 if quick else 300)
    a.gimpact_max = a.gimpact_max or 512
    a.only = set((a.only or ("algorithms,penetration,scaling" if quick or a.from_data else
                             "algorithms,penetration,scaling,pictures")).split(","))
    a.formats = a.formats.split(",")
    unknown = a.only - {"algorithms", "penetration", "scaling", "pictures"}
    if unknown:
        p.error("--only: unknown figure(s) %s" % ", ".join(sorted(unknown)))
    return a


def run_demo(args, demo_args, json_path, program="avalanche"):
    """Runs a demo with demo_args; its JSON summary goes to json_path."""
    exe = os.path.join(args.demo_dir, program)
    cmd = [exe, "--backend", args.backend, "--seed", str(args.seed), "--json"] + [str(x) for x in demo_args]
    print("plots: " + " ".join(cmd), file=sys.stderr, flush=True)
    start = time.monotonic()
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit("plots: %s failed (exit %d):\n%s" % (exe, done.returncode, done.stderr))
    with open(json_path, "w") as f:
        f.write(done.stdout)
    print("plots:   %.1f s" % (time.monotonic() - start), file=sys.stderr, flush=True)


def read_csv(path):
    """The CSV's columns as float arrays (empty cells: NaN)."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        sys.exit("plots: %s has no rows" % path)
    return {k: np.array([float(r[k]) if r[k] not in ("", None) else np.nan for r in rows]) for k in rows[0]}


def read_json(path):
    with open(path) as f:
        return json.loads(f.read())


def summary_of(path):
    """The JSON summary next to a CSV (same name, .json), or None."""
    j = os.path.splitext(path)[0] + ".json"
    return read_json(j) if os.path.exists(j) else None


def smooth(y, window):
    """Moving average (same length; the ends average what they have)."""
    if window <= 1 or len(y) < window:
        return y
    k = np.ones(window)
    return np.convolve(y, k, "same") / np.convolve(np.ones_like(y), k, "same")


def save(fig, args, name):
    os.makedirs(args.out, exist_ok=True)
    paths = []
    for fmt in args.formats:
        path = os.path.join(args.out, "%s.%s" % (name, fmt))
        # no date or version in the files: the same data gives the same bytes
        meta = {"Software": None} if fmt == "png" else {"Date": None, "Creator": None}
        fig.savefig(path, dpi=100, metadata=meta)
        paths.append(path)
    plt.close(fig)
    for path in paths:
        print("plots: wrote %s" % path, file=sys.stderr)
    return paths


def run_info(summary):
    if not summary:
        return ""
    dev = summary.get("backend", "?")
    if dev == "cpu":
        dev = "CPU reference, %s threads" % summary.get("threads", "?")
    return "%s blobs, %s steps, %s" % (summary.get("objects", "?"), summary.get("steps", "?"), dev)


def labelled_files(data, prefix, ext, order):
    """{label: path} for data/<prefix>_<label>.<ext>, in `order` first."""
    found = {}
    for path in sorted(glob.glob(os.path.join(data, "%s_*.%s" % (prefix, ext)))):
        found[os.path.basename(path)[len(prefix) + 1:-len(ext) - 1]] = path
    return {k: found[k] for k in order + sorted(set(found) - set(order)) if k in found}


def figure_algorithms(args):
    if not args.from_data:
        for alg in ALGORITHMS:
            base = os.path.join(args.data, "algorithm_%s" % alg)
            run_demo(args, ["--objects", args.objects, "--steps", args.steps, "--algorithm", alg,
                            "--penetration-every", 0, "--csv", base + ".csv"], base + ".json")
    files = labelled_files(args.data, "algorithm", "csv", ALGORITHMS)
    if not files:
        sys.exit("plots: no algorithm_<name>.csv in %s" % args.data)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    info = ""
    for label, path in files.items():
        c = read_csv(path)
        s = summary_of(path)
        info = info or run_info(s)
        t, ms = c["time_s"], c["narrowphase_ms"]
        colour = COLOURS.get(label)
        ax.plot(t, ms, color=colour, alpha=0.25, linewidth=0.7)
        mean = np.nanmean(ms)
        ax.plot(t, smooth(ms, 15), color=colour, linewidth=1.8, label="%s (mean %.2f ms)" % (label, mean))
    ax.set_xlabel("simulated time (s)")
    ax.set_ylabel("narrow phase per step (ms)")
    ax.set_ylim(bottom=0)
    ax.set_title("Avalanche: narrow-phase time per step by algorithm\n" + info, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    return save(fig, args, "narrowphase_algorithms")


def figure_penetration(args):
    if not args.from_data:
        for np_kind in NARROWPHASES:
            base = os.path.join(args.data, "penetration_%s" % np_kind)
            run_demo(args, ["--objects", args.penetration_objects, "--steps", args.penetration_steps,
                            "--narrowphase", np_kind, "--penetration-every", args.penetration_every,
                            "--csv", base + ".csv"], base + ".json")
    files = labelled_files(args.data, "penetration", "csv", NARROWPHASES)
    if not files:
        sys.exit("plots: no penetration_<narrowphase>.csv in %s" % args.data)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    info = ""
    for label, path in files.items():
        c = read_csv(path)
        s = summary_of(path)
        info = info or run_info(s)
        measured = ~np.isnan(c["penetration_max"])  # rows of the steps that measured it
        if not measured.any():
            sys.exit("plots: %s has no penetration samples (run with --penetration-every K)" % path)
        t = c["time_s"][measured]
        colour = COLOURS.get(label)
        name = LABELS.get(label, label)
        if s and s.get("ms_per_step_mean") is not None:
            name += " (%.1f ms/step)" % s["ms_per_step_mean"]
        top.plot(t, 1000.0 * c["penetration_max"][measured], color=colour, linewidth=1.4, label=name)
        bottom.plot(t, c["penetration_sum"][measured], color=colour, linewidth=1.4, label=name)
    top.set_ylabel("deepest vertex (mm)")
    bottom.set_ylabel("sum over vertices inside (m)")
    bottom.set_xlabel("simulated time (s)")
    for ax in (top, bottom):
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
    top.legend()
    top.set_title("Avalanche: penetration over time, measured by the same exact test for each narrow phase\n" + info,
                  fontsize=10)
    fig.tight_layout()
    return save(fig, args, "penetration")


def figure_scaling(args):
    if not args.from_data:
        for np_kind in NARROWPHASES:
            for n in args.sizes:
                if np_kind == "gimpact" and n > args.gimpact_max:
                    continue
                path = os.path.join(args.data, "scaling_%s_%d.json" % (np_kind, n))
                run_demo(args, ["--objects", n, "--steps", args.scaling_steps, "--narrowphase", np_kind,
                                "--penetration-every", 0], path)
    runs = {}
    for path in glob.glob(os.path.join(args.data, "scaling_*.json")):
        j = read_json(path)
        for r in j.get("runs", [j]):  # one summary, or --narrowphase all's "runs"
            runs.setdefault(r["narrowphase"], []).append(r)
    if not runs:
        sys.exit("plots: no scaling_<narrowphase>_<objects>.json in %s" % args.data)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    steps = set()
    for label in [k for k in NARROWPHASES if k in runs] + sorted(set(runs) - set(NARROWPHASES)):
        rs = sorted(runs[label], key=lambda r: r["objects"])
        n = np.array([r["objects"] for r in rs])
        steps.update(r["steps"] for r in rs)
        colour = COLOURS.get(label)
        ax.plot(n, [r["ms_per_step_mean"] for r in rs], "o-", color=colour, label="%s: whole step" % LABELS.get(label, label))
        ax.plot(n, [r["narrowphase_ms_mean"] for r in rs], "s--", color=colour, alpha=0.7,
                label="%s: narrow phase" % LABELS.get(label, label))
    ax.set_xscale("log")
    ax.set_yscale("log")
    # plain numbers on log axes: the object counts run, and 1, 2, 5 per decade of ms
    counts = sorted({r["objects"] for rs in runs.values() for r in rs})
    ax.set_xticks(counts)
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: "%d" % v))
    ax.xaxis.set_minor_formatter(ticker.NullFormatter())
    ax.yaxis.set_major_locator(ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: "%g" % v))
    ax.yaxis.set_minor_formatter(ticker.NullFormatter())
    ax.set_xlabel("objects (avalanche blobs, 902 triangles each)")
    ax.set_ylabel("mean time per step (ms)")
    ax.set_title("Avalanche: time per step against the object count (%s steps each, %s backend)"
                 % ("/".join(str(s) for s in sorted(steps)), args.backend), fontsize=10)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return save(fig, args, "scaling")


# The pictures of README.md and docs/: (program, extra options, steps, frame kept). The
# avalanche mid-collapse, the spawner's pile with a turn of drops above it.
PICTURES = [("avalanche", ["--objects", 512], 51, 50), ("spawner", [], 720, 719)]


def pictures(args):
    """Renders each demo off-screen (--frames) and keeps one frame."""
    written = []
    os.makedirs(args.out, exist_ok=True)
    for program, extra, steps, keep in PICTURES:
        frames = os.path.join(args.data, "frames_" + program)
        shutil.rmtree(frames, ignore_errors=True)
        run_demo(args, extra + ["--steps", steps, "--penetration-every", 0, "--frames", frames,
                                "--frame-size", "800x600"], frames + ".json", program)
        path = os.path.join(args.out, program + ".png")
        shutil.copyfile(os.path.join(frames, "frame_%05d.png" % keep), path)
        shutil.rmtree(frames)
        print("plots: wrote %s" % path, file=sys.stderr)
        written.append(path)
    return written


def main(argv):
    args = parse_args(argv)
    if not args.from_data:
        exe = os.path.join(args.demo_dir, "avalanche")
        if not os.access(exe, os.X_OK):
            sys.exit("plots: no avalanche program in %s (--demo-dir)" % args.demo_dir)
        os.makedirs(args.data, exist_ok=True)
        # this run's files only: stale ones from other sizes would join the figures
        patterns = {"algorithms": "algorithm_*", "penetration": "penetration_*", "scaling": "scaling_*",
                    "pictures": "frames_*"}
        for figure in args.only:
            for old in glob.glob(os.path.join(args.data, patterns[figure])):
                os.remove(old)
    written = []
    if "algorithms" in args.only:
        written += figure_algorithms(args)
    if "penetration" in args.only:
        written += figure_penetration(args)
    if "scaling" in args.only:
        written += figure_scaling(args)
    if "pictures" in args.only:
        if args.from_data:
            sys.exit("plots: the pictures are rendered by the demos: not with --from-data")
        written += pictures(args)
    print("\n".join(written))


if __name__ == "__main__":
    main(sys.argv[1:])
