#!/usr/bin/env python3
# Copyright (c) the rtcd authors. Licensed under the zlib licence (LICENSE).
"""Prints every import circle between the source files of core/, opencl/,
bullet_plugin/ and demos/ (or the folders given), one line a circle.

A module is a file pair: a.c, a.h, a_internal.h (and a.cpp, a.hpp) count as
one module "a". Module A uses module B when
  - a file of A has #include "..." of a file of B, or
  - a file of A names a function that a source file of B defines (not
    static, defined once in the scanned tree): the internal headers declare
    functions of several source files, so the includes alone do not show
    that mesh.c calls into solid_grid.c.
A circle is a path A -> B -> ... -> A of distinct modules. Exit status 0; with
--check, 1 when there is a circle that --allow does not cover: --allow
PREFIX (repeatable) accepts the circles whose modules all lie under PREFIX,
the files of one job that share a private header (opencl/, demos/viewer/).

    scripts/include_cycles.py [--check] [--allow PREFIX ...] [folder ...]
"""
import os
import re
import sys
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_DIRS = ["core", "opencl", "bullet_plugin", "demos"]
SOURCE_EXT = (".c", ".cpp", ".cl")
EXTS = SOURCE_EXT + (".h", ".hpp")
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "main", "defined"}
MAX_CYCLES = 1000  # per strongly connected part, to keep the output finite

COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
STRING = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'')
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# A definition at file scope: the return type starts in column 0, the body
# opens after the closing parenthesis (K&R placement of the brace or not).
DEFINITION = re.compile(r"^([A-Za-z_][^;{}()#=\n]*?)\b([A-Za-z_]\w*)\s*\(([^;{}]*?)\)\s*(?:const\s*)?\{", re.M)
# A name that is called or taken, not a member (a.f, a->f, A::f).
IDENT = re.compile(r"(?<![.>:\w])[A-Za-z_]\w*\b")
ATTRIBUTE = re.compile(r"__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)")
ANON_NAMESPACE = re.compile(r"^namespace\s*\{", re.M)


def blocks_after(code, opener):
    """The spans of the balanced {...} blocks that each match of opener ends
    at (the opener's last character is the "{")."""
    spans = []
    for m in opener.finditer(code):
        depth, i = 0, m.end() - 1
        while i < len(code):
            depth += {"{": 1, "}": -1}.get(code[i], 0)
            if depth == 0:
                break
            i += 1
        spans.append((m.end() - 1, i + 1))
    return spans


def header_bodies(code):
    """What a header runs: the bodies of its inline functions, not its
    prototypes (a header declaring another file's function does not use it)."""
    return " ".join(code[a:b] for a, b in blocks_after(code, re.compile(r"\)\s*\{")))


def list_files(dirs):
    out = []
    for d in dirs:
        for base, subdirs, names in os.walk(os.path.join(ROOT, d)):
            subdirs.sort()
            for n in sorted(names):
                if n.endswith(EXTS):
                    out.append(os.path.relpath(os.path.join(base, n), ROOT))
    return out


def module_of(path):
    """a.c, a.h, a_internal.h (a's private header) are one module."""
    base = os.path.splitext(path)[0]
    return base[: -len("_internal")] if base.endswith("_internal") else base


def resolve(inc, src, files, index):
    """The scanned file an #include "inc" in src names, or None (system or
    public headers outside the scan)."""
    local = os.path.normpath(os.path.join(os.path.dirname(src), inc))
    if local in files:
        return local
    cands = index.get(os.path.basename(inc), [])
    cands = [c for c in cands if c.endswith("/" + inc) or c == inc]
    if not cands:
        return None
    # Nearest first: the same top folder, then the shortest path.
    top = src.split("/")[0]
    cands.sort(key=lambda c: (c.split("/")[0] != top, len(c), c))
    return cands[0]


