#!/usr/bin/env python3
# Copyright (c) the rtcd authors. Licensed under the zlib licence (LICENSE).
"""Compares two folders of demo JSON outputs (scripts/demo_json_runs.sh)
field by field; timing fields (ms, us, seconds, speed-ups, ratios of times,
and the targets over them) may differ, every other field must be equal. Prints the fields that differ and exits 1 when a non-timing one does.

    scripts/json_compare.py BEFORE_DIR AFTER_DIR
"""
import json
import os
import re
import sys

# A name that holds a time (ms, us, seconds, speed-ups): it may differ
# between runs. Ratios count only where they are of times (step, narrow
# phase, ms); ratios of penetration or manifold counts must stay equal.
TIME_NAME = re.compile(r"(^|_)(ms|us|ns|s|seconds|wall)(_|$)|speedup|per_second")
RATIO_NAME = re.compile(r"ratio|_over_")
TIME_RATIO = re.compile(r"step|narrowphase|(^|_)ms(_|$)|time")


def time_name(name):
    return bool(TIME_NAME.search(name) or (RATIO_NAME.search(name) and TIME_RATIO.search(name)))


def flatten(v, path, out):
    if isinstance(v, dict):
        for k, x in v.items():
            flatten(x, path + [str(k)], out)
    elif isinstance(v, list):
        for i, x in enumerate(v):
            flatten(x, path + [str(i)], out)
    else:
        out[".".join(path)] = v


def load(path):
    """Every JSON object in the file (a program may print several lines)."""
    objs, text = [], open(path).read()
    dec, i = json.JSONDecoder(), 0
    while True:
        j = text.find("{", i)
        if j < 0:
            return objs
        try:
            obj, i = dec.raw_decode(text, j)
            objs.append(obj)
        except ValueError:
            i = j + 1


def is_timing(key):
    """The field's name or a group's around it (a list of times, a target's
    "met" and bounds over a speed-up) names a time."""
    return any(time_name(part) for part in key.split("."))


def main(before, after):
    bad = 0
    names = sorted(n for n in os.listdir(before) if n.endswith(".json"))
    for n in names:
        a_path, b_path = os.path.join(before, n), os.path.join(after, n)
        if not os.path.exists(b_path):
            print("%s: missing after" % n)
            bad += 1
            continue
        fa, fb = {}, {}
        flatten(load(a_path), [], fa)
        flatten(load(b_path), [], fb)
        diff = [k for k in sorted(set(fa) | set(fb)) if fa.get(k, "<absent>") != fb.get(k, "<absent>")]
        real = [k for k in diff if not is_timing(k)]
        timing = len(diff) - len(real)
        status = "same" if not real else "DIFFERENT"
        print("%s: %d fields, %s (%d timing fields differ)" % (n, len(fa), status, timing))
        for k in real:
            print("    %s: %r -> %r" % (k, fa.get(k, "<absent>"), fb.get(k, "<absent>")))
        bad += bool(real)
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
