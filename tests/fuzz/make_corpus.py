#!/usr/bin/env python3
"""Writes the fuzzers' seed corpora (tests/fuzz/corpus/mesh, batch, bullet and import).

The committed files are this script's output; run it again after changing
it (python3 tests/fuzz/make_corpus.py). Formats: see the comments at the top
of fuzz_mesh.c, fuzz_batch.c, fuzz_bullet.cpp and fuzz_import.c."""
import base64
import json
import math
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

# ---- shapes (closed, counter-clockwise from outside) ----
TETRA_V = [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1)]
TETRA_T = [(0, 2, 1), (0, 1, 3), (0, 3, 2), (1, 2, 3)]
CUBE_V = [(-0.5, -0.5, -0.5), (0.5, -0.5, -0.5), (0.5, 0.5, -0.5), (-0.5, 0.5, -0.5),
          (-0.5, -0.5, 0.5), (0.5, -0.5, 0.5), (0.5, 0.5, 0.5), (-0.5, 0.5, 0.5)]
CUBE_T = [(0, 2, 1), (0, 3, 2), (4, 5, 6), (4, 6, 7), (0, 1, 5), (0, 5, 4),
          (1, 2, 6), (1, 6, 5), (2, 3, 7), (2, 7, 6), (3, 0, 4), (3, 4, 7)]
CUBE_QUADS = [(0, 3, 2, 1), (4, 5, 6, 7), (0, 1, 5, 4), (1, 2, 6, 5), (2, 3, 7, 6), (3, 0, 4, 7)]
OCTA_V = [(1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1)]
OCTA_T = [(0, 2, 4), (2, 1, 4), (1, 3, 4), (3, 0, 4), (2, 0, 5), (1, 2, 5), (3, 1, 5), (0, 3, 5)]


def soup(verts, tris):
    """Every triangle with its own three vertices (what STL stores)."""
    v, t = [], []
    for tri in tris:
        t.append(tuple(range(len(v), len(v) + 3)))
        v.extend(verts[i] for i in tri)
    return v, t


def flipped(tris):
    return [(a, c, b) for a, b, c in tris]


# ---- fuzz_mesh inputs ----
def mesh_input(verts, tris, flags=0, leaf=0, int8=False, u8=False, padded=False, repair=0x7F, scale=0.5,
               weld=1e-5, sliver=1e-3, holes=8, point=(0.1, 0.2, 0.3), pose=((0, 0, 0, 1), (0.3, 0.2, 0.1))):
    enc = (1 if int8 else 0) | (2 if u8 else 0) | (4 if padded else 0)
    head = struct.pack("<BBBBH", flags, leaf, enc, repair, len(verts))
    head += struct.pack("<fff", scale, weld, sliver)
    head += struct.pack("<BB", holes, 0)
    head += struct.pack("<3f", *point)
    head += struct.pack("<4f3f", *pose[0], *pose[1])
    assert len(head) == 60
    body = b""
    for p in verts:
        body += struct.pack("<3b", *(round(c / scale) for c in p)) if int8 else struct.pack("<3f", *p)
    for tri in tris:
        body += struct.pack("<3B", *tri) if u8 else struct.pack("<3I", *tri)
    return head + body


def mesh_corpus():
    sv, st = soup(CUBE_V, CUBE_T)
    two_v = TETRA_V + [(x + 3, y, z) for x, y, z in TETRA_V]
    two_t = TETRA_T + [(a + 4, b + 4, c + 4) for a, b, c in TETRA_T]
    return {
        "tetra": mesh_input(TETRA_V, TETRA_T),
        "cube": mesh_input(CUBE_V, CUBE_T, leaf=1),
        "cube_int8_u8": mesh_input(CUBE_V, CUBE_T, int8=True, u8=True),
        "octa_stride16": mesh_input(OCTA_V, OCTA_T, padded=True, leaf=15),
        "cube_soup": mesh_input(sv, st, u8=True),
        "cube_hole": mesh_input(CUBE_V, CUBE_T[:-1]),
        "tetra_inside_out_flip": mesh_input(TETRA_V, flipped(TETRA_T), flags=1),
        "tetra_inside_out": mesh_input(TETRA_V, flipped(TETRA_T)),
        "two_tetras": mesh_input(two_v, two_t, int8=True, u8=True, scale=0.25),
        "open_quad": mesh_input([(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0)], [(0, 1, 2), (0, 2, 3)], flags=2),
        "degenerate": mesh_input(TETRA_V + [(0.5, 0, 0)], TETRA_T + [(0, 4, 1)], u8=True),
        "cube_far_pose": mesh_input(CUBE_V, CUBE_T, pose=((0.3, 0.1, 0.2, 0.9), (0.9, 0.0, 0.0))),
    }


