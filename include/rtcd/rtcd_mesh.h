/* SPDX-License-Identifier: Zlib. Copyright (c) 2026 the rtcd authors (LICENSE). */
/* rtcd meshes: closed, consistently oriented, 2-manifold triangle meshes
 * (and, for static partners, open one-sided surfaces: RTCD_MESH_OPEN_SURFACE).
 * A mesh is reference counted (starts at 1) and holds its own copy of the
 * input plus derived data and a BVH. Its topology never changes; its
 * vertices may (rtcd_mesh_update_vertices: deforming meshes). */
#ifndef RTCD_MESH_H
#define RTCD_MESH_H

#include "rtcd_common.h"
#include "rtcd_task.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rtcd_mesh rtcd_mesh;

enum rtcd_mesh_flags {
    /* A closed mesh with negative volume is flipped (every triangle's winding
     * reversed) instead of rejected with RTCD_ERROR_MESH_INSIDE_OUT. */
    RTCD_MESH_FLIP_INSIDE_OUT = 1u << 0,
    /* An open, one-sided surface: terrain, a floor or a building taken from
     * a static triangle mesh. Open edges are allowed (each still used by
     * exactly one triangle; manifold and consistently oriented otherwise);
     * the triangles' fronts face away from the solid behind them, so a point
     * is inside when the first surface crossed along a ray from it is a back
     * face. For static partners only: no mass properties (all zero). */
    RTCD_MESH_OPEN_SURFACE = 1u << 1,
    /* A mesh that will deform (rtcd_mesh_update_vertices): its near grid
     * (the predictive candidates' culling) is a bound from the surface
     * cells, about 20x cheaper to build than exact distances (0.12 ms
     * against 2.2 ms for 902 triangles) and a little looser, and its
     * vertex normals are computed in floats (the same angle weights, acos
     * by a polynomial within 2e-8 rad): about twice as fast. A mesh's
     * first update makes it deformable: an updated mesh has the normals,
     * box and edge lengths of one created from the same vertices with this
     * flag, bit for bit. */
    RTCD_MESH_DEFORMABLE = 1u << 2
};

typedef struct rtcd_mesh_def {
    /* Caller-owned, read during rtcd_mesh_create only (rtcd copies them). */
    const float* vertices;      /* xyz per vertex, vertex_stride bytes apart */
    uint32_t vertex_count;
    size_t vertex_stride;       /* 0 means 3 * sizeof(float); else at least 12 bytes */
    const uint32_t* indices;    /* 3 per triangle, counter-clockwise seen from outside */
    uint32_t triangle_count;
    uint32_t flags;             /* rtcd_mesh_flags */
    uint32_t bvh_leaf_size;     /* max triangles per BVH leaf, 1..15; 0 means default (4) */
    const char* name;           /* optional, copied; used in messages */
} rtcd_mesh_def;

RTCD_API rtcd_mesh_def rtcd_default_mesh_def(void);

/* The range of validity: where the float pipeline answers right. A mesh's
 * extent (its bounding box's longest edge) lies within [1 mm, 10 km], its
 * coordinates within 1e5 m of its origin, and its extent is at least 1e-4
 * of its largest coordinate (detail above float rounding). Outside it,
 * rtcd_mesh_create fails with RTCD_ERROR_MESH_OUT_OF_RANGE. */
#define RTCD_MESH_MIN_EXTENT 1e-3f
#define RTCD_MESH_MAX_EXTENT 1e4f
#define RTCD_MESH_MAX_COORDINATE 1e5f

/* Validates in this order and stops at the first failure, whose code is
 * returned and whose message names the element (vertex, triangle or edge):
 * index range, finite coordinates, the range of validity, degenerate triangles, open edges,
 * non-manifold edges, orientation consistency, inside-out. On success *out
 * holds a new mesh with reference count 1. On failure *out is NULL. */
RTCD_API rtcd_error rtcd_mesh_create(const rtcd_mesh_def* def, rtcd_mesh** out);
RTCD_API void rtcd_mesh_retain(rtcd_mesh* mesh);
RTCD_API void rtcd_mesh_release(rtcd_mesh* mesh); /* NULL is fine */
/* Unique in the process, never reused (0 for NULL): a mesh created after
 * another's release may get its address, never its id. A deformation keeps
 * the id (rtcd_mesh_version counts those). */
RTCD_API uint64_t rtcd_mesh_id(const rtcd_mesh* mesh);

/* Accessors. Returned arrays are owned by the mesh and live as long as it. */
RTCD_API uint32_t rtcd_mesh_vertex_count(const rtcd_mesh* mesh);
RTCD_API uint32_t rtcd_mesh_triangle_count(const rtcd_mesh* mesh);
RTCD_API const char* rtcd_mesh_name(const rtcd_mesh* mesh);
RTCD_API const float* rtcd_mesh_vertices(const rtcd_mesh* mesh);          /* 3 per vertex */
RTCD_API const uint32_t* rtcd_mesh_indices(const rtcd_mesh* mesh);        /* 3 per triangle */
RTCD_API const float* rtcd_mesh_triangle_normals(const rtcd_mesh* mesh);  /* 3 per triangle, unit, outward */
RTCD_API const float* rtcd_mesh_vertex_normals(const rtcd_mesh* mesh);    /* 3 per vertex, unit, angle-weighted */
/* neighbours[3*t+e]: the triangle across edge e of triangle t, where edge e
 * runs from corner e to corner (e+1)%3. */