def build_graph(dirs):
    files = list_files(dirs)
    fileset = set(files)
    index = defaultdict(list)
    for f in files:
        index[os.path.basename(f)].append(f)
    text = {}
    for f in files:
        with open(os.path.join(ROOT, f), encoding="utf-8", errors="replace") as h:
            raw = h.read()
        text[f] = (raw, ATTRIBUTE.sub(" ", STRING.sub('""', COMMENT.sub(" ", raw))))

    edges = defaultdict(dict)  # module -> module -> why
    for f in files:
        raw, code = text[f]
        for inc in INCLUDE.findall(COMMENT.sub(" ", raw)):
            t = resolve(inc, f, fileset, index)
            if t and module_of(t) != module_of(f):
                edges[module_of(f)].setdefault(module_of(t), '#include "%s"' % inc)

    definers = defaultdict(set)
    for f in files:
        if not f.endswith(SOURCE_EXT) or f.endswith(".cl"):
            continue
        code = text[f][1]
        local = blocks_after(code, ANON_NAMESPACE)  # C++: file-local
        for m in DEFINITION.finditer(code):
            prefix, name = m.group(1), m.group(2)
            words = prefix.split()
            if ("static" in words or "inline" in words or prefix.rstrip().endswith("::") or name in KEYWORDS
                    or name.startswith("__") or prefix.strip() in ("", "else")
                    or any(a <= m.start() < b for a, b in local)):
                continue
            definers[name].add(f)
    unique = {n: next(iter(s)) for n, s in definers.items() if len(s) == 1}
    for f in files:
        if f.endswith(".cl"):
            continue
        mod = module_of(f)
        code = text[f][1]
        if f.endswith((".h", ".hpp")):
            code = header_bodies(code)
        for name in sorted(set(IDENT.findall(code))):
            t = unique.get(name)
            if t and module_of(t) != mod:
                edges[mod].setdefault(module_of(t), "%s()" % name)
    return edges


def strongly_connected(edges):
    nodes = sorted(set(edges) | {t for d in edges.values() for t in d})
    index, low, stack, on, parts = {}, {}, [], set(), []
    counter = [0]

    def visit(v):  # iterative Tarjan
        work = [(v, iter(sorted(edges.get(v, {}))))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, {})))))
                    advanced = True
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                part = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    part.append(w)
                    if w == node:
                        break
                if len(part) > 1:
                    parts.append(sorted(part))

    for v in nodes:
        if v not in index:
            visit(v)
    return sorted(parts)


def cycles_in(part, edges):
    """Elementary circles inside one strongly connected part, each starting at
    its smallest module (so each is listed once)."""
    inside = set(part)
    out = []
    for start in part:
        allowed = {m for m in part if m >= start}
        path, stack = [start], [iter(sorted(t for t in edges[start] if t in inside))]
        while stack and len(out) < MAX_CYCLES:
            nxt = next(stack[-1], None)
            if nxt is None:
                stack.pop()
                path.pop()
                continue
            if nxt == start:
                out.append(list(path))
            elif nxt in allowed and nxt not in path:
                path.append(nxt)
                stack.append(iter(sorted(t for t in edges[nxt] if t in inside)))
    return out


def main(argv):
    check, allow, dirs = False, [], []
    args = iter(argv)
    for a in args:
        if a == "--check":
            check = True
        elif a == "--allow":
            allow.append(next(args, ""))
        elif a.startswith("--"):
            sys.exit(__doc__)
        else:
            dirs.append(a.rstrip("/"))
    dirs = dirs or DEFAULT_DIRS
    edges = build_graph(dirs)
    total = unallowed = 0
    parts = strongly_connected(edges)
    for part in parts:
        allowed = any(all(m.startswith(p) for m in part) for p in allow if p)
        for cyc in cycles_in(part, edges):
            total += 1
            unallowed += not allowed
            ring = cyc + [cyc[0]]
            steps = ["%s -[%s]-> " % (ring[i], edges[ring[i]][ring[i + 1]]) for i in range(len(cyc))]
            print("".join(steps) + ring[-1] + (" (allowed)" if allowed else ""))
    for part in parts:  # the modules that the circles tie together
        print("tied: " + " ".join(part))
    print("%d import circle%s in %s" % (total, "" if total == 1 else "s", ", ".join(dirs)) +
          (", %d not allowed" % unallowed if allow else ""))
    return 1 if check and unallowed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
