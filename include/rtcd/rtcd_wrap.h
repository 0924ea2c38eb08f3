/* SPDX-License-Identifier: Zlib. Copyright (c) 2026 the rtcd authors (LICENSE). */
/* Watertight wrap: a closed, 2-manifold, outward-oriented envelope of any
 * triangle soup (open pieces, large holes, sheets, self-intersecting parts),
 * for what the repair (rtcd_repair.h) cannot close.
 *
 * The envelope is the surface at distance `offset` from the input: the input's
 * unsigned distance field on a voxel grid (OpenVDB, mesh to volume), the
 * level `offset` meshed (OpenVDB, volume to mesh), inner cavities removed
 * (closed inner surfaces and pieces nested inside the outer envelope). A
 * closed piece grows by `offset`; a sheet (cloth, a floor quad) becomes a
 * shell 2 x offset thick; holes narrower than about 2 x offset close. The
 * result is checked: it is what rtcd_mesh_create takes with no flags, or the
 * call fails.
 *
 * Optional at build time (CMake RTCD_WITH_WRAP, needs OpenVDB: Debian
 * libopenvdb-dev). Without it rtcd_wrap_available() is 0 and rtcd_wrap fails
 * with RTCD_ERROR_UNSUPPORTED, "wrap not available". */
#ifndef RTCD_WRAP_H
#define RTCD_WRAP_H

#include "rtcd_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* When the import (rtcd_import_def.wrap) and the Bullet drop-in wrap. */
typedef enum rtcd_wrap_mode {
    RTCD_WRAP_OFF = 0,    /* never: what repair cannot close is declined */
    RTCD_WRAP_AUTO = 1,   /* what repair cannot close (pieces still open, nothing solid left) */
    RTCD_WRAP_ALWAYS = 2  /* every input, closed or not */
} rtcd_wrap_mode;

typedef struct rtcd_wrap_def {
    /* Voxel edge, relative to the diagonal of the input's bounding box.
     * Default 1/128: see the note in core/wrap/wrap.cpp for why. */
    float voxel_size;
    /* Distance of the envelope from the input, in voxels; at least 0.75 (a
     * sheet between grid samples must be seen on both sides). Default 1. */
    float offset;
    /* OpenVDB's adaptivity, 0 (uniform) to 1: flat regions get fewer,
     * larger triangles. Default 0.2. */
    float adaptivity;
    /* Above this the voxels grow (x1.25 a step) until the result fits; the
     * report gives the size used. Default 100000; at least 1000. */
    uint32_t max_triangles;
    /* Bound of the voxel box (the input's box plus the band, in voxels): a
     * request beyond it fails with RTCD_ERROR_MESH_TOO_LARGE naming it.
     * Default 2^24. */
    uint64_t max_voxels;
    /* Points sampled on each side for the distance (plus every vertex, up to
     * the same count). Default 5000. */
    uint32_t distance_samples;
    /* Threads of OpenVDB's work (a TBB arena); 0: TBB's default. */
    uint32_t max_threads;
} rtcd_wrap_def;

RTCD_API rtcd_wrap_def rtcd_default_wrap_def(void);

/* Non-zero when this build has the wrap (OpenVDB). */
RTCD_API int rtcd_wrap_available(void);

typedef struct rtcd_wrap_report {
    float diagonal;            /* of the input's bounding box, input units */
    float voxel_size;          /* the one used, input units */
    float resolution;          /* voxel_size / diagonal */
    float offset;              /* input units */
    uint32_t input_triangles;
    uint32_t output_triangles, output_vertices;
    uint32_t removed_cavities; /* inner surfaces and nested pieces dropped */
    uint32_t coarsened;        /* times the voxels grew to meet max_triangles */
    /* Sampled one-sided distances (input to result, result to input) and the
     * two-sided Hausdorff distance (their maximum), input units. */
    double distance_in_out, distance_out_in, distance;
    double volume;             /* enclosed by the result */
    /* Wall time of the call: the field and the meshing (OpenVDB), the
     * cavities, the check and the distance's share of it. */
    double ms, ms_distance;
} rtcd_wrap_report;