# ---- fuzz_import inputs: hint byte, flags byte, file ----
HINTS = ["obj", "stl", "ply", "off", "gltf", "glb"]


def import_input(hint, data, flags=0):
    return bytes([HINTS.index(hint), flags]) + data


def fmt(x):
    return ("%g" % x)


def obj_text(verts, faces):
    lines = ["# rtcd fuzz seed"] + ["v %s %s %s" % tuple(map(fmt, p)) for p in verts]
    lines += ["f " + " ".join(str(i + 1) for i in f) for f in faces]
    return ("\n".join(lines) + "\n").encode()


def normal(a, b, c):
    u = [b[i] - a[i] for i in range(3)]
    v = [c[i] - a[i] for i in range(3)]
    n = [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]]
    length = sum(x * x for x in n) ** 0.5 or 1.0
    return [x / length for x in n]


def stl_ascii(verts, tris):
    out = ["solid fuzz"]
    for t in tris:
        p = [verts[i] for i in t]
        out.append(" facet normal %s %s %s" % tuple(map(fmt, normal(*p))))
        out.append("  outer loop")
        out += ["   vertex %s %s %s" % tuple(map(fmt, q)) for q in p]
        out.append("  endloop")
        out.append(" endfacet")
    out.append("endsolid fuzz")
    return ("\n".join(out) + "\n").encode()


def stl_binary(verts, tris):
    data = b"rtcd fuzz seed".ljust(80, b" ") + struct.pack("<I", len(tris))
    for t in tris:
        p = [verts[i] for i in t]
        data += struct.pack("<3f", *normal(*p))
        for q in p:
            data += struct.pack("<3f", *q)
        data += b"\0\0"
    return data


def ply_ascii(verts, faces):
    head = ["ply", "format ascii 1.0", "element vertex %d" % len(verts), "property float x", "property float y",
            "property float z", "element face %d" % len(faces), "property list uchar int vertex_indices", "end_header"]
    body = ["%s %s %s" % tuple(map(fmt, p)) for p in verts]
    body += ["%d %s" % (len(f), " ".join(map(str, f))) for f in faces]
    return ("\n".join(head + body) + "\n").encode()


def ply_binary(verts, faces):
    head = ["ply", "format binary_little_endian 1.0", "element vertex %d" % len(verts), "property float x",
            "property float y", "property float z", "element face %d" % len(faces),
            "property list uchar int vertex_indices", "end_header"]
    data = ("\n".join(head) + "\n").encode()
    for p in verts:
        data += struct.pack("<3f", *p)
    for f in faces:
        data += struct.pack("<B%di" % len(f), len(f), *f)
    return data


def ply_big_endian_extras(verts, faces):
    """Big-endian, with properties and an element that the reader must read past."""
    head = ["ply", "format binary_big_endian 1.0", "comment fuzz seed", "element vertex %d" % len(verts),
            "property double x", "property float y", "property uchar red", "property float z",
            "element material 1", "property list uchar float values", "element face %d" % len(faces),
            "property list ushort uint vertex_indices", "property list uchar short flags", "end_header"]
    data = ("\n".join(head) + "\n").encode()
    for i, p in enumerate(verts):
        data += struct.pack(">dfBf", p[0], p[1], (40 * i) % 256, p[2])
    data += struct.pack(">B2f", 2, 0.5, 1.5)
    for f in faces:
        data += struct.pack(">H%dI" % len(f), len(f), *f) + struct.pack(">Bh", 1, -7)
    return data


def off_colored(verts, faces):
    """COFF with comments, the counts on the keyword's line, colours on every line."""
    lines = ["# fuzz seed", "COFF %d %d 0 # counts" % (len(verts), len(faces))]
    lines += ["%s %s %s 0.5 0.5 0.5 1" % tuple(map(fmt, p)) for p in verts]
    lines += ["%d %s 255 0 0 # face" % (len(f), " ".join(map(str, f))) for f in faces]
    return ("\r\n".join(lines) + "\r\n").encode()


