"""Meshes: numpy in and out, validation errors, trimesh, files, generated meshes, lifetimes."""

from __future__ import annotations

import numpy as np
import pytest

import rtcd
from conftest import REPO, cube_arrays


def test_mesh_from_numpy(cube):
    v, t = cube
    m = rtcd.Mesh(v, t, name="cube")
    assert (m.vertex_count, m.triangle_count, m.name) == (8, 12, "cube")
    assert np.array_equal(m.vertices, v.astype(np.float32))
    assert np.array_equal(m.triangles, t.astype(np.uint32))
    assert m.vertices.dtype == np.float32 and m.triangles.dtype == np.uint32
    lo, hi = m.bounds
    assert np.array_equal(lo, [-0.5] * 3) and np.array_equal(hi, [0.5] * 3)
    mp = m.mass_properties()
    assert mp["volume"] == pytest.approx(1.0, rel=1e-6)  # a unit cube
    assert np.allclose(mp["center_of_mass"], 0, atol=1e-7)
    assert np.allclose(mp["inertia"], np.eye(3) / 6, atol=1e-6)  # (a^2 + a^2) / 12 per unit mass
    assert m.contains((0.1, 0.2, 0.3)) and not m.contains((0.6, 0.0, 0.0))
    # outward unit normals of the faces: the box's axes
    n = m.triangle_normals
    assert np.allclose(np.abs(n).sum(axis=1), 1) and np.allclose(np.linalg.norm(n, axis=1), 1)


def test_open_mesh_raises_open_edge(cube):
    v, t = cube
    with pytest.raises(rtcd.Error) as info:
        rtcd.Mesh(v, t[:-1], name="open cube")
    e = info.value
    assert e.name == "RTCD_ERROR_MESH_OPEN_EDGE"
    assert e.code == rtcd.lib.RTCD_ERROR_MESH_OPEN_EDGE
    assert "RTCD_ERROR_MESH_OPEN_EDGE" in str(e) and "edge" in e.message
    assert "open cube" in e.message


def test_other_mesh_errors(cube):
    v, t = cube
    with pytest.raises(rtcd.Error) as info:
        rtcd.Mesh(v, t[:, ::-1])
    assert info.value.name == "RTCD_ERROR_MESH_INSIDE_OUT"
    flipped = rtcd.Mesh(v, t[:, ::-1], flip_inside_out=True)
    assert flipped.mass_properties()["volume"] == pytest.approx(1.0, rel=1e-6)
    bad = t.copy()
    bad[3, 1] = 8
    with pytest.raises(rtcd.Error) as info:
        rtcd.Mesh(v, bad)
    assert info.value.name == "RTCD_ERROR_MESH_INDEX_OUT_OF_RANGE"
    nan = v.copy()
    nan[2, 0] = np.nan
    with pytest.raises(rtcd.Error) as info:
        rtcd.Mesh(nan, t)
    assert info.value.name == "RTCD_ERROR_MESH_NONFINITE_VERTEX"
    with pytest.raises(rtcd.Error) as info:
        rtcd.Mesh(v, t - 1)  # -1: not a vertex index
    assert info.value.name == "RTCD_ERROR_INVALID_ARGUMENT"
    with pytest.raises(ValueError):
        rtcd.Mesh(v[:, :2], t)
    with pytest.raises(ValueError):
        rtcd.Mesh(v, t.astype(np.float32))
    assert rtcd.error_names()[rtcd.lib.RTCD_ERROR_MESH_OPEN_EDGE] == "RTCD_ERROR_MESH_OPEN_EDGE"


def test_trimesh_round_trip():
    trimesh = pytest.importorskip("trimesh")
    tm = trimesh.creation.icosphere(subdivisions=2, radius=0.5)
    m = rtcd.Mesh.from_trimesh(tm, name="icosphere")
    back = m.to_trimesh()
    assert isinstance(back, trimesh.Trimesh)
    assert np.array_equal(back.faces, tm.faces)
    assert np.array_equal(back.vertices, tm.vertices.astype(np.float32))
    assert back.is_watertight and back.volume == pytest.approx(m.mass_properties()["volume"], rel=1e-5)
    assert back.volume == pytest.approx(tm.volume, rel=1e-5)
    # and rtcd -> trimesh -> rtcd is exact
    again = rtcd.Mesh.from_trimesh(back)
    assert np.array_equal(again.vertices, m.vertices) and np.array_equal(again.triangles, m.triangles)


def test_generated_meshes():
    v, t = rtcd.generate_blob(rtcd.AVALANCHE_BLOB_VERTICES, 0.5, 7)
    assert v.shape == (453, 3) and t.shape == (902, 3)
    m = rtcd.Mesh.blob(seed=7)
    assert np.array_equal(m.vertices, v) and np.array_equal(m.triangles, t) and m.name == "blob"
    assert not np.array_equal(rtcd.generate_blob(453, 0.5, 8)[0], v)  # the seed matters
    box = rtcd.Mesh.box((0.5, 1.0, 1.5), 2)
    assert box.mass_properties()["volume"] == pytest.approx(6.0, rel=1e-6)
    sphere = rtcd.Mesh.uv_sphere(16, 32, 1.0)
    assert sphere.mass_properties()["volume"] == pytest.approx(4 / 3 * np.pi, rel=0.03)
    torus = rtcd.Mesh.torus(1.0, 0.25, 48, 24)
    assert torus.mass_properties()["volume"] == pytest.approx(2 * np.pi**2 * 1.0 * 0.25**2, rel=0.03)


def test_update_vertices(cube):
    v, t = cube
    m = rtcd.Mesh(v, t)
    m.update_vertices(2 * v)
    assert m.version == 1 and m.mass_properties()["volume"] == pytest.approx(8.0, rel=1e-6)
    flat = v.copy()
    flat[:, 2] = 0  # degenerate: refused, nothing changes
    with pytest.raises(rtcd.Error):
        m.update_vertices(flat)
    assert m.version == 1 and np.array_equal(m.vertices, (2 * v).astype(np.float32))
    with pytest.raises(ValueError):
        m.update_vertices(v[:4])


@pytest.mark.skipif(not rtcd.have_import(), reason="rtcd built without the import library (assimp)")
def test_from_file():
    trimesh = pytest.importorskip("trimesh")
    path = REPO / "tests" / "data" / "icosphere.obj"
    m = rtcd.Mesh.from_file(path)
    ref = trimesh.load(path, force="mesh")
    assert m.triangle_count == len(ref.faces)
    assert m.mass_properties()["volume"] == pytest.approx(ref.volume, rel=1e-5)
    two = rtcd.import_file(REPO / "tests" / "data" / "two_cubes.obj")
    assert two.status in ("accepted", "repaired") and len(two.meshes) == 2
    with pytest.raises(rtcd.Error) as info:
        rtcd.Mesh.from_file(REPO / "tests" / "data" / "two_cubes.obj")
    assert info.value.name == "RTCD_ERROR_INVALID_ARGUMENT"
    with pytest.raises(rtcd.Error) as info:
        rtcd.import_file(REPO / "tests" / "data" / "no_such_file.obj")
    assert info.value.name == "RTCD_ERROR_INVALID_ARGUMENT"


def test_closed_mesh_raises_value_error():
    m = rtcd.Mesh(*cube_arrays())
    m.close()
    m.close()  # twice is fine
    with pytest.raises(ValueError):
        m.vertices
    assert "closed" in repr(m)
