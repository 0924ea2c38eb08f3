"""The cffi description of rtcd's C API, compiled in API (out-of-line) mode.

Only what the Python package calls is declared. Every struct ends with
``...;`` (a partial struct): the C compiler, reading the real headers through
``set_source``, decides sizes and offsets, so no layout is copied by hand and
a declaration that drifts from the headers fails the build instead of
reading the wrong bytes. Enum values and macros come from the compiler too.
"""

from __future__ import annotations

from typing import List, Sequence

from cffi import FFI

CDEF_CORE = r"""
typedef enum rtcd_error {
    RTCD_OK, RTCD_ERROR_INVALID_ARGUMENT, RTCD_ERROR_OUT_OF_MEMORY, RTCD_ERROR_BUFFER_TOO_SMALL,
    RTCD_ERROR_UNSUPPORTED, RTCD_ERROR_MESH_INDEX_OUT_OF_RANGE, RTCD_ERROR_MESH_NONFINITE_VERTEX,
    RTCD_ERROR_MESH_DEGENERATE_TRIANGLE, RTCD_ERROR_MESH_OPEN_EDGE, RTCD_ERROR_MESH_NONMANIFOLD_EDGE,
    RTCD_ERROR_MESH_INCONSISTENT_ORIENTATION, RTCD_ERROR_MESH_INSIDE_OUT, RTCD_ERROR_MESH_TOO_LARGE,
    RTCD_ERROR_MESH_OUT_OF_RANGE, RTCD_ERROR_NO_DEVICE, RTCD_ERROR_KERNEL_BUILD, RTCD_ERROR_DEVICE,
    RTCD_ERROR_INTERNAL, ...
} rtcd_error;

#define RTCD_VERSION_MAJOR ...
#define RTCD_VERSION_MINOR ...
#define RTCD_VERSION_PATCH ...

const char* rtcd_error_name(rtcd_error code);
const char* rtcd_last_error_message(void);

typedef struct rtcd_transform {
    float rotation[9];
    float translation[3];
    ...;
} rtcd_transform;
rtcd_transform rtcd_transform_identity(void);
rtcd_transform rtcd_transform_from_quat(const float quat_xyzw[4], const float translation[3]);

/* ---- meshes ---- */
typedef struct rtcd_mesh rtcd_mesh;
enum rtcd_mesh_flags { RTCD_MESH_FLIP_INSIDE_OUT, RTCD_MESH_OPEN_SURFACE, RTCD_MESH_DEFORMABLE, ... };
typedef struct rtcd_mesh_def {
    const float* vertices;
    uint32_t vertex_count;
    size_t vertex_stride;
    const uint32_t* indices;
    uint32_t triangle_count;
    uint32_t flags;
    uint32_t bvh_leaf_size;
    const char* name;
    ...;
} rtcd_mesh_def;
rtcd_mesh_def rtcd_default_mesh_def(void);
rtcd_error rtcd_mesh_create(const rtcd_mesh_def* def, rtcd_mesh** out);
void rtcd_mesh_retain(rtcd_mesh* mesh);
void rtcd_mesh_release(rtcd_mesh* mesh);
uint32_t rtcd_mesh_vertex_count(const rtcd_mesh* mesh);
uint32_t rtcd_mesh_triangle_count(const rtcd_mesh* mesh);
const char* rtcd_mesh_name(const rtcd_mesh* mesh);
const float* rtcd_mesh_vertices(const rtcd_mesh* mesh);
const uint32_t* rtcd_mesh_indices(const rtcd_mesh* mesh);
const float* rtcd_mesh_triangle_normals(const rtcd_mesh* mesh);
const float* rtcd_mesh_vertex_normals(const rtcd_mesh* mesh);
void rtcd_mesh_bounds(const rtcd_mesh* mesh, float lo[3], float hi[3]);
int rtcd_mesh_is_open_surface(const rtcd_mesh* mesh);
float rtcd_mesh_mean_edge_length(const rtcd_mesh* mesh);
typedef struct rtcd_mass_properties {
    double volume;
    double center_of_mass[3];
    double inertia[9];
    ...;
} rtcd_mass_properties;
rtcd_mass_properties rtcd_mesh_mass_properties(const rtcd_mesh* mesh);
rtcd_error rtcd_mesh_update_vertices(rtcd_mesh* mesh, const float* vertices, size_t stride);
uint64_t rtcd_mesh_version(const rtcd_mesh* mesh);
int rtcd_mesh_contains_point(const rtcd_mesh* mesh, const float point[3]);
float rtcd_mesh_closest_point(const rtcd_mesh* mesh, const float point[3], float closest[3], uint32_t* triangle);

/* ---- generated meshes ---- */
typedef struct rtcd_generated_mesh {
    float* vertices;
    uint32_t* indices;
    uint32_t vertex_count;
    uint32_t triangle_count;
    ...;
} rtcd_generated_mesh;
void rtcd_generated_free(rtcd_generated_mesh* mesh);
rtcd_error rtcd_generate_blob(uint32_t vertex_count, float radius, uint64_t seed, rtcd_generated_mesh* out);
rtcd_error rtcd_generate_uv_sphere(uint32_t rings, uint32_t segments, float radius, rtcd_generated_mesh* out);
rtcd_error rtcd_generate_torus(float major_radius, float minor_radius, uint32_t major_segments,
                               uint32_t minor_segments, rtcd_generated_mesh* out);
rtcd_error rtcd_generate_box(const float half_extents[3], uint32_t subdivisions, rtcd_generated_mesh* out);
#define RTCD_AVALANCHE_BLOB_VERTICES ...
#define RTCD_SPAWNER_MESH_COUNT ...
uint32_t rtcd_spawner_mesh_vertices(uint32_t which);

/* ---- the narrow phase's def ---- */
typedef enum rtcd_traversal { RTCD_TRAVERSAL_BVH, RTCD_TRAVERSAL_BRUTE_FORCE, RTCD_TRAVERSAL_BVH_STACKLESS, ... }
    rtcd_traversal;
typedef enum rtcd_contact_normal { RTCD_CONTACT_REPROJECTED, RTCD_CONTACT_RAY, RTCD_CONTACT_RAY_WEIGHTED, ... }
    rtcd_contact_normal;
typedef enum rtcd_algorithm { RTCD_ALGORITHM_STANDARD, RTCD_ALGORITHM_ITERATIVE, RTCD_ALGORITHM_PREDICTIVE, ... }
    rtcd_algorithm;
typedef enum rtcd_backend { RTCD_BACKEND_AUTO, RTCD_BACKEND_CPU, RTCD_BACKEND_OPENCL, ... } rtcd_backend;
typedef struct rtcd_iterative_params {
    float displacement_threshold;
    float distance_extension;
    float culling_distance;
    uint32_t max_iterations;
    ...;
} rtcd_iterative_params;
typedef struct rtcd_iterative_def {
    rtcd_algorithm algorithm;
    int adaptive;
    rtcd_iterative_params fixed;
    float confidence;
    ...;
} rtcd_iterative_def;
typedef struct rtcd_narrowphase_def {
    rtcd_traversal traversal;
    rtcd_contact_normal contact_normal;
    int cull_separated;
    rtcd_iterative_def iterative;
    int speculative;
    float speculative_margin;
    int edge_crossings;
    int deep_contacts;
    rtcd_backend backend;
    const char* devices;
    uint32_t max_devices;
    uint32_t threads;
    ...;
} rtcd_narrowphase_def;
rtcd_narrowphase_def rtcd_default_narrowphase_def(void);
const char* rtcd_algorithm_name(rtcd_algorithm algorithm);
const char* rtcd_backend_name(rtcd_backend backend);

/* ---- the world (rtcd_world.h) ---- */
typedef struct rtcd_world rtcd_world;
typedef struct rtcd_shape rtcd_shape;
typedef enum rtcd_narrowphase_kind { RTCD_NARROWPHASE_RTCD, RTCD_NARROWPHASE_GIMPACT, RTCD_NARROWPHASE_HULL, ... }
    rtcd_narrowphase_kind;
typedef struct rtcd_world_def {
    float gravity[3];
    float time_step;
    int solver_iterations;
    rtcd_narrowphase_kind narrowphase_kind;
    rtcd_narrowphase_def narrowphase;
    float linear_damping, angular_damping;
    float friction, restitution;
    float rolling_friction;
    int check;
    ...;
} rtcd_world_def;
rtcd_world_def rtcd_default_world_def(void);
rtcd_error rtcd_world_create(const rtcd_world_def* def, rtcd_world** out);
void rtcd_world_retain(rtcd_world* world);
void rtcd_world_release(rtcd_world* world);

rtcd_error rtcd_shape_create(rtcd_world* world, rtcd_mesh* mesh, rtcd_shape** out);
void rtcd_shape_retain(rtcd_shape* shape);
void rtcd_shape_release(rtcd_shape* shape);
void rtcd_shape_center_of_mass(const rtcd_shape* shape, float com[3]);
rtcd_transform rtcd_shape_frame(const rtcd_shape* shape);
const rtcd_mesh* rtcd_shape_body_mesh(const rtcd_shape* shape);
rtcd_error rtcd_shape_set_vertices(rtcd_shape* shape, const float* vertices, size_t stride);
rtcd_error rtcd_shape_create_compound(rtcd_world* world, rtcd_mesh* const* meshes, uint32_t count, rtcd_shape** out);

typedef enum rtcd_convex_kind {
    RTCD_CONVEX_BOX, RTCD_CONVEX_SPHERE, RTCD_CONVEX_CAPSULE, RTCD_CONVEX_CYLINDER, RTCD_CONVEX_CONE,
    RTCD_CONVEX_HULL, ...
} rtcd_convex_kind;
typedef struct rtcd_convex_def {
    rtcd_convex_kind kind;
    float half_extents[3];
    float radius, half_height;
    const float* points;
    uint32_t point_count;
    float margin;
    ...;
} rtcd_convex_def;
rtcd_convex_def rtcd_default_convex_def(void);
rtcd_error rtcd_shape_create_convex(rtcd_world* world, const rtcd_convex_def* def, rtcd_shape** out);

rtcd_error rtcd_world_add_static_mesh(rtcd_world* world, rtcd_mesh* mesh, const rtcd_transform* pose);
rtcd_error rtcd_world_add_plane(rtcd_world* world, const float normal[3], float offset);
rtcd_error rtcd_world_add_body(rtcd_world* world, rtcd_shape* shape, float mass, const rtcd_transform* pose,
                               uint32_t* body_index);
uint32_t rtcd_world_body_count(const rtcd_world* world);
rtcd_error rtcd_world_set_velocity(rtcd_world* world, uint32_t body, const float linear[3], const float angular[3]);
rtcd_error rtcd_world_step(rtcd_world* world);
rtcd_error rtcd_world_get_pose(const rtcd_world* world, uint32_t body, rtcd_transform* pose);
rtcd_error rtcd_world_get_velocity(const rtcd_world* world, uint32_t body, float linear[3], float angular[3]);
rtcd_error rtcd_world_get_transforms(const rtcd_world* world, uint32_t first, uint32_t count, rtcd_transform* out);
rtcd_error rtcd_world_get_poses(const rtcd_world* world, uint32_t first, uint32_t count, float* out);
rtcd_error rtcd_world_get_velocities(const rtcd_world* world, uint32_t first, uint32_t count, float* out);

typedef struct rtcd_batch_stats {
    double ms;
    double standard_ms, iterative_ms;
    uint32_t cpu_fallback_pairs;
    uint32_t state_resets;
    uint32_t segments;
    double plan_ms, run_ms, finish_ms;
    double upload_ms, device_ms, download_ms;
    double fallback_ms, reduce_ms;
    uint64_t upload_bytes, download_bytes;
    ...;
} rtcd_batch_stats;

typedef struct rtcd_step_stats {
    uint32_t broadphase_pairs;
    uint32_t pairs_owned;
    uint32_t pairs_culled;
    uint64_t rays_cast;
    uint64_t colliding_rays;
    uint32_t contacts;
    double narrowphase_ms;
    double batch_ms;
    double step_ms;
    uint32_t standard_pairs;
    uint32_t iterative_pairs;
    uint64_t predictive_rays;
    uint64_t walk_steps;
    uint64_t kept_rays;
    double standard_ms, iterative_ms;
    double ray_length;
    uint64_t check_rays;
    uint64_t check_incorrect;
    double check_ray_length;
    uint32_t out_of_memory;
    uint32_t faults;
    rtcd_batch_stats batch;
    double gather_ms, plane_ms, writeback_ms, dispatch_ms;
    uint32_t manifolds, manifolds_created, manifolds_released, manifolds_total;
    double solver_ms;
    ...;
} rtcd_step_stats;
rtcd_step_stats rtcd_world_last_step_stats(const rtcd_world* world);
rtcd_backend rtcd_world_backend(const rtcd_world* world);
uint32_t rtcd_world_device_count(const rtcd_world* world);
uint32_t rtcd_world_thread_count(const rtcd_world* world);
const char* rtcd_world_device_name(const rtcd_world* world, uint32_t device);

typedef struct rtcd_penetration {
    float max;
    double sum;
    uint32_t vertices_inside;
    ...;
} rtcd_penetration;
rtcd_error rtcd_world_measure_penetration(const rtcd_world* world, rtcd_penetration* out);

/* 1 when the import library (rtcd_import.h) was found and linked */
#define RTCD_PY_HAVE_IMPORT ...
"""