def off_text(verts, faces):
    lines = ["OFF", "%d %d 0" % (len(verts), len(faces))] + ["%s %s %s" % tuple(map(fmt, p)) for p in verts]
    lines += ["%d %s" % (len(f), " ".join(map(str, f))) for f in faces]
    return ("\n".join(lines) + "\n").encode()


def gltf_parts(verts, tris):
    vb = b"".join(struct.pack("<3f", *p) for p in verts)
    ib = b"".join(struct.pack("<3H", *t) for t in tris)
    buf = vb + ib
    lo = [min(p[i] for p in verts) for i in range(3)]
    hi = [max(p[i] for p in verts) for i in range(3)]
    doc = {
        "asset": {"version": "2.0"},
        "scene": 0, "scenes": [{"nodes": [0]}], "nodes": [{"mesh": 0}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "indices": 1}]}],
        "buffers": [{"byteLength": len(buf)}],
        "bufferViews": [{"buffer": 0, "byteOffset": 0, "byteLength": len(vb), "target": 34962},
                        {"buffer": 0, "byteOffset": len(vb), "byteLength": len(ib), "target": 34963}],
        "accessors": [{"bufferView": 0, "componentType": 5126, "count": len(verts), "type": "VEC3",
                       "min": lo, "max": hi},
                      {"bufferView": 1, "componentType": 5123, "count": 3 * len(tris), "type": "SCALAR"}],
    }
    return doc, buf


def pack_glb(doc, buf):
    js = json.dumps(doc, separators=(",", ":")).encode()
    js += b" " * (-len(js) % 4)
    buf += b"\0" * (-len(buf) % 4)
    total = 12 + 8 + len(js) + 8 + len(buf)
    return (struct.pack("<4sII", b"glTF", 2, total) + struct.pack("<I4s", len(js), b"JSON") + js +
            struct.pack("<I4s", len(buf), b"BIN\0") + buf)


def glb(verts, tris):
    return pack_glb(*gltf_parts(verts, tris))


def nodes_parts(verts, tris):
    """Node transforms (matrix, translation, rotation, scale, children), a
    strip and a fan primitive, and a line primitive (dropped)."""
    doc, buf = gltf_parts(verts, tris)
    strip = struct.pack("<4H", 0, 1, 2, 3)
    doc["bufferViews"].append({"buffer": 0, "byteOffset": len(buf), "byteLength": len(strip)})
    buf += strip
    doc["buffers"][0]["byteLength"] = len(buf)
    doc["accessors"].append({"bufferView": 2, "componentType": 5123, "count": 4, "type": "SCALAR"})
    doc["meshes"].append({"primitives": [{"attributes": {"POSITION": 0}, "indices": 2, "mode": 5},
                                         {"attributes": {"POSITION": 0}, "indices": 2, "mode": 6},
                                         {"attributes": {"POSITION": 0}, "indices": 2, "mode": 1}]})
    doc["nodes"] = [{"mesh": 0, "children": [1, 2], "rotation": [0, 0.7071068, 0, 0.7071068]},
                    {"mesh": 0, "translation": [3, 0, 0], "scale": [-1, 2, 1]},
                    {"mesh": 1, "matrix": [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 5, 0, 1]}]
    return doc, buf


def embedded(doc, buf):
    doc["buffers"][0]["uri"] = "data:application/octet-stream;base64," + base64.b64encode(buf).decode()
    return json.dumps(doc, separators=(",", ":")).encode()


def read_data(name):
    with open(os.path.join(HERE, "..", "data", name), "rb") as f:
        return f.read()


