"""rtcd: ray-traced collision detection of concave meshes over Bullet Physics, from Python.

A thin layer over rtcd's C API (cffi, API mode): numpy arrays in and out.

>>> import rtcd
>>> world = rtcd.World(backend="cpu")
>>> world.add_plane((0, 0, 1), 0.0)
>>> shape = world.create_shape(rtcd.Mesh.blob(seed=1))
>>> body = world.add_body(shape, mass=1.0, pose=(0, 0, 1, 0, 0, 0, 1))
>>> world.step(60)
>>> world.poses().shape
(1, 7)

Failures raise :class:`rtcd.Error`, whose ``name`` is the ``RTCD_ERROR_*``
constant and ``message`` rtcd's message.
"""

from ._native import ffi, lib
from .errors import Error, error_names
from .mesh import (
    AVALANCHE_BLOB_VERTICES,
    ImportResult,
    Mesh,
    generate_blob,
    generate_box,
    generate_torus,
    generate_uv_sphere,
    have_import,
    import_file,
)
from .world import (
    ALGORITHMS,
    BACKENDS,
    CONTACT_NORMALS,
    CONVEX_KINDS,
    NARROWPHASES,
    TRAVERSALS,
    Shape,
    World,
    pose_checksum,
    transform,
)

__version__ = f"{lib.RTCD_VERSION_MAJOR}.{lib.RTCD_VERSION_MINOR}.{lib.RTCD_VERSION_PATCH}"

__all__ = [
    "Error",
    "error_names",
    "Mesh",
    "ImportResult",
    "import_file",
    "have_import",
    "generate_blob",
    "generate_uv_sphere",
    "generate_torus",
    "generate_box",
    "AVALANCHE_BLOB_VERTICES",
    "World",
    "Shape",
    "transform",
    "pose_checksum",
    "NARROWPHASES",
    "BACKENDS",
    "ALGORITHMS",
    "TRAVERSALS",
    "CONTACT_NORMALS",
    "CONVEX_KINDS",
    "ffi",
    "lib",
]