# rtcd_import.h: only where librtcd_import exists (assimp was found).
CDEF_IMPORT = r"""
typedef struct rtcd_import_def {
    float scale;
    uint32_t flags;
    uint32_t mesh_flags;
    uint32_t bvh_leaf_size;
    uint64_t max_file_bytes;
    ...;
} rtcd_import_def;
typedef enum rtcd_import_flags { RTCD_IMPORT_NO_REPAIR, ... } rtcd_import_flags;
typedef enum rtcd_import_status { RTCD_IMPORT_ACCEPTED, RTCD_IMPORT_REPAIRED, RTCD_IMPORT_DECLINED, ... }
    rtcd_import_status;
typedef struct rtcd_imported rtcd_imported;
rtcd_import_def rtcd_default_import_def(void);
rtcd_error rtcd_import_file(const rtcd_import_def* def, const char* path, rtcd_imported** out);
void rtcd_imported_release(rtcd_imported* imported);
rtcd_import_status rtcd_imported_status(const rtcd_imported* imported);
rtcd_error rtcd_imported_error(const rtcd_imported* imported);
const char* rtcd_imported_error_message(const rtcd_imported* imported);
uint32_t rtcd_imported_mesh_count(const rtcd_imported* imported);
rtcd_mesh* rtcd_imported_mesh(const rtcd_imported* imported, uint32_t index);
const char* rtcd_imported_repair_summary(const rtcd_imported* imported);
const char* rtcd_import_status_name(rtcd_import_status status);
"""

