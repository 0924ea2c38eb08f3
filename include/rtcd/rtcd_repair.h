/* SPDX-License-Identifier: Zlib. Copyright (c) 2026 the rtcd authors (LICENSE). */
/* Mesh repair: what real triangle data needs before rtcd_mesh_create takes
 * it. Triangle soups (btTriangleMesh's default, most importers), coincident
 * vertices, zero-area and sliver triangles, duplicated faces, several closed
 * pieces in one file (convex decompositions), small holes, flipped pieces.
 * No file formats here (the import library reads files and calls this).
 *
 * Every repair is counted and its first element named in the report, in the
 * input's numbering, so a user can find it in their own file. */
#ifndef RTCD_REPAIR_H
#define RTCD_REPAIR_H

#include "rtcd_common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum rtcd_repair_flags {
    RTCD_REPAIR_WELD = 1u << 0,        /* merge coincident vertices: exactly, then within weld_tolerance */
    /* drop repeated indices and zero-area triangles (zero area as rtcd_mesh_create
     * judges it; with RTCD_REPAIR_SLIVERS only those the sliver repair could not fix) */
    RTCD_REPAIR_DEGENERATE = 1u << 1,
    /* collapse or flip sliver triangles where the surface stays a closed 2-manifold */
    RTCD_REPAIR_SLIVERS = 1u << 2,
    /* drop faces repeated with the same three vertices; a pair wound opposite
     * ways (an internal wall between two pieces glued face to face) goes entirely */
    RTCD_REPAIR_DUPLICATES = 1u << 3,
    /* split into components joined only across edges of exactly two triangles
     * (pieces touching at a vertex or along a non-manifold edge part); off:
     * one component holds everything */
    RTCD_REPAIR_SPLIT = 1u << 4,
    /* close boundary loops of at most max_hole_edges edges (ear clipping, wound
     * like the neighbours; two holes touching at a vertex are two loops); a
     * loop that visits a vertex twice, meets more than two holes at a vertex,
     * or whose fill would fold back onto its neighbours (the rim of an open
     * sheet) stays open */
    RTCD_REPAIR_HOLES = 1u << 5,
    RTCD_REPAIR_ORIENT = 1u << 6,      /* consistent winding per component, outward for closed ones */
    RTCD_REPAIR_ALL = 0x7Fu
} rtcd_repair_flags;

typedef struct rtcd_repair_def {
    uint32_t flags;            /* rtcd_repair_flags; default RTCD_REPAIR_ALL */
    /* Welding distance after the exact weld, relative to the diagonal of the
     * bounding box of the vertices the triangles use. Each vertex merges into
     * the lowest-numbered vertex within that distance that was not merged
     * itself (no chains). Default 1e-5; 0 welds exact duplicates only (-0 and
     * +0 are equal). */
    float weld_tolerance;
    /* A triangle is a sliver when its smallest altitude is below this,
     * relative to its longest edge. A needle (one short edge) collapses that
     * edge; a cap (a corner close to the opposite edge) flips that edge with
     * the neighbouring triangle, or else collapses its shortest edge. Only
     * where the surface stays a 2-manifold (link condition) and no triangle
     * folds over; other slivers stay. Default 1e-3. */
    float sliver_ratio;
    uint32_t max_hole_edges;   /* default 8 */
} rtcd_repair_def;

RTCD_API rtcd_repair_def rtcd_default_repair_def(void);

/* What was done, in the input's numbering: first_* is the smallest input
 * index concerned (UINT32_MAX when none). */
typedef struct rtcd_repair_report {
    uint32_t input_vertices, input_triangles;
    uint32_t welded_vertices;          /* vertices merged into another one */
    uint32_t first_welded_vertex;
    uint32_t degenerate_triangles;     /* removed: zero area or repeated index */
    uint32_t first_degenerate_triangle;
    uint32_t sliver_triangles;         /* slivers removed by a collapse or replaced by a flip */
    uint32_t first_sliver_triangle;
    uint32_t duplicate_triangles;      /* removed: same vertices as an earlier face (both of an opposite pair) */
    uint32_t first_duplicate_triangle;
    uint32_t split_components;         /* components beyond the first */
    uint32_t filled_holes;             /* boundary loops closed */
    uint32_t first_hole_edge_vertex;   /* the lowest input vertex on the first filled hole */
    uint32_t flipped_triangles;        /* input triangles whose winding was reversed */
    uint32_t first_flipped_triangle;
    uint32_t open_components;          /* components still open after the repairs */
    uint32_t nonmanifold_edges;        /* edges of more than two faces the split could not part */
} rtcd_repair_report;