RTCD_API const uint32_t* rtcd_mesh_triangle_neighbors(const rtcd_mesh* mesh);
/* The mesh's box. A NULL lo or hi is skipped; a NULL mesh gives zeros. */
RTCD_API void rtcd_mesh_bounds(const rtcd_mesh* mesh, float lo[3], float hi[3]);
/* Non-zero for a mesh made with RTCD_MESH_OPEN_SURFACE. */
RTCD_API int rtcd_mesh_is_open_surface(const rtcd_mesh* mesh);
/* Mean edge length: a natural length scale for tolerances. */
RTCD_API float rtcd_mesh_mean_edge_length(const rtcd_mesh* mesh);

/* Mass properties for unit density, computed from the closed surface. */
typedef struct rtcd_mass_properties {
    double volume;
    double center_of_mass[3];
    double inertia[9];   /* about the centre of mass, in the mesh frame, row-major */
} rtcd_mass_properties;
RTCD_API rtcd_mass_properties rtcd_mesh_mass_properties(const rtcd_mesh* mesh);

/* Deforming meshes: new positions for every vertex, the same triangles.
 * vertices: vertex_count xyz triples, `stride` bytes apart (0: packed),
 * read during the call. The new shape is checked as rtcd_mesh_create checks
 * one (finite, the range of validity, no degenerate triangle, a closed mesh
 * not inside out; the same codes and messages, less the hint to flip: the
 * triangles stay as they are); on failure the mesh is unchanged. Then the
 * BVH is refitted (rebuilt instead once refitting has degraded it past a
 * measured bound; a rebuild that finds no memory keeps the refitted tree,
 * exact and slower, and is tried again at the next update), the normals,
 * box, edge lengths and vertex clusters' balls are recomputed, and the
 * occupancy and near grids are kept conservatively, rebuilt when their
 * slack runs out (core/mesh/mesh_deform.c): the mesh's rays, contacts and point
 * queries answer as a mesh created from the same vertices would. Mass
 * properties are computed when asked for (rtcd_mesh_mass_properties).
 * Every holder of the mesh sees the new shape: bodies sharing a mesh deform
 * together. Backends notice the change by the version and upload it before
 * their next call. Not to be called while a call that reads the mesh runs. */
RTCD_API rtcd_error rtcd_mesh_update_vertices(rtcd_mesh* mesh, const float* vertices, size_t stride);

/* Many meshes updated in one call, spread over `tasks` (NULL: on the
 * calling thread): mesh k gets vertices[k], strides[k] bytes apart (strides
 * NULL: all packed). The meshes must be distinct (RTCD_ERROR_INVALID_ARGUMENT
 * otherwise, nothing updated). Each update succeeds or fails on its own, as
 * rtcd_mesh_update_vertices would; errors[k] (when errors is not NULL) gets
 * its code, and the call returns the code of the lowest failed k (RTCD_OK if
 * none; the last error message then names that mesh and the code). */
RTCD_API rtcd_error rtcd_mesh_update_vertices_many(rtcd_mesh* const* meshes, const float* const* vertices,
                                                   const size_t* strides, uint32_t count,
                                                   const rtcd_task_system* tasks, rtcd_error* errors);
/* 0 at creation, one more per successful update. */
RTCD_API uint64_t rtcd_mesh_version(const rtcd_mesh* mesh);

/* What the updates did so far (all zero for a NULL mesh). */
#define RTCD_DEFORM_PARTS 7
typedef struct rtcd_mesh_deform_stats {
    uint64_t version;     /* rtcd_mesh_version */
    uint64_t refits;      /* updates that refitted the BVH */
    uint64_t rebuilds;    /* updates that rebuilt it: refitting had degraded it past the bound */
    double deformation;   /* sum over updates of the largest vertex displacement (mesh frame) */
    double sah_ratio;     /* the BVH's SAH cost now over its cost when last built (1: as built) */
    uint64_t grid_rebuilds; /* updates whose grids' slack had run out (rebuilt) */
    uint64_t cluster_sorts; /* updates that sorted the vertex clusters again (with the grids) */
    /* Time spent per part over all updates, milliseconds (names:
     * rtcd_mesh_deform_part_name); the last, "lazy_grids", is the grids'
     * fill that an update leaves to the first collision query reading them
     * (spent inside that query, on its thread). */
    double part_ms[RTCD_DEFORM_PARTS];
} rtcd_mesh_deform_stats;
/* "check", "volume", "geometry", "bvh", "grids", "clusters", "lazy_grids"; "" past the last. */
RTCD_API const char* rtcd_mesh_deform_part_name(int part);
RTCD_API rtcd_mesh_deform_stats rtcd_mesh_get_deform_stats(const rtcd_mesh* mesh);

#ifdef __cplusplus
}
#endif
#endif