# Without the import library the module still declares the import calls
# (so the Python code has one shape); they fail with RTCD_ERROR_UNSUPPORTED.
SOURCE_NO_IMPORT_STUBS = r"""
typedef struct rtcd_import_def { float scale; uint32_t flags; uint32_t mesh_flags; uint32_t bvh_leaf_size;
                                 uint64_t max_file_bytes; } rtcd_import_def;
typedef enum rtcd_import_flags { RTCD_IMPORT_NO_REPAIR = 1 } rtcd_import_flags;
typedef enum rtcd_import_status { RTCD_IMPORT_ACCEPTED = 0, RTCD_IMPORT_REPAIRED = 1, RTCD_IMPORT_DECLINED = 2 }
    rtcd_import_status;
typedef struct rtcd_imported rtcd_imported;
static rtcd_import_def rtcd_default_import_def(void) { rtcd_import_def d = {1.0f, 0, 0, 0, 0}; return d; }
static rtcd_error rtcd_import_file(const rtcd_import_def* d, const char* p, rtcd_imported** out)
{
    (void)d; (void)p;
    if (out) *out = NULL;
    return rtcd_report_error(RTCD_ERROR_UNSUPPORTED, "rtcd_import_file: this rtcd was built without the import "
                                                     "library (assimp not found)");
}
static void rtcd_imported_release(rtcd_imported* i) { (void)i; }
static rtcd_import_status rtcd_imported_status(const rtcd_imported* i) { (void)i; return RTCD_IMPORT_DECLINED; }
static rtcd_error rtcd_imported_error(const rtcd_imported* i) { (void)i; return RTCD_ERROR_UNSUPPORTED; }
static const char* rtcd_imported_error_message(const rtcd_imported* i) { (void)i; return ""; }
static uint32_t rtcd_imported_mesh_count(const rtcd_imported* i) { (void)i; return 0; }
static rtcd_mesh* rtcd_imported_mesh(const rtcd_imported* i, uint32_t k) { (void)i; (void)k; return NULL; }
static const char* rtcd_imported_repair_summary(const rtcd_imported* i) { (void)i; return ""; }
static const char* rtcd_import_status_name(rtcd_import_status s)
{
    return s == RTCD_IMPORT_ACCEPTED ? "accepted" : (s == RTCD_IMPORT_REPAIRED ? "repaired" : "declined");
}
"""

MODULE = "rtcd._rtcd_cffi"


def library_names(with_import: bool) -> List[str]:
    """The libraries the extension links (librtcd_import only where it was built)."""
    return ["rtcd_bullet", "rtcd"] + (["rtcd_import"] if with_import else [])


def make_ffi(
    include_dirs: Sequence[str],
    library_dirs: Sequence[str],
    with_import: bool,
    extra_link_args: Sequence[str] = (),
) -> FFI:
    """The FFI builder for ``rtcd._rtcd_cffi`` against the given headers and libraries."""
    ffi = FFI()
    ffi.cdef(CDEF_CORE + CDEF_IMPORT)
    source = "#include <rtcd/rtcd.h>\n#include <rtcd/rtcd_world.h>\n"
    if with_import:
        source += "#include <rtcd/rtcd_import.h>\n#define RTCD_PY_HAVE_IMPORT 1\n"
    else:
        source += SOURCE_NO_IMPORT_STUBS + "#define RTCD_PY_HAVE_IMPORT 0\n"
    ffi.set_source(
        MODULE,
        source,
        include_dirs=list(include_dirs),
        library_dirs=list(library_dirs),
        libraries=library_names(with_import),
        extra_link_args=list(extra_link_args),
    )
    return ffi
