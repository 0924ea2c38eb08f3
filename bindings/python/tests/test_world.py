"""Worlds: stepping against physics, the batch getters against the per-body C getters, errors, lifetimes."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import rtcd
from conftest import cube_arrays

G = 9.81
DT = 1.0 / 60.0


def quat_matrix(q):
    """Row-major rotation of a unit quaternion (x, y, z, w): the textbook formula."""
    x, y, z, w = (float(c) for c in q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def test_cube_falls_and_rests_on_the_plane(cube):
    world = rtcd.World(backend="cpu")
    world.add_plane((0, 0, 1), 0.0)
    shape = world.create_shape(rtcd.Mesh(*cube, name="cube"))
    z0 = 1.5
    body = world.add_body(shape, 2.0, (0.0, 0.0, z0, 0.0, 0.0, 0.0, 1.0))
    # free fall first: Bullet's semi-implicit Euler gives z = z0 - g dt^2 n (n + 1) / 2 after n steps
    world.step(10)
    assert world.pose(body)[2] == pytest.approx(z0 - G * DT * DT * 55, abs=1e-4)
    assert world.velocities()[body, 2] == pytest.approx(-G * DT * 10, abs=1e-4)
    world.step(50)  # 60 steps, 1 s: landed (0.45 s) and at rest
    p, v = world.poses(), world.velocities()
    assert p.shape == (1, 7) and v.shape == (1, 6)
    assert np.all(np.isfinite(p)) and np.all(np.isfinite(v))
    assert 0.49 < p[0, 2] < 0.52  # the cube's half height above the plane, penetration under 1 cm
    assert np.allclose(p[0, :2], 0, atol=0.01) and np.linalg.norm(v[0, :3]) < 0.1
    assert abs(p[0, 6]) > 0.999  # still upright
    st = world.last_step_stats()
    assert set(st) == {name for name, _ in rtcd.ffi.typeof("rtcd_step_stats").fields}
    assert st["contacts"] >= 3 and st["pairs_owned"] >= 1 and st["step_ms"] > 0
    assert world.measure_penetration()["max"] < 0.01
    assert world.backend == "cpu" and world.thread_count >= 1 and world.device_names == []


def make_pile(n=6, **kw):
    """Blobs at seeded orientations over a plane, thrown sideways and spinning."""
    world = rtcd.World(backend="cpu", **kw)
    world.add_plane()
    shape = world.create_shape(rtcd.Mesh.blob(seed=3))
    box = world.create_convex("box", half_extents=(0.3, 0.2, 0.1))
    rng = np.random.default_rng(5)
    for i in range(n):
        q = rng.normal(size=4)
        q /= np.linalg.norm(q)
        b = world.add_body(shape if i % 3 else box, 1.0, np.r_[[1.1 * (i % 3), 1.1 * (i // 3), 0.8], q])
        world.set_velocity(b, rng.normal(size=3), rng.normal(size=3))
    return world


def test_batch_getters_equal_per_body_getters():
    world = make_pile()
    world.step(40)
    poses, transforms, velocities = world.poses(), world.transforms(), world.velocities()
    t = rtcd.ffi.new("rtcd_transform*")
    lin, ang = rtcd.ffi.new("float[3]"), rtcd.ffi.new("float[3]")
    for b in range(len(world)):
        assert rtcd.lib.rtcd_world_get_pose(world.handle, b, t) == rtcd.lib.RTCD_OK
        assert rtcd.lib.rtcd_world_get_velocity(world.handle, b, lin, ang) == rtcd.lib.RTCD_OK
        per_body = np.array(list(t.rotation) + list(t.translation), dtype=np.float32)
        assert np.array_equal(transforms[b], per_body)
        assert np.array_equal(poses[b, :3], per_body[9:])
        assert np.array_equal(velocities[b], np.array(list(lin) + list(ang), dtype=np.float32))
        q = poses[b, 3:]
        assert np.linalg.norm(q) == pytest.approx(1, abs=1e-6) and q[3] >= 0
        assert np.allclose(quat_matrix(q), per_body[:9].reshape(3, 3), atol=1e-5)
    assert np.array_equal(world.poses(2, 3), poses[2:5])
    assert np.array_equal(world.velocities(5), velocities[5:])
    assert world.poses(len(world)).shape == (0, 7)
    m = world.matrices()
    assert np.array_equal(m[:, :3, 3], poses[:, :3]) and np.array_equal(m[:, 3], np.tile([0, 0, 0, 1], (6, 1)))


def test_poses_round_trip_into_bodies():
    """A pose read back (7 values, 12 values or a 4x4 matrix) makes a body at the same place."""
    world = make_pile(3)
    world.step(20)
    shape = world.create_shape(rtcd.Mesh.blob(seed=3))
    p, t, m = world.poses()[1], world.transforms()[1], world.matrices()[1]
    a, b, c = (world.add_body(shape, 1.0, pose) for pose in (p, t, m))
    got = world.transforms()
    assert np.array_equal(got[b], t) and np.array_equal(got[c], t)
    assert np.allclose(got[a], t, atol=1e-6)
    with pytest.raises(ValueError):
        world.add_body(shape, 1.0, np.zeros(5))
    with pytest.raises(rtcd.Error):
        world.add_body(shape, 1.0, (0, 0, 1, np.nan, 0, 0, 1))


def test_errors_carry_name_and_message():
    world = make_pile(3)
    with pytest.raises(rtcd.Error) as info:
        world.poses(2, 5)
    assert info.value.name == "RTCD_ERROR_INVALID_ARGUMENT" and "out of range" in info.value.message
    with pytest.raises(rtcd.Error) as info:
        world.set_velocity(99, (0, 0, 0))
    assert "out of range" in info.value.message
    with pytest.raises(rtcd.Error) as info:
        rtcd.World(time_step=-1.0)
    assert info.value.name == "RTCD_ERROR_INVALID_ARGUMENT" and "time_step" in info.value.message
    with pytest.raises(rtcd.Error) as info:
        rtcd.World(backend="quantum")
    assert "backend" in info.value.message
    shape = world.create_convex("sphere", radius=0.2)
    with pytest.raises(rtcd.Error) as info:
        world.add_body(shape, -1.0)
    assert "mass" in info.value.message
    with pytest.raises(rtcd.Error) as info:
        shape.set_vertices(np.zeros((3, 3)))
    with pytest.raises(rtcd.Error) as info:
        world.create_convex("sphere", radius=-1.0)
    assert info.value.name == "RTCD_ERROR_INVALID_ARGUMENT"
    import pickle

    again = pickle.loads(pickle.dumps(info.value))  # Ray ships exceptions between processes
    assert (again.name, again.message) == (info.value.name, info.value.message)


def test_world_keywords_reach_the_def():
    """Options change the simulation: no gravity keeps a body where it is; gimpact runs."""
    world = rtcd.World(gravity=(0, 0, 0), backend="cpu", algorithm="standard", threads=1)
    shape = world.create_shape(rtcd.Mesh.blob(seed=2))
    world.add_body(shape, 1.0, (0, 0, 3, 0, 0, 0, 1))
    world.step(30)
    assert np.array_equal(world.poses()[0], np.array([0, 0, 3, 0, 0, 0, 1], dtype=np.float32))
    assert world.thread_count == 1
    gimpact = rtcd.World(narrowphase="gimpact")
    gimpact.add_plane()
    b = gimpact.add_body(gimpact.create_shape(rtcd.Mesh.blob(seed=2)), 1.0, (0, 0, 0.6, 0, 0, 0, 1))
    gimpact.step(60)
    assert 0.3 < gimpact.pose(b)[2] < 0.7


def test_penetration_of_overlapping_bodies(cube):
    world = rtcd.World(backend="cpu", gravity=(0, 0, 0))
    shape = world.create_shape(rtcd.Mesh(*cube))
    world.add_body(shape, 1.0, (0, 0, 0, 0, 0, 0, 1))
    # B spans x 0.4..1.4, y -0.3..0.7, z -0.4..0.6: B's corner (0.4, -0.3, -0.4) is 0.1 inside A, A's
    # corner (0.5, 0.5, 0.5) 0.1 inside B; every other corner is outside (none on a face)
    world.add_body(shape, 1.0, (0.9, 0.2, 0.1, 0, 0, 0, 1))
    pen = world.measure_penetration()
    assert pen["vertices_inside"] == 2
    assert pen["max"] == pytest.approx(0.1, abs=1e-5) and pen["sum"] == pytest.approx(0.2, abs=1e-5)
    world2 = rtcd.World(backend="cpu", gravity=(0, 0, 0))
    s2 = world2.create_shape(rtcd.Mesh(*cube))
    world2.add_body(s2, 1.0, (0, 0, 0, 0, 0, 0, 1))
    world2.add_body(s2, 1.0, (1.5, 0, 0, 0, 0, 0, 1))
    assert world2.measure_penetration() == {"max": 0.0, "sum": 0.0, "vertices_inside": 0}


def test_deforming_shape():
    world = rtcd.World(backend="cpu")
    world.add_plane()
    mesh = rtcd.Mesh.blob(seed=4)
    shape = world.create_shape(mesh)
    world.add_body(shape, 1.0, (0, 0, 1, 0, 0, 0, 1))
    volume = shape.body_mesh.mass_properties()["volume"]
    shape.set_vertices(1.2 * mesh.vertices)
    assert shape.body_mesh.mass_properties()["volume"] == pytest.approx(1.728 * volume, rel=1e-4)
    world.step(10)
    with pytest.raises(rtcd.Error) as info:
        shape.set_vertices(mesh.vertices[:10])
    assert info.value.name == "RTCD_ERROR_INVALID_ARGUMENT"
    box = world.create_convex("box", half_extents=(0.2, 0.2, 0.2))
    with pytest.raises(rtcd.Error) as info:
        box.set_vertices(np.zeros((box.body_mesh.vertex_count, 3)))
    assert info.value.name == "RTCD_ERROR_UNSUPPORTED"
    compound = world.create_compound([rtcd.Mesh.blob(seed=5), rtcd.Mesh.blob(seed=6)])
    with pytest.raises(rtcd.Error) as info:
        compound.set_vertices(compound.body_mesh.vertices)
    assert info.value.name == "RTCD_ERROR_UNSUPPORTED"


def test_compound_static_mesh_and_convex_shapes():
    world = rtcd.World(backend="cpu")
    left, right = rtcd.Mesh(*cube_arrays(0.3, (-0.35, 0, 0))), rtcd.Mesh(*cube_arrays(0.3, (0.35, 0, 0)))
    compound = world.create_compound([left, right])
    assert compound.center_of_mass == pytest.approx([0, 0, 0], abs=1e-6)
    floor_v = np.array([[-5, -5, 0], [5, -5, 0], [5, 5, 0], [-5, 5, 0]], dtype=np.float32)
    floor = rtcd.Mesh(floor_v, [[0, 1, 2], [0, 2, 3]], open_surface=True, name="floor")
    world.add_static_mesh(floor)
    world.add_body(compound, 2.0, (0, 0, 1, 0, 0, 0, 1))
    for kind, kw in (("sphere", dict(radius=0.2)), ("capsule", dict(radius=0.1, half_height=0.2)),
                     ("hull", dict(points=np.random.default_rng(1).normal(size=(20, 3)) * 0.2))):
        world.add_body(world.create_convex(kind, **kw), 1.0, (1.5 * len(world) - 3.0, 2.0, 1, 0, 0, 0, 1))
    world.step(90)
    p = world.poses()
    assert np.all(np.isfinite(p)) and np.all(p[:, 2] > 0.05) and np.all(p[:, 2] < 0.7)  # all landed on the floor
    with pytest.raises(rtcd.Error):
        world.create_compound([])


def test_lifetimes_world_dropped_before_shapes():
    world = rtcd.World(backend="cpu")
    mesh = rtcd.Mesh.blob(seed=1)
    shape = world.create_shape(mesh)
    world.add_body(shape, 1.0, (0, 0, 1, 0, 0, 0, 1))
    mesh.close()  # the shape holds the C mesh
    body_mesh = shape.body_mesh
    world.step(5)
    world.close()  # bodies gone; the shape outlives its world
    with pytest.raises(ValueError):
        world.step()
    assert body_mesh.vertex_count == 453 and shape.center_of_mass.shape == (3,)
    other = rtcd.World(backend="cpu")
    with pytest.raises(rtcd.Error) as info:
        other.add_body(shape, 1.0)
    assert "another world" in info.value.message
    shape.close()
    assert body_mesh.mass_properties()["volume"] > 0  # its own reference


def test_lifetimes_objects_are_collected():
    world = rtcd.World(backend="cpu")
    shape = world.create_shape(rtcd.Mesh.blob(seed=1))
    world.add_body(shape, 1.0, (0, 0, 1, 0, 0, 0, 1))
    refs = [weakref.ref(world), weakref.ref(shape)]
    body_mesh = shape.body_mesh
    del world, shape
    gc.collect()
    assert all(r() is None for r in refs)
    assert body_mesh.vertex_count == 453  # still valid: it holds a reference of its own


def _rss_kib() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4


def test_no_leak_over_many_worlds():
    """Hundreds of worlds with meshes, shapes, bodies and steps, dropped in every order: the memory stays."""

    def one(i):
        world = rtcd.World(backend="cpu", threads=1)
        world.add_plane()
        mesh = rtcd.Mesh.blob(seed=1 + i % 3)
        shape = world.create_shape(mesh)
        for k in range(4):
            world.add_body(shape, 1.0, (k, 0, 1, 0, 0, 0, 1))
        world.step(2)
        world.poses(), world.velocities(), world.last_step_stats(), world.measure_penetration()
        if i % 2:
            world.close()  # the world first, then the shape and the mesh
        return shape

    for i in range(40):  # warm up the allocators
        one(i)
    gc.collect()
    before = _rss_kib()
    for i in range(300):
        one(i)
    gc.collect()
    grown = _rss_kib() - before
    assert grown < 20_000, f"RSS grew by {grown} KiB over 300 worlds"
