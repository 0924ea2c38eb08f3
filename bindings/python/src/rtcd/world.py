"""The C API over Bullet (rtcd_world.h): worlds, shapes, bodies, planes, stepping."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Union

import numpy as np

from ._native import ArrayLike, Handle, as_array, c_string, ffi, float_ptr, lib, out_float_ptr, to_str
from .errors import check as _check  # not `check`: World takes a `check` keyword
from .errors import invalid
from .mesh import Mesh

__all__ = ["World", "Shape", "transform", "pose_checksum", "NARROWPHASES", "BACKENDS", "ALGORITHMS",
           "TRAVERSALS", "CONTACT_NORMALS", "CONVEX_KINDS"]

# Option names (the C demos' spellings) to the C enums.
NARROWPHASES = {"rtcd": lib.RTCD_NARROWPHASE_RTCD, "gimpact": lib.RTCD_NARROWPHASE_GIMPACT,
                "hull": lib.RTCD_NARROWPHASE_HULL}
BACKENDS = {"auto": lib.RTCD_BACKEND_AUTO, "cpu": lib.RTCD_BACKEND_CPU, "opencl": lib.RTCD_BACKEND_OPENCL}
ALGORITHMS = {"standard": lib.RTCD_ALGORITHM_STANDARD, "iterative": lib.RTCD_ALGORITHM_ITERATIVE,
              "predictive": lib.RTCD_ALGORITHM_PREDICTIVE}
TRAVERSALS = {"bvh": lib.RTCD_TRAVERSAL_BVH, "brute-force": lib.RTCD_TRAVERSAL_BRUTE_FORCE,
              "bvh-stackless": lib.RTCD_TRAVERSAL_BVH_STACKLESS}
CONTACT_NORMALS = {"reprojected": lib.RTCD_CONTACT_REPROJECTED, "ray": lib.RTCD_CONTACT_RAY,
                   "weighted": lib.RTCD_CONTACT_RAY_WEIGHTED}
CONVEX_KINDS = {"box": lib.RTCD_CONVEX_BOX, "sphere": lib.RTCD_CONVEX_SPHERE, "capsule": lib.RTCD_CONVEX_CAPSULE,
                "cylinder": lib.RTCD_CONVEX_CYLINDER, "cone": lib.RTCD_CONVEX_CONE, "hull": lib.RTCD_CONVEX_HULL}

Pose = Union[None, ArrayLike]


def _choice(table: Dict[str, int], value: Union[str, int], what: str) -> int:
    if isinstance(value, str):
        if value not in table:
            raise invalid(f"{what} '{value}': one of {', '.join(table)}")
        return table[value]
    return int(value)  # a C enum value; rtcd checks it


def transform(pose: Pose) -> Any:
    """An ``rtcd_transform`` (cdata) from a pose given as

    * None: the identity;
    * 7 numbers: position x y z and unit quaternion x y z w (``rtcd_transform_from_quat``,
      the layout :meth:`World.poses` returns);
    * 12 numbers: ``rtcd_transform``'s own order, rotation (3x3 row-major) then translation
      (the layout :meth:`World.transforms` returns);
    * a (3, 4) ``[R | t]`` or (4, 4) homogeneous matrix.
    """
    t = ffi.new("rtcd_transform*")
    if pose is None:
        t[0] = lib.rtcd_transform_identity()
        return t
    a = np.asarray(pose, dtype=np.float32)
    if a.shape == (7,):
        if not np.all(np.isfinite(a)):
            raise invalid(f"pose {a.tolist()} is not finite")
        a = np.ascontiguousarray(a)
        t[0] = lib.rtcd_transform_from_quat(float_ptr(a[3:7]), float_ptr(a[0:3]))
    elif a.shape == (12,):
        t.rotation = a[:9].tolist()
        t.translation = a[9:].tolist()
    elif a.shape in ((3, 4), (4, 4)):
        t.rotation = a[:3, :3].ravel().tolist()
        t.translation = a[:3, 3].tolist()
    else:
        raise ValueError(f"pose: expected 7 (position, quaternion xyzw), 12 (rtcd_transform), (3, 4) or (4, 4) "
                         f"values, got shape {a.shape}")
    return t


def _matrix(t: Any) -> np.ndarray:
    """An rtcd_transform (cdata) as a (4, 4) float32 homogeneous matrix."""
    m = np.eye(4, dtype=np.float32)
    m[:3, :3] = np.array(list(t.rotation), dtype=np.float32).reshape(3, 3)
    m[:3, 3] = list(t.translation)
    return m


def pose_checksum(transforms: np.ndarray) -> int:
    """FNV-1a 64 over the bytes of (N, 12) float32 transforms (:meth:`World.transforms`).

    The C demos' ``demo_pose_checksum``: equal checksums mean bit-identical
    final poses. Print it as ``f"{value:016x}"``.
    """
    data = np.ascontiguousarray(transforms, dtype=np.float32)
    if data.ndim != 2 or data.shape[1] != 12:
        raise ValueError(f"transforms: expected shape (N, 12), got {data.shape}")
    h = 0xCBF29CE484222325
    for byte in data.astype("<f4", copy=False).tobytes():
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


class Shape(Handle):
    """A body shape of one world (``rtcd_shape``): a concave mesh, a compound or a convex primitive.

    Create shapes with :meth:`World.create_shape`, :meth:`World.create_compound`
    or :meth:`World.create_convex`. Any number of bodies may share one. The
    shape keeps its world's Python object alive; bodies keep the C shape alive.
    """

    __slots__ = ("_world",)
    _kind = "shape"

    def __init__(self, ptr: Any, world: "World") -> None:
        self._ptr = ffi.gc(ptr, lib.rtcd_shape_release)
        self._world = world

    @property
    def world(self) -> "World":
        return self._world

    @property
    def center_of_mass(self) -> np.ndarray:
        """(3,) the mesh's centre of mass, in the mesh's coordinates."""
        com = ffi.new("float[3]")
        lib.rtcd_shape_center_of_mass(self.handle, com)
        return np.array(list(com), dtype=np.float32)

    @property
    def frame(self) -> np.ndarray:
        """(4, 4) the body frame in mesh coordinates: mesh point = frame @ body point."""
        t = ffi.new("rtcd_transform*", lib.rtcd_shape_frame(self.handle))
        return _matrix(t)

    @property
    def body_mesh(self) -> Mesh:
        """The mesh in the body frame (what collides); a new reference to the shape's own."""
        return Mesh._adopt(lib.rtcd_shape_body_mesh(self.handle), retain=True)

    def set_vertices(self, vertices: ArrayLike) -> None:
        """Deforms the shape: new positions for the vertices of the mesh it was created from
        (same order and frame). Every body of the shape deforms with it."""
        v = as_array(vertices, np.float32, (None, 3), "vertices")
        body = lib.rtcd_shape_body_mesh(self.handle)
        n = int(lib.rtcd_mesh_vertex_count(body)) if body != ffi.NULL else 0
        if len(v) != n:  # the C call reads exactly n vertices
            raise invalid(f"set_vertices: {len(v)} vertices given, the shape has {n}")
        _check(lib.rtcd_shape_set_vertices(self.handle, float_ptr(v), 0))