typedef struct rtcd_wrapped rtcd_wrapped;

/* vertices: xyz floats, vertex_stride bytes apart (0: 3 floats); indices: 3
 * per triangle (any winding, any topology). Fails with
 * RTCD_ERROR_INVALID_ARGUMENT (NULL pointers, zero counts, a def value out
 * of range, all triangles of zero extent), RTCD_ERROR_MESH_INDEX_OUT_OF_RANGE,
 * RTCD_ERROR_MESH_NONFINITE_VERTEX (naming the vertex),
 * RTCD_ERROR_MESH_TOO_LARGE (the voxel box beyond max_voxels: the message
 * names the limit and the count asked), RTCD_ERROR_MESH_OUT_OF_RANGE (the
 * envelope beyond the sizes rtcd_mesh_create takes: the input's scale),
 * RTCD_ERROR_UNSUPPORTED (built without the wrap: "wrap not available"),
 * RTCD_ERROR_OUT_OF_MEMORY, or RTCD_ERROR_INTERNAL when the envelope is not
 * valid even after the repair's degenerate and sliver steps (not seen over
 * assimp-testmodels; the message says what). */
RTCD_API rtcd_error rtcd_wrap(const rtcd_wrap_def* def, const float* vertices, uint32_t vertex_count,
                              size_t vertex_stride, const uint32_t* indices, uint32_t triangle_count,
                              rtcd_wrapped** out);
RTCD_API void rtcd_wrapped_retain(rtcd_wrapped* wrapped);
RTCD_API void rtcd_wrapped_release(rtcd_wrapped* wrapped); /* NULL is fine */
RTCD_API const rtcd_wrap_report* rtcd_wrapped_report(const rtcd_wrapped* wrapped);
/* The envelope (counter-clockwise from outside); arrays owned by `wrapped`;
 * output pointers may be NULL. */
RTCD_API rtcd_error rtcd_wrapped_mesh(const rtcd_wrapped* wrapped, const float** vertices, uint32_t* vertex_count,
                                      const uint32_t** indices, uint32_t* triangle_count);

/* Two-sided sampled Hausdorff distance between two triangle sets (3 floats
 * per vertex): every vertex (strided down to `samples`) and `samples`
 * area-weighted points of each side (fixed seed), exact point-triangle
 * distances through a uniform grid. *a_to_b / *b_to_a (may be NULL) get the
 * one-sided values; returns the larger, or -1 on bad input or no memory. */
RTCD_API double rtcd_sampled_distance(const float* va, uint32_t nva, const uint32_t* ia, uint32_t nta,
                                      const float* vb, uint32_t nvb, const uint32_t* ib, uint32_t ntb,
                                      uint32_t samples, double* a_to_b, double* b_to_a);

/* The Bullet drop-in (rtcd_bullet.h): a GImpact mesh whose triangles the
 * repair cannot close is wrapped when this is AUTO or ALWAYS (the default
 * AUTO; ALWAYS acts as AUTO there: closed meshes are taken as they are) and
 * the wrap is built in, with one INFO line naming the shape and the
 * distance; OFF keeps its pairs with Bullet (GImpact) and one warning. The
 * drop-in wraps coarser than the default def (voxel_size 1/64, adaptivity
 * 1: fewer triangles, a larger distance, said in the INFO line): rtcd's
 * time follows the envelope's vertices (bench_wrap_pile).
 * Process-wide, read when a shape's mesh is built. */
RTCD_API void rtcd_set_dropin_wrap(rtcd_wrap_mode mode);
RTCD_API rtcd_wrap_mode rtcd_dropin_wrap(void);

/* "off", "auto", "always" (never NULL). */
RTCD_API const char* rtcd_wrap_mode_name(rtcd_wrap_mode mode);

#ifdef __cplusplus
}
#endif
#endif
