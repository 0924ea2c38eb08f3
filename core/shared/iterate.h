/* The iterative algorithm's per-ray step (JVRC 2013 Algorithm 1) and the
 * predictive candidate test, shared by the CPU reference and the kernels
 * (C11 and OpenCL C 1.2, like geom.h). */
#ifndef RTCD_SHARED_ITERATE_H
#define RTCD_SHARED_ITERATE_H

#include "geom.h"

/* A kept ray: the casting vertex (direction << 31 | vertex, as contact
 * features) and a triangle of the other mesh; RTCD_ENTRY_PREDICTION in the
 * triangle word marks a predictive ray. */
#define RTCD_ENTRY_PREDICTION 0x80000000u
#define RTCD_ENTRY_TRIANGLE 0x7fffffffu

#define RTCD_WALK_LOST 0    /* no triangle found within max_iterations, or the vertex left */
#define RTCD_WALK_HIT 1     /* the ray exits the other mesh through *tri: the vertex collides */
#define RTCD_WALK_PREDICT 2 /* the opposite ray enters the other mesh through *tri within culling */
#define RTCD_WALK_BEHIND 3  /* the line enters the other mesh through *tri behind the vertex: likely inside */

/* Predictive rays are culled by how far the vertex is from the hit
 * triangle's plane (the motion that would bring it there), not by the ray
 * length: a grazing ray far longer than the culling distance can belong to a
 * vertex about to touch. The ray itself runs to RTCD_PREDICT_REACH times
 * the culling distance (planes up to ~75 degrees off the ray). */
#define RTCD_PREDICT_REACH 4.0f
RTCD_INLINE int prediction_within(float ray_t, float abs_cos, float culling) { return ray_t * abs_cos <= culling; }

/* The line o + t d against one triangle, with ray_triangle's arithmetic and
 * inclusive tolerance (so t agrees with the standard algorithm's). Returns 1
 * when the line crosses the triangle (*t set); else *edge is the slot
 * (edge (i, i+1) of the index triple) across which the line passes farthest
 * outside, *edge2 the next one, or RTCD_INVALID when the line is parallel
 * to the plane. */
RTCD_INLINE int line_triangle(rtcd_v3 o, rtcd_v3 d, rtcd_v3 p0, rtcd_v3 p1, rtcd_v3 p2, float* t, rtcd_u32* edge,
                              rtcd_u32* edge2)
{
    rtcd_v3 e1 = v3_sub(p1, p0);
    rtcd_v3 e2 = v3_sub(p2, p0);
    rtcd_v3 pv = v3_cross(d, e2);
    float det = v3_dot(e1, pv);
    *edge = *edge2 = RTCD_INVALID;
    if (det == 0.0f) return 0;
    float inv = 1.0f / det;
    rtcd_v3 tv = v3_sub(o, p0);
    float u = v3_dot(tv, pv) * inv; /* weight of p1 */
    rtcd_v3 qv = v3_cross(tv, e1);
    float v = v3_dot(d, qv) * inv;  /* weight of p2 */
    float w = 1.0f - u - v;         /* weight of p0 */
    if (u >= -RTCD_BARY_EPS && v >= -RTCD_BARY_EPS && u + v <= 1.0f + RTCD_BARY_EPS) {
        *t = v3_dot(e2, qv) * inv;
        return 1;
    }
    /* Cross the edge opposite the most negative weight: edge (p1, p2) is
     * slot 1, (p2, p0) slot 2, (p0, p1) slot 0. */
    float wt[3] = {v, w, u}; /* weight opposite slot 0, 1, 2 */
    rtcd_u32 first = wt[1] <= wt[2] ? (wt[1] <= wt[0] ? 1u : 0u) : (wt[2] <= wt[0] ? 2u : 0u);
    rtcd_u32 a = (first + 1u) % 3u, b = (first + 2u) % 3u;
    *edge = first;
    *edge2 = wt[a] <= wt[b] ? a : b;
    return 0;
}

/* Relaunches a kept ray (origin o, unit direction d, both in the target's
 * frame) on triangle *tri and walks across the nearest edge at most
 * max_iterations times. On HIT / PREDICT *tri and *t are the triangle found
 * and the line parameter there (negative for a prediction). neighbors[3 t + e]
 * is the triangle across edge e of t. *steps counts triangle tests. */
