/* One mesh as flat buffers, the way the per-vertex pipeline (pair.h) reads
 * it on the CPU (pointers into rtcd_mesh) and in the kernels (offsets into
 * the devices' concatenated buffers): the occupancy and near grids, the BVH,
 * and the first-hit query every cast goes through. C11 and OpenCL C 1.2. */
#ifndef RTCD_SHARED_MESH_VIEW_H
#define RTCD_SHARED_MESH_VIEW_H

#include "bvh.h"
#include "iterate.h"

/* Occupancy grid cells per axis (rtcd_solid_grid, and the near grid). */
#define RTCD_GRID_N 16
#define RTCD_GRID_BYTES (RTCD_GRID_N * RTCD_GRID_N * RTCD_GRID_N / 8)
#define RTCD_NEAR_BYTES (RTCD_GRID_N * RTCD_GRID_N * RTCD_GRID_N)
/* rtcd_mesh_view.vertex_balls of a vertex in no ball. */
#define RTCD_NO_BALL 255u

#ifndef __OPENCL_VERSION__
/* The CPU's 4-wide copy of the BVH (core/query/bvh4.c): same answers as the binary walks. */
struct rtcd_bvh;
rtcd_tri_hit rtcd_bvh4_first_hit(const struct rtcd_bvh* bvh, const rtcd_bvh_view* view, rtcd_v3 org, rtcd_v3 dir,
                                 float tmin, float tmax, rtcd_u32 skip_vertex);
#endif

typedef struct rtcd_mesh_view {
    rtcd_bvh_view bvh;                     /* nodes, leaf triangles, their ids, indices */
    const RTCD_GLOBAL float* vertices;     /* 3 per vertex */
    const RTCD_GLOBAL float* prev_vertices; /* 3 per vertex: before the mesh's last update (read when the pair says it deformed) */
    const RTCD_GLOBAL float* vnormals;     /* 3 per vertex, (0,0,0) for unreferenced ones */
    const RTCD_GLOBAL float* tnormals;     /* 3 per triangle */
    const RTCD_GLOBAL rtcd_u32* indices;   /* 3 per triangle, mesh-local */
    const RTCD_GLOBAL rtcd_u32* neighbors; /* 3 per triangle: across edge (i, i+1) */
    const RTCD_GLOBAL unsigned char* solid; /* RTCD_GRID_BYTES occupancy bits */
    const RTCD_GLOBAL unsigned char* near;  /* RTCD_NEAR_BYTES distances (grid_may_be_near) */
    rtcd_u32 vertex_count, tri_count;
    rtcd_v3 lo, hi;                        /* the mesh's box */
    rtcd_v3 grid_lo, grid_inv;             /* grid origin and cells per unit */
    float min_cell;                        /* smallest cell edge */
    /* Balls that hold every vertex (centre x y z, radius; sphere_stride
     * words apart) and the longest edge: the second phase's cull (crossing.h). */
    const RTCD_GLOBAL float* spheres;
    rtcd_u32 sphere_count, sphere_stride;
    float max_edge;
    float reach;                           /* largest distance of a vertex from the mesh origin */
    /* Each vertex's ball among `spheres` (the kernels' vertex sweep skips the
     * vertices of balls that pair_ball_may_hold turns down; RTCD_NO_BALL:
     * swept always); NULL on the CPU, which walks its clusters instead. */
    const RTCD_GLOBAL unsigned char* vertex_balls;
#ifndef __OPENCL_VERSION__
    const struct rtcd_bvh* accel;          /* NULL: the binary walk */
#else
    const RTCD_GLOBAL rtcd_bvh4_node* nodes4; /* the 4-wide copy (RTCD_CL_WALK4), */
    rtcd_u32 node4_count;                  /* 0: none, the binary walk */
#endif
} rtcd_mesh_view;

/* 0 when p (mesh frame) is certainly outside the mesh: its grid cell holds
 * neither surface nor inside. */
RTCD_INLINE int grid_may_contain(const RTCD_GLOBAL unsigned char* solid, rtcd_v3 lo, rtcd_v3 inv_cell, rtcd_v3 p)
{
    float fx = (p.x - lo.x) * inv_cell.x, fy = (p.y - lo.y) * inv_cell.y, fz = (p.z - lo.z) * inv_cell.z;
    const float n = (float)RTCD_GRID_N;
    if (!(fx >= 0.0f && fy >= 0.0f && fz >= 0.0f && fx < n && fy < n && fz < n)) return 0;
    rtcd_u32 i = ((rtcd_u32)fz * RTCD_GRID_N + (rtcd_u32)fy) * RTCD_GRID_N + (rtcd_u32)fx;
    return (solid[i >> 3] >> (i & 7u)) & 1u;
}

