/* SPDX-License-Identifier: Zlib. Copyright (c) 2026 the rtcd authors (LICENSE). */
/* Geometric queries on one mesh, in the mesh's own frame. */
#ifndef RTCD_QUERY_H
#define RTCD_QUERY_H

#include "rtcd_common.h"
#include "rtcd_mesh.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RTCD_NO_TRIANGLE 0xffffffffu
#define RTCD_NO_VERTEX 0xffffffffu

typedef struct rtcd_ray {
    float origin[3];
    float direction[3];   /* need not be unit; t is in units of |direction| */
    float tmin, tmax;
    /* Triangles that use this vertex are ignored (a ray cast from a mesh's own
     * vertex against that mesh); RTCD_NO_VERTEX ignores nothing. */
    uint32_t skip_vertex;
} rtcd_ray;

typedef struct rtcd_hit {
    uint32_t triangle;    /* RTCD_NO_TRIANGLE on a miss */
    float t;
    float u, v;           /* barycentrics: point = (1-u-v)*p0 + u*p1 + v*p2 */
    int exits;            /* 1 when the ray leaves the closed surface here */
} rtcd_hit;

typedef enum rtcd_traversal {
    RTCD_TRAVERSAL_BVH = 0,          /* binned-SAH BVH, ordered walk with a small stack */
    RTCD_TRAVERSAL_BRUTE_FORCE = 1,  /* every triangle: the paper's "basic" traversal */
    RTCD_TRAVERSAL_BVH_STACKLESS = 2 /* same BVH, escape links, no stack (the GPU walk) */
} rtcd_traversal;


/* Nearest hit with t in [tmin, tmax]; ties in t go to the lower triangle
 * index, so every traversal returns the same triangle. Returns 1 on a hit. */
RTCD_API int rtcd_mesh_first_hit(const rtcd_mesh* mesh, const rtcd_ray* ray,
                                 rtcd_traversal traversal, rtcd_hit* hit);

/* Exact inside test for a closed mesh (ray parity, re-cast along another
 * direction whenever a crossing lands within tolerance of an edge or vertex).
 * Returns 1 inside, 0 outside. Points on the surface may go either way.
 * An open surface (RTCD_MESH_OPEN_SURFACE) holds the points behind it: the
 * first surface crossed along fixed directions (the first that meets it)
 * is a back face; points outside its box are outside. */
RTCD_API int rtcd_mesh_contains_point(const rtcd_mesh* mesh, const float point[3]);

/* Generalised winding number (sum of signed solid angles / 4 pi), O(n):
 * about 1 inside, 0 outside. The brute-force reference for the test above. */
RTCD_API double rtcd_mesh_winding_number(const rtcd_mesh* mesh, const float point[3]);

/* Closest point on the surface to `point`. Returns the distance (>= 0) and
 * fills closest[3] and *triangle when not NULL. */
RTCD_API float rtcd_mesh_closest_point(const rtcd_mesh* mesh, const float point[3],
                                       float closest[3], uint32_t* triangle);

#ifdef __cplusplus
}
#endif
#endif