def import_corpus():
    sv, st = soup(CUBE_V, CUBE_T)
    return {
        "tetra.obj": import_input("obj", obj_text(TETRA_V, TETRA_T)),
        "cube_quads.obj": import_input("obj", obj_text(CUBE_V, CUBE_QUADS)),
        "cube_inside_out.obj": import_input("obj", obj_text(CUBE_V, flipped(CUBE_T)), flags=2),
        "cube_hole.obj": import_input("obj", obj_text(CUBE_V, CUBE_T[:-1])),
        "cube_ascii.stl": import_input("stl", stl_ascii(CUBE_V, CUBE_T)),
        "tetra_binary.stl": import_input("stl", stl_binary(TETRA_V, TETRA_T)),
        "cube_binary_norepair.stl": import_input("stl", stl_binary(sv, st), flags=1),
        "octa_ascii.ply": import_input("ply", ply_ascii(OCTA_V, OCTA_T)),
        "cube_binary.ply": import_input("ply", ply_binary(CUBE_V, CUBE_QUADS)),
        "cube_big_endian.ply": import_input("ply", ply_big_endian_extras(CUBE_V, CUBE_QUADS)),
        "cube.off": import_input("off", off_text(CUBE_V, CUBE_QUADS)),
        "octa_colored.off": import_input("off", off_colored(OCTA_V, OCTA_T)),
        "tetra.gltf": import_input("gltf", embedded(*gltf_parts(TETRA_V, TETRA_T))),
        "octa_nodes.gltf": import_input("gltf", embedded(*nodes_parts(OCTA_V, OCTA_T))),
        "octa.glb": import_input("glb", glb(OCTA_V, OCTA_T)),
        "octa_nodes.glb": import_input("glb", pack_glb(*nodes_parts(OCTA_V, OCTA_T))),
        # The project's own small models (tests/data).
        "icosphere.obj": import_input("obj", read_data("icosphere.obj")),
        "two_cubes.obj": import_input("obj", read_data("two_cubes.obj")),
    }


# ---- fuzz_batch inputs ----
PREDICTIVE_DEF = 0x02 | 0x04 | 0x08 | 0x10 | 0x20 | 0x80  # predictive, adaptive, speculative, edges, deep, cull


def batch_header(bits=PREDICTIVE_DEF, bits2=0, margin=0.005, confidence=16, threshold=9):
    return struct.pack("<BBfBB", bits, bits2, margin, confidence, threshold)


def pose_i8(quat=(0, 0, 0, 127), t=(0, 0, 0)):
    """Mode 0: a quaternion of four int8 (/127) and a translation of three int8 (cm)."""
    return struct.pack("<B4b3b", 0, *quat, *t)


def pose_f32(quat, t):
    return struct.pack("<B4f3f", 1, *quat, *t)


def pose_matrix(rot, t):
    return struct.pack("<B9f3f", 2, *rot, *t)


def pair(a, b, key, pa, pb, motion=5, backs=None):
    if motion == 255:
        raise ValueError("motion 255 takes a float")
    head = a | b << 2 | (16 if backs else 0) | key << 5
    out = struct.pack("<B", head) + pa + pb + struct.pack("<B", motion)
    if backs:
        out += backs[0] + backs[1]
    return out


def pairs_op(pairs, rays=False):
    return struct.pack("<B", 0 | (len(pairs) - 1) << 3 | (64 if rays else 0)) + b"".join(pairs)


def approach(a, b, key, steps, start=100, step=-2, backs=False):
    """Mesh b coming at mesh a along x, one pair call a step."""
    ops = b""
    for k in range(steps):
        x = start + step * k
        back = (pose_i8(), pose_i8(t=(x - step, 0, 0))) if backs else None
        ops += pairs_op([pair(a, b, key, pose_i8(), pose_i8(t=(x, 0, 0)), backs=back)])
    return ops


def update_op(mesh, mode, *values, same=False):
    out = struct.pack("<BB", 2 | mesh << 3 | (64 if same else 0), mode)
    for kind, v in values:
        out += struct.pack("<" + kind, v)
    return out


