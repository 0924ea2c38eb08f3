/* Private to rtcd: the surface-overlap test of two placed meshes
 * (core/query/surface_overlap.c), the narrow phase's separation test. */
#ifndef RTCD_CORE_SURFACE_OVERLAP_H
#define RTCD_CORE_SURFACE_OVERLAP_H

#include "mesh/mesh_layout.h"
#include "shared/geom.h"

#include <float.h>
#include <math.h>

/* The floor of the descent's tolerance, in float ulps of the coordinates
 * (core/query/surface_overlap.c says why). */
#define RTCD_SO_FLOAT_ULPS 64.0f

/* rtcd_surfaces_intersect's tolerance for a and b placed by b_in_a: every
 * coordinate either of its tests reads, in either frame, is at most the
 * magnitude summed here. */
static inline float rtcd_surfaces_tolerance(const rtcd_mesh* a, const rtcd_mesh* b, const rtcd_xform* b_in_a)
{
    float magnitude = a->reach + b->reach + fabsf(b_in_a->t[0]) + fabsf(b_in_a->t[1]) + fabsf(b_in_a->t[2]);
    return RTCD_SO_FLOAT_ULPS * FLT_EPSILON * magnitude;
}

/* Do the balls of a's and b's reach about their origins lie more than
 * twice rtcd_surfaces_intersect's tolerance apart? Then it says 0, and no
 * edge of one comes near a face of the other: a gate cheap enough for every
 * pair (the OpenCL host sets it for GPUs, which mark vertices instead of
 * running the descent). */
static inline int rtcd_reach_balls_apart(const rtcd_mesh* a, const rtcd_mesh* b, const rtcd_xform* b_in_a)
{
    float gap = a->reach + b->reach + 2.0f * rtcd_surfaces_tolerance(a, b, b_in_a);
    return b_in_a->t[0] * b_in_a->t[0] + b_in_a->t[1] * b_in_a->t[1] + b_in_a->t[2] * b_in_a->t[2] > gap * gap;
}

/* Do the surfaces of a and b (b placed by b_in_a, the pose of b in a's frame)
 * intersect? Conservative: touching or coplanar overlap counts as yes
 * (core/query/surface_overlap.c). Exported for tests only. */
RTCD_API int rtcd_surfaces_intersect(const rtcd_mesh* a, const rtcd_mesh* b, const rtcd_xform* b_in_a);

#endif