/* The repaired surface: components (none when every triangle was removed),
 * each with its own vertex and index arrays (compact: only vertices its
 * triangles use; counter-clockwise from outside where closed). Components
 * come in the order of their first input triangle; triangles keep input order
 * with hole fills last. Orientation is made consistent per edge-connected
 * piece: outward where the piece is closed, else the winding most of its
 * triangles came with. Deterministic: the same input gives the same output. */
typedef struct rtcd_repaired rtcd_repaired;

/* vertices: xyz floats, vertex_stride bytes apart (0: 3 floats); indices: 3
 * per triangle. Caller-owned, read during the call only. Repairs in this
 * order: weld, degenerate, duplicates, slivers, split, holes, orient
 * (zero-area triangles with three distinct corners go to the sliver repair
 * first when it runs, since removing them would open the surface). Fails
 * with RTCD_ERROR_INVALID_ARGUMENT (a NULL pointer, def included; zero
 * counts; unknown flags; a negative or non-finite tolerance or ratio; a
 * stride below 12 bytes), RTCD_ERROR_MESH_TOO_LARGE (sizes beyond the
 * address space or 2^32 / 3 triangles), RTCD_ERROR_MESH_INDEX_OUT_OF_RANGE
 * (naming the triangle), RTCD_ERROR_MESH_NONFINITE_VERTEX (naming the
 * vertex; every vertex is checked, used or not) or RTCD_ERROR_OUT_OF_MEMORY;
 * a surface that stays open is not a failure (see the report and
 * rtcd_repaired_component_closed). *out is NULL on failure. */
RTCD_API rtcd_error rtcd_repair(const rtcd_repair_def* def, const float* vertices, uint32_t vertex_count,
                                size_t vertex_stride, const uint32_t* indices, uint32_t triangle_count,
                                rtcd_repaired** out);
RTCD_API void rtcd_repaired_retain(rtcd_repaired* repaired);
RTCD_API void rtcd_repaired_release(rtcd_repaired* repaired); /* NULL is fine */

RTCD_API const rtcd_repair_report* rtcd_repaired_report(const rtcd_repaired* repaired); /* owned by it */
RTCD_API uint32_t rtcd_repaired_component_count(const rtcd_repaired* repaired);
/* Arrays owned by `repaired`; any output pointer may be NULL.
 * RTCD_ERROR_INVALID_ARGUMENT for a NULL handle or a bad index. */
RTCD_API rtcd_error rtcd_repaired_component(const rtcd_repaired* repaired, uint32_t component,
                                            const float** vertices, uint32_t* vertex_count,
                                            const uint32_t** indices, uint32_t* triangle_count);
/* Non-zero when the component has no open and no non-manifold edge and its
 * winding is consistent (what rtcd_mesh_create checks of the topology). */
RTCD_API int rtcd_repaired_component_closed(const rtcd_repaired* repaired, uint32_t component);
/* All components in one vertex and index array (component after component):
 * what a single rtcd mesh of several closed pieces is made of. Output
 * pointers may be NULL. */
RTCD_API rtcd_error rtcd_repaired_merged(const rtcd_repaired* repaired, const float** vertices,
                                         uint32_t* vertex_count, const uint32_t** indices,
                                         uint32_t* triangle_count);

/* One line naming every non-zero count, e.g. "welded 1204 vertices (first
 * 3), repaired 2 slivers (first triangle 17)"; "" when nothing was repaired
 * and nothing is left open. Owned by `repaired`. */
RTCD_API const char* rtcd_repaired_summary(const rtcd_repaired* repaired);

#ifdef __cplusplus
}
#endif
#endif