def batch_corpus():
    h = batch_header()
    bodies = struct.pack("<B", 1 | 2 << 3)  # three bodies
    bodies += struct.pack("<B", 0) + pose_i8() + struct.pack("<B", 1 | 8) + pose_i8(t=(50, 0, 0)) + pose_i8(t=(54, 0, 0))
    bodies += struct.pack("<B", 3) + pose_i8(t=(0, 0, -40))
    bodies += struct.pack("<B", 2)  # three pairs
    bodies += struct.pack("<BBBB", 0, 1, 7, 3) + struct.pack("<BBBB", 0, 2, 8, 0) + struct.pack("<BBBB", 1, 2, 9, 0)
    return {
        "approach_blobs": h + approach(0, 1, 1, 16),
        "approach_backs_rays": h + approach(1, 2, 2, 12, backs=True) + pairs_op([pair(1, 2, 2, pose_i8(), pose_i8(t=(20, 0, 0)))], rays=True),
        "deform_while_touching": h + approach(0, 1, 1, 10) + update_op(0, 0, ("b", 20), ("b", 10)) + approach(0, 1, 1, 4, start=24),
        "deform_many_and_refused": h + update_op(0, 3, ("B", 0), ("b", -10), ("b", 5), ("b", -10), ("b", 5))
        + update_op(1, 3, ("B", 2), ("b", 1), ("b", 1), ("b", 1), ("b", 1), ("b", 1), ("b", 1), same=True)
        + update_op(0, 1, ("B", 3), ("f", float("nan")), ("f", 0.0), ("f", 0.0)) + approach(0, 1, 1, 4, start=30),
        "bodies_terrain": h + bodies + bodies,
        "keys_come_and_go": h + pairs_op([pair(0, 1, 1, pose_i8(), pose_i8(t=(40, 0, 0))), pair(1, 2, 2, pose_i8(), pose_i8(t=(0, 40, 0)))])
        + pairs_op([pair(1, 2, 2, pose_i8(), pose_i8(t=(0, 36, 0))), pair(1, 2, 2, pose_i8(), pose_i8(t=(0, 36, 0)))])
        + pairs_op([pair(0, 1, 1, pose_i8(), pose_i8(t=(38, 0, 0)))]),
        "iterative_standalone": h + b"".join(struct.pack("<B", 3) + struct.pack("<B", 0 | 1 << 2) + pose_i8() + pose_i8(t=(60 - 4 * k, 0, 0))
                                            for k in range(10)) + struct.pack("<B", 5) + struct.pack("<B", 3 | 64) + struct.pack("<B", 0) + pose_i8() + pose_i8(),
        "raw_poses": h + pairs_op([pair(0, 2, 3, pose_f32((0, 0, 0, 0), (0, 0, 0)), pose_matrix((2, 0, 0, 0, 2, 0, 0, 0, 2), (0.3, 0, 0))),
                                   pair(1, 3, 4, pose_f32((0, 0, 0, 1), (1e30, 0, 0)), pose_f32((0, 0, 0, 1), (float("inf"), 0, 0)))]),
        "set_def_iterative_fixed": h + approach(0, 1, 1, 4) + struct.pack("<B", 4) + batch_header(0x01 | 0x08, 0x04)
        + struct.pack("<fffB", 0.02, 0.04, 0.03, 8) + approach(0, 1, 1, 6, start=40),
        "set_def_refused": h + struct.pack("<B", 4) + batch_header(0x03, 0x03, margin=float("nan")) + struct.pack("<fffB", -1, 0, 0, 0)
        + approach(2, 3, 5, 4, start=0),
        "queries_and_empty": h + struct.pack("<B3b", 6 | 0 << 3, 10, 0, 0) + struct.pack("<B3b", 6 | 3 << 3, 0, 0, 30) + struct.pack("<B", 7 | 8),
        "standard_brute_force": batch_header(0x00 | 0x40, 0x02) + approach(0, 2, 0, 4, start=40),
        # 44 operations: three pairs a call (one with back poses), a deformation every fourth; a seed this
        # long lets libFuzzer's length control grow inputs to it.
        "long_sequence": h + b"".join(
            update_op(0, 0, ("b", k % 7 - 3), ("b", 4)) if k % 4 == 3 else
            pairs_op([pair(0, 1, 1, pose_i8(), pose_i8(t=(100 - 2 * k, 0, 0)),
                           backs=(pose_i8(), pose_i8(t=(102 - 2 * k, 0, 0)))),
                      pair(1, 2, 2, pose_i8(), pose_i8(t=(0, 95 - 2 * k, 0))),
                      pair(0, 3, 3, pose_i8(), pose_i8(t=(0, 0, -60 + k)))])
            for k in range(44)),
    }


# ---- fuzz_bullet inputs ----
def bullet_input(verts, tris, unit_index=4, scaling=(32, 32, 32), bits=0x1E, ops=b""):
    """Coordinates as int8 of unit / 127 (unit_index 4: 1 m), triangles as bytes."""
    unit = [1e-4, 0.01, 0.1, 0.5, 1.0, 5.0, 1e3][unit_index]
    head = struct.pack("<BBBB3bB", bits, (len(verts) - 4) % 61, (len(tris) - 1) % 96, unit_index, *scaling, 0)
    body = b"".join(struct.pack("<3b", *(max(-127, min(127, round(c / unit * 127))) for c in p)) for p in verts)
    body += b"".join(struct.pack("<3B", *t) for t in tris)
    return head + body + ops


