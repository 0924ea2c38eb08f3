"""rtcd meshes from numpy arrays, trimesh, model files and rtcd's generators."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple, Union

import numpy as np

from ._native import ArrayLike, Handle, as_array, c_string, ffi, float_ptr, lib, to_str, uint_ptr
from .errors import Error, check, invalid

if TYPE_CHECKING:  # trimesh is optional
    import trimesh

__all__ = [
    "Mesh",
    "ImportResult",
    "import_file",
    "have_import",
    "generate_blob",
    "generate_uv_sphere",
    "generate_torus",
    "generate_box",
    "AVALANCHE_BLOB_VERTICES",
]

AVALANCHE_BLOB_VERTICES: int = int(lib.RTCD_AVALANCHE_BLOB_VERTICES)  # 453 vertices, 902 triangles


def _released(ptr: Any) -> Any:
    """A handle that rtcd_mesh_release frees once Python drops it."""
    return ffi.gc(ptr, lib.rtcd_mesh_release)


class Mesh(Handle):
    """A closed (or, with ``open_surface``, one-sided) triangle mesh: ``rtcd_mesh``.

    rtcd copies the arrays and checks the mesh (closed, 2-manifold,
    consistently oriented, outward, finite, in range); a violation raises
    :class:`rtcd.Error` naming it (``RTCD_ERROR_MESH_OPEN_EDGE``, ...).
    The mesh is reference counted on the C side: shapes and worlds that use
    it keep it alive after this object is gone.
    """

    __slots__ = ()
    _kind = "mesh"

    def __init__(
        self,
        vertices: ArrayLike,
        triangles: ArrayLike,
        *,
        name: Optional[str] = None,
        flip_inside_out: bool = False,
        open_surface: bool = False,
        deformable: bool = False,
        bvh_leaf_size: int = 0,
    ) -> None:
        """Creates a mesh from an (N, 3) float array and an (M, 3) integer array.

        Args:
            vertices: xyz per vertex (converted to float32).
            triangles: vertex indices, counter-clockwise seen from outside.
            name: used in rtcd's messages.
            flip_inside_out: a closed mesh of negative volume is flipped instead of refused.
            open_surface: a one-sided open surface (static partners only).
            deformable: the mesh will deform (cheaper vertex updates).
            bvh_leaf_size: triangles per BVH leaf, 1..15 (0: rtcd's default).
        """
        v = as_array(vertices, np.float32, (None, 3), "vertices")
        t = np.asarray(triangles)
        if t.dtype.kind not in "iu":
            raise ValueError(f"triangles: expected an integer array, got {t.dtype}")
        if t.size and (t.min() < 0 or t.max() > np.iinfo(np.uint32).max):
            raise invalid(f"mesh '{name or ''}': triangle index {int(t.min() if t.min() < 0 else t.max())} "
                          "is not a vertex index")
        t = as_array(t, np.uint32, (None, 3), "triangles")
        if len(v) > np.iinfo(np.uint32).max or len(t) > np.iinfo(np.uint32).max:
            raise invalid("mesh: more than 2^32 - 1 vertices or triangles")
        d = ffi.new("rtcd_mesh_def*", lib.rtcd_default_mesh_def())
        d.vertices = float_ptr(v) if len(v) else ffi.NULL
        d.vertex_count = len(v)
        d.indices = uint_ptr(t) if len(t) else ffi.NULL
        d.triangle_count = len(t)
        d.flags = ((lib.RTCD_MESH_FLIP_INSIDE_OUT if flip_inside_out else 0)
                   | (lib.RTCD_MESH_OPEN_SURFACE if open_surface else 0)
                   | (lib.RTCD_MESH_DEFORMABLE if deformable else 0))
        d.bvh_leaf_size = bvh_leaf_size
        c_name = c_string(name)
        d.name = c_name
        out = ffi.new("rtcd_mesh**")
        check(lib.rtcd_mesh_create(d, out))
        self._ptr = _released(out[0])

    @classmethod
    def _adopt(cls, ptr: Any, retain: bool) -> "Mesh":
        """Wraps a C handle; ``retain`` when the reference is borrowed (owned by someone else)."""
        if ptr == ffi.NULL:
            raise invalid("NULL mesh")
        ptr = ffi.cast("rtcd_mesh*", ptr)
        if retain:
            lib.rtcd_mesh_retain(ptr)
        m = cls.__new__(cls)
        m._ptr = _released(ptr)
        return m

    # ---- other sources -------------------------------------------------

    @classmethod
    def from_trimesh(cls, mesh: "trimesh.Trimesh", **kwargs: Any) -> "Mesh":
        """A mesh from a ``trimesh.Trimesh`` (its vertices and faces, as stored); kwargs as for ``Mesh``."""
        kwargs.setdefault("name", getattr(mesh, "metadata", {}).get("name") or None)
        return cls(np.asarray(mesh.vertices), np.asarray(mesh.faces), **kwargs)

    def to_trimesh(self) -> "trimesh.Trimesh":
        """The same vertices and triangles as a ``trimesh.Trimesh`` (``process=False``: nothing merged or reordered)."""
        import trimesh  # optional dependency

        return trimesh.Trimesh(vertices=self.vertices.astype(np.float64), faces=self.triangles.astype(np.int64),
                               process=False)

    @classmethod
    def from_file(cls, path: Union[str, "os.PathLike[str]"], **kwargs: Any) -> "Mesh":
        """The one mesh of a model file (rtcd_import; kwargs as :func:`import_file`).

        Raises :class:`rtcd.Error` when the file is declined or holds several
        closed pieces (use :func:`import_file` for those).
        """
        result = import_file(path, **kwargs)
        if len(result.meshes) != 1:
            raise invalid(f"{os.fspath(path)}: {len(result.meshes)} closed pieces; use rtcd.import_file")
        return result.meshes[0]

    @classmethod
    def blob(cls, vertex_count: int = AVALANCHE_BLOB_VERTICES, radius: float = 0.5, seed: int = 1,
             name: Optional[str] = "blob") -> "Mesh":
        """The benchmark scenes' concave blob (``rtcd_generate_blob``): what the C demos collide."""
        return cls(*generate_blob(vertex_count, radius, seed), name=name)

    @classmethod
    def uv_sphere(cls, rings: int, segments: int, radius: float, name: Optional[str] = "sphere") -> "Mesh":
        """A UV sphere (``rtcd_generate_uv_sphere``)."""
        return cls(*generate_uv_sphere(rings, segments, radius), name=name)

    @classmethod
    def torus(cls, major_radius: float, minor_radius: float, major_segments: int, minor_segments: int,
              name: Optional[str] = "torus") -> "Mesh":
        """A torus around z (``rtcd_generate_torus``)."""
        return cls(*generate_torus(major_radius, minor_radius, major_segments, minor_segments), name=name)

    @classmethod
    def box(cls, half_extents: ArrayLike, subdivisions: int = 1, name: Optional[str] = "box") -> "Mesh":
        """An axis-aligned box mesh centred at the origin (``rtcd_generate_box``)."""
        return cls(*generate_box(half_extents, subdivisions), name=name)

    # ---- accessors ---------------------------------------------------

    @property
    def vertex_count(self) -> int:
        return int(lib.rtcd_mesh_vertex_count(self.handle))

    @property
    def triangle_count(self) -> int:
        return int(lib.rtcd_mesh_triangle_count(self.handle))

    def __len__(self) -> int:
        return self.triangle_count

    @property
    def name(self) -> str:
        return to_str(lib.rtcd_mesh_name(self.handle))

    def _copy(self, ptr: Any, ctype: str, rows: int, dtype: Any) -> np.ndarray:
        out = np.empty((rows, 3), dtype=dtype)
        if rows:
            ffi.memmove(ffi.from_buffer(out, require_writable=True), ffi.cast(ctype, ptr), out.nbytes)
        return out

    @property
    def vertices(self) -> np.ndarray:
        """(N, 3) float32 copy of the vertices (the current ones for a deformed mesh)."""
        return self._copy(lib.rtcd_mesh_vertices(self.handle), "float*", self.vertex_count, np.float32)

    @property
    def triangles(self) -> np.ndarray:
        """(M, 3) uint32 copy of the triangles."""
        return self._copy(lib.rtcd_mesh_indices(self.handle), "uint32_t*", self.triangle_count, np.uint32)

    @property
    def vertex_normals(self) -> np.ndarray:
        """(N, 3) float32 unit angle-weighted vertex normals."""
        return self._copy(lib.rtcd_mesh_vertex_normals(self.handle), "float*", self.vertex_count, np.float32)

    @property
    def triangle_normals(self) -> np.ndarray:
        """(M, 3) float32 unit outward triangle normals."""
        return self._copy(lib.rtcd_mesh_triangle_normals(self.handle), "float*", self.triangle_count, np.float32)

    @property
    def bounds(self) -> Tuple[np.ndarray, np.ndarray]:
        """The box: (lo, hi), each (3,) float32."""
        lo, hi = ffi.new("float[3]"), ffi.new("float[3]")
        lib.rtcd_mesh_bounds(self.handle, lo, hi)
        return np.array(list(lo), dtype=np.float32), np.array(list(hi), dtype=np.float32)

    @property
    def is_open_surface(self) -> bool:
        return bool(lib.rtcd_mesh_is_open_surface(self.handle))

    @property
    def mean_edge_length(self) -> float:
        return float(lib.rtcd_mesh_mean_edge_length(self.handle))

    @property
    def version(self) -> int:
        """0 at creation, one more per vertex update."""
        return int(lib.rtcd_mesh_version(self.handle))

    def mass_properties(self) -> Dict[str, Any]:
        """Unit-density mass properties: volume, center_of_mass (3,), inertia (3, 3) about it."""
        mp = lib.rtcd_mesh_mass_properties(self.handle)
        return {"volume": float(mp.volume), "center_of_mass": np.array(list(mp.center_of_mass)),
                "inertia": np.array(list(mp.inertia)).reshape(3, 3)}

    def contains(self, point: ArrayLike) -> bool:
        """Exact inside test of a point in the mesh's frame."""
        p = as_array(point, np.float32, (3,), "point")
        return bool(lib.rtcd_mesh_contains_point(self.handle, float_ptr(p)))

    def update_vertices(self, vertices: ArrayLike) -> None:
        """New positions for every vertex, same triangles (checked as at creation; on failure nothing changes)."""
        v = as_array(vertices, np.float32, (self.vertex_count, 3), "vertices")
        check(lib.rtcd_mesh_update_vertices(self.handle, float_ptr(v), 0))

    def __repr__(self) -> str:
        if self._ptr is None:
            return "<rtcd.Mesh closed>"
        return f"<rtcd.Mesh '{self.name}' {self.vertex_count} vertices, {self.triangle_count} triangles>"


# ---- generated meshes ----------------------------------------------------


def _take_generated(fill: Any) -> Tuple[np.ndarray, np.ndarray]:
    """Runs a generator into an rtcd_generated_mesh and returns copies of its arrays (freed here)."""
    g = ffi.new("rtcd_generated_mesh*")
    check(fill(g))
    try:
        v = np.frombuffer(ffi.buffer(g.vertices, 12 * g.vertex_count), dtype=np.float32).reshape(-1, 3).copy()
        t = np.frombuffer(ffi.buffer(g.indices, 12 * g.triangle_count), dtype=np.uint32).reshape(-1, 3).copy()
    finally:
        lib.rtcd_generated_free(g)
    return v, t


def generate_blob(vertex_count: int = AVALANCHE_BLOB_VERTICES, radius: float = 0.5,
                  seed: int = 1) -> Tuple[np.ndarray, np.ndarray]:
    """A closed concave blob (``rtcd_generate_blob``): (vertices (N, 3) float32, triangles (M, 3) uint32)."""
    return _take_generated(lambda g: lib.rtcd_generate_blob(vertex_count, radius, seed, g))


def generate_uv_sphere(rings: int, segments: int, radius: float) -> Tuple[np.ndarray, np.ndarray]:
    """A UV sphere's arrays (``rtcd_generate_uv_sphere``)."""
    return _take_generated(lambda g: lib.rtcd_generate_uv_sphere(rings, segments, radius, g))


def generate_torus(major_radius: float, minor_radius: float, major_segments: int,
                   minor_segments: int) -> Tuple[np.ndarray, np.ndarray]:
    """A torus' arrays (``rtcd_generate_torus``)."""
    return _take_generated(lambda g: lib.rtcd_generate_torus(major_radius, minor_radius, major_segments,
                                                             minor_segments, g))


def generate_box(half_extents: ArrayLike, subdivisions: int = 1) -> Tuple[np.ndarray, np.ndarray]:
    """A subdivided box's arrays (``rtcd_generate_box``)."""
    h = as_array(half_extents, np.float32, (3,), "half_extents")
    return _take_generated(lambda g: lib.rtcd_generate_box(float_ptr(h), subdivisions, g))


# ---- model files ---------------------------------------------------------


def have_import() -> bool:
    """Was the import library (librtcd_import, assimp) built and linked?"""
    return bool(lib.RTCD_PY_HAVE_IMPORT)


@dataclass
class ImportResult:
    """A model file taken by rtcd_import.

    Attributes:
        status: "accepted" (as stored, one mesh) or "repaired" (one mesh per closed component).
        meshes: the meshes.
        repair_summary: what the repair did ("" when none ran).
    """

    status: str
    meshes: List[Mesh] = field(default_factory=list)
    repair_summary: str = ""


def import_file(path: Union[str, "os.PathLike[str]"], *, scale: float = 1.0, repair: bool = True,
                flip_inside_out: bool = False) -> ImportResult:
    """Reads a model file (every format assimp reads) through rtcd_import.

    Raises :class:`rtcd.Error` with the decline's code and message (e.g.
    ``RTCD_ERROR_MESH_OPEN_EDGE`` for a file that stays open), and
    ``RTCD_ERROR_UNSUPPORTED`` when rtcd was built without the import library.
    """
    d = ffi.new("rtcd_import_def*", lib.rtcd_default_import_def())
    d.scale = scale
    d.flags = 0 if repair else lib.RTCD_IMPORT_NO_REPAIR
    d.mesh_flags = lib.RTCD_MESH_FLIP_INSIDE_OUT if flip_inside_out else 0
    out = ffi.new("rtcd_imported**")
    err = lib.rtcd_import_file(d, c_string(os.fspath(path)), out)
    if out[0] == ffi.NULL:
        check(err)
        raise invalid(f"{os.fspath(path)}: nothing imported")
    imported = ffi.gc(out[0], lib.rtcd_imported_release)
    if lib.rtcd_imported_status(imported) == lib.RTCD_IMPORT_DECLINED:
        raise Error(lib.rtcd_imported_error(imported), to_str(lib.rtcd_imported_error_message(imported)))
    meshes = [Mesh._adopt(lib.rtcd_imported_mesh(imported, i), retain=True)
              for i in range(lib.rtcd_imported_mesh_count(imported))]
    return ImportResult(status=to_str(lib.rtcd_import_status_name(lib.rtcd_imported_status(imported))),
                        meshes=meshes, repair_summary=to_str(lib.rtcd_imported_repair_summary(imported)))