RTCD_INLINE int view_may_contain(const rtcd_mesh_view* m, rtcd_v3 p)
{
    return grid_may_contain(m->solid, m->grid_lo, m->grid_inv, p);
}

/* May a ball (centre c, radius r, mesh frame) come within dist of the
 * mesh's grid box? */
RTCD_INLINE int view_ball_near_grid(const rtcd_mesh_view* m, rtcd_v3 c, float r, float dist)
{
    float e[3];
    float v[3] = {c.x, c.y, c.z}, lo[3] = {m->grid_lo.x, m->grid_lo.y, m->grid_lo.z};
    float inv[3] = {m->grid_inv.x, m->grid_inv.y, m->grid_inv.z};
    for (int k = 0; k < 3; ++k) {
        float hi = lo[k] + RTCD_GRID_N / inv[k];
        e[k] = v[k] < lo[k] ? lo[k] - v[k] : (v[k] > hi ? v[k] - hi : 0.0f);
    }
    float lim = r + dist;
    return e[0] * e[0] + e[1] * e[1] + e[2] * e[2] <= lim * lim;
}

/* May p (mesh frame, outside) lie within dist of the surface? Conservative. */
RTCD_INLINE int view_may_be_near(const rtcd_mesh_view* m, rtcd_v3 p, float dist)
{
    return grid_may_be_near(m->near, m->grid_lo, m->grid_inv, m->min_cell, p, dist);
}

/* Nearest hit with t in [0, tmax]; brute force tests every triangle (the
 * papers' "basic" traversal). Every walk gives the same answer (ties go to
 * the lower triangle id), so the CPU walks its 4-wide copy (bvh4_first_hit
 * in SSE), CPU devices the same walk (RTCD_CL_WALK4, cl_devices.c) or the
 * binary one with a stack (RTCD_CL_STACK_WALK), GPUs the stackless walk. */
RTCD_INLINE rtcd_tri_hit view_first_hit(const rtcd_mesh_view* m, rtcd_u32 brute_force, rtcd_v3 o, rtcd_v3 d,
                                        float tmax)
{
    if (brute_force) return brute_first_hit(m->vertices, m->indices, m->tri_count, o, d, 0.0f, tmax, RTCD_INVALID);
#if defined(__OPENCL_VERSION__) && defined(RTCD_CL_WALK4) && RTCD_CL_WALK4
    if (m->node4_count) return bvh4_first_hit(m->nodes4, &m->bvh, o, d, 0.0f, tmax, RTCD_INVALID);
#endif
#if defined(__OPENCL_VERSION__) && defined(RTCD_CL_STACK_WALK)
    return bvh_first_hit(&m->bvh, o, d, 0.0f, tmax, RTCD_INVALID); /* CPU devices (cl_devices.c) */
#elif defined(__OPENCL_VERSION__)
    return bvh_first_hit_stackless(&m->bvh, o, d, 0.0f, tmax, RTCD_INVALID);
#else
    if (m->accel) return rtcd_bvh4_first_hit(m->accel, &m->bvh, o, d, 0.0f, tmax, RTCD_INVALID);
    return bvh_first_hit(&m->bvh, o, d, 0.0f, tmax, RTCD_INVALID);
#endif
}

/* Is the mesh's own surface hit before t_other (vertex `skip` excluded)? The
 * Hermann self test: an early-exit walk, or brute force. */
RTCD_INLINE int view_hit_before(const rtcd_mesh_view* m, rtcd_u32 brute_force, rtcd_v3 o, rtcd_v3 d, float t_other,
                                rtcd_u32 skip)
{
    if (brute_force) {
        rtcd_tri_hit h = brute_first_hit(m->vertices, m->indices, m->tri_count, o, d, 0.0f, t_other, skip);
        return h.tri != RTCD_INVALID && h.t < t_other;
    }
    return bvh_any_hit(&m->bvh, o, d, 0.0f, t_other, skip);
}

#endif