def bullet_corpus():
    half_cube = [tuple(c * 0.5 for c in v) for v in CUBE_V]
    steps = b"\x00" * 30
    move = struct.pack("<BB3b", 1, 6, 20, 20, 20)  # vertex 6 out, refreshShape
    pose = struct.pack("<BB3b4b3b", 3, 0, 0, 0, 10, 0, 0, 0, 127, 0, 0, -20)
    return {
        "cube_drops": bullet_input(half_cube, CUBE_T, ops=steps),
        "cube_deforms": bullet_input(half_cube, CUBE_T, ops=b"\x00" * 10 + move + b"\x00" * 5 + struct.pack("<BB3b", 2, 0, -40, -40, -40) + b"\x00" * 5),
        "cube_mirrored": bullet_input(half_cube, CUBE_T, scaling=(-32, 32, 32), ops=steps),
        "cube_flat_scaling": bullet_input(half_cube, CUBE_T, scaling=(32, 32, 0), ops=steps),
        "cube_rescaled_and_moved": bullet_input(half_cube, CUBE_T, ops=b"\x00" * 5 + struct.pack("<B3b", 5, 64, 16, 32) + pose + b"\x00" * 10),
        "open_quad": bullet_input([(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0)], [(0, 1, 2), (0, 2, 3)], ops=steps),
        "inside_out_tetra": bullet_input(TETRA_V, flipped(TETRA_T), unit_index=3, ops=steps),
        "degenerate_and_tiny": bullet_input(TETRA_V, [(0, 0, 1), (0, 1, 2), (1, 2, 3)], unit_index=0, ops=steps),
        "octa_huge": bullet_input(OCTA_V, OCTA_T, unit_index=6, ops=b"\x00" * 8),
        "removed_and_back": bullet_input(OCTA_V, OCTA_T, unit_index=3, ops=b"\x00" * 5 + b"\x04" + b"\x00" * 5 + b"\x04" + b"\x00" * 5),
        "def_changes_and_check": bullet_input(half_cube, CUBE_T, ops=b"\x00" * 4 + b"\x06\x02" + b"\x00" * 4 + b"\x06\x03" + b"\x07" + b"\x00" * 6 + b"\x07"),
        "open_cube_wrapped": bullet_input(half_cube, CUBE_T[2:], bits=0x3E, ops=b"\x00" * 6),
        # The longest world the header allows (50 vertices, 96 triangles) and 40 operations: a seed this long
        # lets libFuzzer's length control grow inputs to it.
        "sphere_long": bullet_input(*uv_sphere(6, 8, 0.4), ops=long_ops()),
    }


def uv_sphere(rings, segments, radius):
    """Closed, counter-clockwise from outside: two poles and rings x segments vertices."""
    verts = [(0, 0, radius)]
    for i in range(1, rings + 1):
        polar = math.pi * i / (rings + 1)
        for j in range(segments):
            az = 2 * math.pi * j / segments
            verts.append((radius * math.sin(polar) * math.cos(az), radius * math.sin(polar) * math.sin(az),
                          radius * math.cos(polar)))
    verts.append((0, 0, -radius))
    south = len(verts) - 1
    tris = [(0, 1 + j, 1 + (j + 1) % segments) for j in range(segments)]
    for i in range(rings - 1):
        a, b = 1 + i * segments, 1 + (i + 1) * segments
        for j in range(segments):
            k = (j + 1) % segments
            tris += [(a + j, b + j, b + k), (a + j, b + k, a + k)]
    last = 1 + (rings - 1) * segments
    tris += [(last + j, south, last + (j + 1) % segments) for j in range(segments)]
    return verts, tris


def long_ops():
    """40 operations: steps, a vertex moved out, bodies placed, a rescale."""
    ops = b""
    for k in range(40):
        if k % 5 == 1:
            ops += struct.pack("<BB3b", 1, (7 * k) % 50, 10, -10, 40)
        elif k % 5 == 3:
            ops += struct.pack("<BB3b4b3b", 3, k % 3, 0, 0, 20 + k % 7, 0, 0, 30, 120, 0, 0, -10)  # dynamic bodies: velocities read
        elif k % 10 == 9:
            ops += struct.pack("<B3b", 5, 32, 40, 24)
        else:
            ops += b"\x00"
    return ops


def write(folder, files):
    path = os.path.join(HERE, "corpus", folder)
    os.makedirs(path, exist_ok=True)
    for name, data in files.items():
        with open(os.path.join(path, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    write("mesh", mesh_corpus())
    write("batch", batch_corpus())
    write("bullet", bullet_corpus())
    write("import", import_corpus())