class World(Handle):
    """A Bullet dynamics world whose concave pairs go through rtcd (``rtcd_world``).

    Every keyword sets the field of ``rtcd_world_def`` (or of its
    ``narrowphase`` def) of the same name; None keeps rtcd's default. Enums
    take the C demos' option names:

    * ``narrowphase``: "rtcd" (default), "gimpact", "hull";
    * ``backend``: "auto" (default), "cpu", "opencl";
    * ``algorithm``: "standard", "iterative", "predictive" (default);
    * ``traversal``: "bvh" (default), "brute-force", "bvh-stackless";
    * ``contact_normal``: "reprojected" (default), "ray", "weighted".

    Bodies are numbered in the order they are added. A world is not
    thread-safe: use one per thread (or process: see the Ray sweep example).
    """

    __slots__ = ()
    _kind = "world"

    def __init__(
        self,
        *,
        gravity: Optional[Sequence[float]] = None,
        time_step: Optional[float] = None,
        solver_iterations: Optional[int] = None,
        narrowphase: Union[str, int, None] = None,
        backend: Union[str, int, None] = None,
        devices: Optional[str] = None,
        max_devices: Optional[int] = None,
        threads: Optional[int] = None,
        algorithm: Union[str, int, None] = None,
        adaptive: Optional[bool] = None,
        traversal: Union[str, int, None] = None,
        contact_normal: Union[str, int, None] = None,
        cull_separated: Optional[bool] = None,
        speculative: Optional[bool] = None,
        speculative_margin: Optional[float] = None,
        edge_crossings: Optional[bool] = None,
        deep_contacts: Optional[bool] = None,
        linear_damping: Optional[float] = None,
        angular_damping: Optional[float] = None,
        friction: Optional[float] = None,
        restitution: Optional[float] = None,
        rolling_friction: Optional[float] = None,
        check: Optional[bool] = None,
    ) -> None:
        d = ffi.new("rtcd_world_def*", lib.rtcd_default_world_def())
        nd = d.narrowphase
        if gravity is not None:
            d.gravity = as_array(gravity, np.float32, (3,), "gravity").tolist()
        for name, value in (("time_step", time_step), ("solver_iterations", solver_iterations),
                            ("linear_damping", linear_damping), ("angular_damping", angular_damping),
                            ("friction", friction), ("restitution", restitution),
                            ("rolling_friction", rolling_friction)):
            if value is not None:
                setattr(d, name, value)
        if check is not None:
            d.check = int(bool(check))
        if narrowphase is not None:
            d.narrowphase_kind = _choice(NARROWPHASES, narrowphase, "narrowphase")
        if backend is not None:
            nd.backend = _choice(BACKENDS, backend, "backend")
        if traversal is not None:
            nd.traversal = _choice(TRAVERSALS, traversal, "traversal")
        if contact_normal is not None:
            nd.contact_normal = _choice(CONTACT_NORMALS, contact_normal, "contact_normal")
        if algorithm is not None:
            nd.iterative.algorithm = _choice(ALGORITHMS, algorithm, "algorithm")
        if adaptive is not None:
            nd.iterative.adaptive = int(bool(adaptive))
        for name, flag in (("cull_separated", cull_separated), ("speculative", speculative),
                           ("edge_crossings", edge_crossings), ("deep_contacts", deep_contacts)):
            if flag is not None:
                setattr(nd, name, int(bool(flag)))
        if speculative_margin is not None:
            nd.speculative_margin = speculative_margin
        if max_devices is not None:
            nd.max_devices = max_devices
        if threads is not None:
            nd.threads = threads
        c_devices = c_string(devices)  # read at creation only
        nd.devices = c_devices
        out = ffi.new("rtcd_world**")
        _check(lib.rtcd_world_create(d, out))
        self._ptr = ffi.gc(out[0], lib.rtcd_world_release)

    # ---- lifetime ----------------------------------------------------

    def close(self) -> None:
        """Releases the world and its bodies now. Shapes made for it stay valid objects
        (they outlive the world in C too) but can no longer get bodies."""
        super().close()

    def __enter__(self) -> "World":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---- shapes ------------------------------------------------------

    def create_shape(self, mesh: Mesh) -> Shape:
        """A dynamic concave shape from a closed mesh (re-expressed in its principal frame)."""
        out = ffi.new("rtcd_shape**")
        _check(lib.rtcd_shape_create(self.handle, mesh.handle, out))
        return Shape(out[0], self)

    def create_compound(self, meshes: Sequence[Mesh]) -> Shape:
        """One dynamic body shape of several closed pieces (1..4096 meshes)."""
        handles = ffi.new("rtcd_mesh*[]", [m.handle for m in meshes]) if meshes else ffi.NULL
        out = ffi.new("rtcd_shape**")
        _check(lib.rtcd_shape_create_compound(self.handle, handles, len(meshes), out))
        return Shape(out[0], self)

    def create_convex(
        self,
        kind: Union[str, int],
        *,
        half_extents: Optional[ArrayLike] = None,
        radius: Optional[float] = None,
        half_height: Optional[float] = None,
        points: Optional[ArrayLike] = None,
        margin: Optional[float] = None,
    ) -> Shape:
        """A dynamic convex shape: kind "box" (half_extents), "sphere" (radius), "capsule",
        "cylinder", "cone" (radius, half_height) or "hull" (points (N, 3)); margin: Bullet's
        collision margin (default Bullet's 0.04 m)."""
        d = ffi.new("rtcd_convex_def*", lib.rtcd_default_convex_def())
        d.kind = _choice(CONVEX_KINDS, kind, "convex kind")
        if half_extents is not None:
            d.half_extents = as_array(half_extents, np.float32, (3,), "half_extents").tolist()
        if radius is not None:
            d.radius = radius
        if half_height is not None:
            d.half_height = half_height
        if margin is not None:
            d.margin = margin
        pts = None
        if points is not None:
            pts = as_array(points, np.float32, (None, 3), "points")
            d.points = float_ptr(pts) if len(pts) else ffi.NULL
            d.point_count = len(pts)
        out = ffi.new("rtcd_shape**")
        _check(lib.rtcd_shape_create_convex(self.handle, d, out))
        del pts  # read during the call only
        return Shape(out[0], self)

    # ---- static geometry and bodies ---------------------------------

    def add_plane(self, normal: ArrayLike = (0.0, 0.0, 1.0), offset: float = 0.0) -> None:
        """The static plane of points p with dot(normal, p) = offset."""
        n = as_array(normal, np.float32, (3,), "normal")
        _check(lib.rtcd_world_add_plane(self.handle, float_ptr(n), offset))

    def add_static_mesh(self, mesh: Mesh, pose: Pose = None) -> None:
        """A static triangle mesh (closed, or an open one-sided surface) at ``pose``."""
        _check(lib.rtcd_world_add_static_mesh(self.handle, mesh.handle, transform(pose)))

    def add_body(self, shape: Shape, mass: float = 1.0, pose: Pose = None) -> int:
        """A rigid body of ``shape`` at ``pose`` (see :func:`transform`); returns its index."""
        index = ffi.new("uint32_t*")
        _check(lib.rtcd_world_add_body(self.handle, shape.handle, mass, transform(pose), index))
        return int(index[0])

    @property
    def body_count(self) -> int:
        return int(lib.rtcd_world_body_count(self.handle))

    def __len__(self) -> int:
        return self.body_count

    def set_velocity(self, body: int, linear: Optional[ArrayLike] = None,
                     angular: Optional[ArrayLike] = None) -> None:
        """Sets a body's linear (m/s) and/or angular (rad/s) velocity; None keeps it."""
        lin = None if linear is None else as_array(linear, np.float32, (3,), "linear")
        ang = None if angular is None else as_array(angular, np.float32, (3,), "angular")
        _check(lib.rtcd_world_set_velocity(self.handle, body, ffi.NULL if lin is None else float_ptr(lin),
                                          ffi.NULL if ang is None else float_ptr(ang)))

    # ---- stepping and state -----------------------------------------

    def step(self, steps: int = 1) -> None:
        """Advances ``steps`` fixed time steps."""
        w = self.handle
        for _ in range(steps):
            _check(lib.rtcd_world_step(w))

    def _range(self, first: int, count: Optional[int]) -> int:
        n = self.body_count
        if count is None:
            count = max(n - first, 0)
        if first < 0 or count < 0:
            raise invalid(f"bodies {first}.. (count {count}): negative")
        return count

    def poses(self, first: int = 0, count: Optional[int] = None) -> np.ndarray:
        """(count, 7) float32: position x y z, unit quaternion x y z w (w >= 0) per body
        (``rtcd_world_get_poses``); all bodies from ``first`` by default."""
        count = self._range(first, count)
        out = np.empty((count, 7), dtype=np.float32)
        _check(lib.rtcd_world_get_poses(self.handle, first, count, out_float_ptr(out)))
        return out

    def transforms(self, first: int = 0, count: Optional[int] = None) -> np.ndarray:
        """(count, 12) float32 in ``rtcd_transform``'s order: rotation (3x3 row-major), translation.
        Exactly ``rtcd_world_get_pose``'s floats (``rtcd_world_get_transforms``)."""
        count = self._range(first, count)
        out = np.empty((count, 12), dtype=np.float32)
        _check(lib.rtcd_world_get_transforms(self.handle, first, count,
                                            ffi.cast("rtcd_transform*", out_float_ptr(out))))
        return out

    def matrices(self, first: int = 0, count: Optional[int] = None) -> np.ndarray:
        """(count, 4, 4) float32 homogeneous body-to-world matrices."""
        t = self.transforms(first, count)
        m = np.zeros((len(t), 4, 4), dtype=np.float32)
        m[:, :3, :3] = t[:, :9].reshape(-1, 3, 3)
        m[:, :3, 3] = t[:, 9:]
        m[:, 3, 3] = 1
        return m

    def velocities(self, first: int = 0, count: Optional[int] = None) -> np.ndarray:
        """(count, 6) float32: linear x y z (m/s), angular x y z (rad/s) per body
        (``rtcd_world_get_velocities``)."""
        count = self._range(first, count)
        out = np.empty((count, 6), dtype=np.float32)
        _check(lib.rtcd_world_get_velocities(self.handle, first, count, out_float_ptr(out)))
        return out

    def pose(self, body: int) -> np.ndarray:
        """(7,) one body's position and quaternion (as :meth:`poses`)."""
        return self.poses(body, 1)[0]

    def last_step_stats(self) -> Dict[str, Any]:
        """The last step's ``rtcd_step_stats`` as a dict (field name: value);
        ``batch``, the batch's profile (``rtcd_batch_stats``), as a dict too."""
        st = lib.rtcd_world_last_step_stats(self.handle)
        out: Dict[str, Any] = {name: getattr(st, name) for name, _ in ffi.typeof("rtcd_step_stats").fields}
        out["batch"] = {name: getattr(st.batch, name) for name, _ in ffi.typeof("rtcd_batch_stats").fields}
        return out

    def measure_penetration(self) -> Dict[str, Union[int, float]]:
        """Penetration measured independently of the collision algorithm
        (``rtcd_world_measure_penetration``): max (m), sum (m), vertices_inside."""
        p = ffi.new("rtcd_penetration*")
        _check(lib.rtcd_world_measure_penetration(self.handle, p))
        return {"max": float(p.max), "sum": float(p.sum), "vertices_inside": int(p.vertices_inside)}

    # ---- where it runs ----------------------------------------------

    @property
    def backend(self) -> str:
        """"cpu" or "opencl", as resolved."""
        return to_str(lib.rtcd_backend_name(lib.rtcd_world_backend(self.handle)))

    @property
    def thread_count(self) -> int:
        """CPU reference threads (0 on OpenCL)."""
        return int(lib.rtcd_world_thread_count(self.handle))

    @property
    def device_names(self) -> List[str]:
        """The OpenCL devices' names (empty on the CPU reference)."""
        w = self.handle
        return [to_str(lib.rtcd_world_device_name(w, i)) for i in range(lib.rtcd_world_device_count(w))]

    def __repr__(self) -> str:
        if self._ptr is None:
            return "<rtcd.World closed>"
        return f"<rtcd.World {self.body_count} bodies, backend {self.backend}>"