RTCD_INLINE int walk_ray(const RTCD_GLOBAL float* vertices, const RTCD_GLOBAL rtcd_u32* indices,
                         const RTCD_GLOBAL rtcd_u32* neighbors, const RTCD_GLOBAL float* tnormals, rtcd_v3 o,
                         rtcd_v3 d, rtcd_u32 max_iterations, int predictive, float culling, rtcd_u32* tri, float* t,
                         rtcd_u32* steps)
{
    rtcd_u32 cur = *tri, prev = RTCD_INVALID;
    for (rtcd_u32 i = 0; i < max_iterations; ++i) {
        ++*steps;
        const RTCD_GLOBAL rtcd_u32* ix = indices + 3 * cur;
        float tt;
        rtcd_u32 edge, edge2;
        if (line_triangle(o, d, v3_load(vertices + 3 * ix[0]), v3_load(vertices + 3 * ix[1]),
                          v3_load(vertices + 3 * ix[2]), &tt, &edge, &edge2)) {
            /* The triangle's outward normal along d: the ray leaves the mesh
             * there, and the opposite ray would enter it. */
            float cosn = v3_dot(d, v3_load(tnormals + 3 * cur));
            *tri = cur;
            *t = tt;
            if (!(cosn > 0.0f)) return tt < 0.0f ? RTCD_WALK_BEHIND : RTCD_WALK_LOST;
            if (tt >= 0.0f) return RTCD_WALK_HIT;
            if (predictive && prediction_within(-tt, cosn, culling)) return RTCD_WALK_PREDICT;
            return RTCD_WALK_LOST;
        }
        if (edge == RTCD_INVALID) return RTCD_WALK_LOST;
        /* Never straight back: near a vertex the nearest edge can point to
         * where the walk came from, and it would swing between two. */
        rtcd_u32 next = neighbors[3 * cur + edge];
        if (next == prev) next = neighbors[3 * cur + edge2];
        if (next == RTCD_INVALID) return RTCD_WALK_LOST; /* off an open surface's border */
        prev = cur;
        cur = next;
    }
    return RTCD_WALK_LOST;
}

/* May p (mesh frame), a point outside the mesh, lie within `dist` of its
 * surface? near[c]: the distance from cell c's centre to the surface in
 * steps of min_cell / RTCD_NEAR_STEPS, rounded down, so p is at least
 * near * step - |p - centre| away (distance is 1-Lipschitz). Conservative:
 * never 0 for a point that close. */
#define RTCD_NEAR_GRID_N 16
#define RTCD_NEAR_STEPS 16.0f
RTCD_INLINE int grid_may_be_near(const RTCD_GLOBAL unsigned char* near, rtcd_v3 lo, rtcd_v3 inv_cell, float min_cell,
                                 rtcd_v3 p, float dist)
{
    float fx = (p.x - lo.x) * inv_cell.x, fy = (p.y - lo.y) * inv_cell.y, fz = (p.z - lo.z) * inv_cell.z;
    const float n = (float)RTCD_NEAR_GRID_N;
    /* The nearest cell (the point's own when inside the grid). */
    float cx = rtcd_minf(rtcd_maxf(fx, 0.0f), n - 0.5f), cy = rtcd_minf(rtcd_maxf(fy, 0.0f), n - 0.5f),
          cz = rtcd_minf(rtcd_maxf(fz, 0.0f), n - 0.5f);
    rtcd_u32 ix = (rtcd_u32)cx, iy = (rtcd_u32)cy, iz = (rtcd_u32)cz;
    /* Outside the grid, the distance to its box bounds it too (the surface
     * is inside); both tests squared, no square root. */
    float bx = (fx - rtcd_minf(rtcd_maxf(fx, 0.0f), n)) / inv_cell.x;
    float by = (fy - rtcd_minf(rtcd_maxf(fy, 0.0f), n)) / inv_cell.y;
    float bz = (fz - rtcd_minf(rtcd_maxf(fz, 0.0f), n)) / inv_cell.z;
    if (bx * bx + by * by + bz * bz > dist * dist) return 0;
    float centre = (float)near[(iz * RTCD_NEAR_GRID_N + iy) * RTCD_NEAR_GRID_N + ix] * (min_cell / RTCD_NEAR_STEPS);
    float gap = centre - dist; /* p is near unless |p - centre| < gap */
    if (gap <= 0.0f) return 1;
    float dx = (fx - ((float)ix + 0.5f)) / inv_cell.x, dy = (fy - ((float)iy + 0.5f)) / inv_cell.y,
          dz = (fz - ((float)iz + 0.5f)) / inv_cell.z;
    return dx * dx + dy * dy + dz * dz >= gap * gap;
}

#endif
