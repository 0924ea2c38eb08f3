/* BVH node layout and traversals shared by the CPU reference and the kernels.
 *
 * Nodes are stored depth-first: the left child of inner node i is i + 1, its
 * right child is nodes[i + 1].escape, and `escape` of any node is the node to
 * visit once its subtree is done or skipped (node_count past the last). That
 * is all a stackless traversal needs. Leaf triangles are stored in leaf order
 * as their three corners beside their original triangle ids. */
#ifndef RTCD_SHARED_BVH_H
#define RTCD_SHARED_BVH_H

#include "f4.h"
#include "geom.h"

#define RTCD_BVH_LEAF_BITS 4u
#define RTCD_BVH_MAX_LEAF_SIZE 15u
#define RTCD_BVH_STACK_SIZE 64

typedef struct rtcd_bvh_node {
    float lo[3];
    rtcd_u32 escape;
    float hi[3];
    rtcd_u32 prims; /* leaf: first << 4 | count (1..15); inner: 0 */
} rtcd_bvh_node;

#ifdef __OPENCL_VERSION__
typedef int rtcd_i32;
#else
typedef int32_t rtcd_i32;
#endif

/* The 4-wide copy of the tree (built and refitted by core/query/bvh4.c):
 * four children's boxes side by side, so one SIMD slab test covers them;
 * child >= 0 is a 4-wide node, < 0 a leaf (-1 - prims); count: children
 * used (2..4). bvh4_first_hit below walks it, for the CPU reference and
 * the CPU devices' kernels alike. */
typedef struct rtcd_bvh4_node {
    float lo[3][4], hi[3][4];
    rtcd_i32 child[4];
    rtcd_u32 count;
} rtcd_bvh4_node;

/* Entries a 4-wide walk stacks at most: up to 3 per level of a tree less
 * than RTCD_BVH_STACK_SIZE deep (the builder asserts that depth). */
#define RTCD_BVH4_STACK_SIZE (3 * RTCD_BVH_STACK_SIZE)

typedef struct rtcd_tri_hit {
    rtcd_u32 tri; /* RTCD_INVALID on a miss */
    float t, u, v;
} rtcd_tri_hit;

/* Everything a traversal reads, as plain pointers (device buffers in kernels). */
typedef struct rtcd_bvh_view {
    const RTCD_GLOBAL rtcd_bvh_node* nodes;
    const RTCD_GLOBAL float* tris;      /* 9 floats per leaf-ordered triangle */
    const RTCD_GLOBAL rtcd_u32* tri_ids; /* original triangle id per leaf slot */
    const RTCD_GLOBAL rtcd_u32* indices; /* mesh indices, 3 per triangle (skip_vertex test) */
    rtcd_u32 node_count;
} rtcd_bvh_view;

RTCD_INLINE int tri_uses_vertex(const RTCD_GLOBAL rtcd_u32* indices, rtcd_u32 tri, rtcd_u32 vertex)
{
    return indices[3 * tri] == vertex || indices[3 * tri + 1] == vertex || indices[3 * tri + 2] == vertex;
}

/* Nearer hit wins; equal t goes to the lower triangle id (traversal-order independent). */
RTCD_INLINE int hit_is_better(float t, rtcd_u32 tri, const rtcd_tri_hit* best)
{
    return t < best->t || (t == best->t && tri < best->tri);
}

/* A leaf triangle's hit at (t, u, v): the ray's best, unless its triangle
 * holds the skipped vertex or a better one is known. */
RTCD_INLINE void offer_hit(const rtcd_bvh_view* bvh, rtcd_u32 id, float t, float u, float v, rtcd_u32 skip_vertex,
                           rtcd_tri_hit* best)
{
    if (skip_vertex != RTCD_INVALID && tri_uses_vertex(bvh->indices, id, skip_vertex)) return;
    if (hit_is_better(t, id, best)) {
        best->tri = id;
        best->t = t;
        best->u = u;
        best->v = v;
    }
}

RTCD_INLINE void leaf_first_hit(const rtcd_bvh_view* bvh, rtcd_u32 prims, rtcd_v3 org, rtcd_v3 dir,
                                float tmin, rtcd_u32 skip_vertex, rtcd_tri_hit* best)
{
    rtcd_u32 first = prims >> RTCD_BVH_LEAF_BITS;
    rtcd_u32 count = prims & RTCD_BVH_MAX_LEAF_SIZE;
    for (rtcd_u32 k = first; k < first + count; ++k) {
        const RTCD_GLOBAL float* p = bvh->tris + 9 * k;
        rtcd_v3 p0 = v3(p[0], p[1], p[2]), p1 = v3(p[3], p[4], p[5]), p2 = v3(p[6], p[7], p[8]);
        float t, u, v;
        if (ray_triangle(org, dir, p0, p1, p2, tmin, best->t, &t, &u, &v))
            offer_hit(bvh, bvh->tri_ids[k], t, u, v, skip_vertex, best);
    }
}

/* A leaf's triangles four at a time, for the 4-wide walk on the CPU (and
 * on CPU devices: RTCD_CL_LEAF4, set only where divisions are correctly
 * rounded, cl_devices.c): ray_triangle's operations in its order, lane by
 * lane, so a lane's answer is the scalar test's bit for bit; a grazing
 * lane takes the scalar test itself (its clamp). Every triangle of a group
 * is tested against the t the group started with, and the hits are then
 * taken in triangle order: the nearest, ties to the lower id, as one at a
 * time (a farther hit loses either way). */
#if !defined(__OPENCL_VERSION__) || (defined(RTCD_CL_LEAF4) && RTCD_CL_LEAF4)
#define RTCD_LEAF4 1
RTCD_INLINE void leaf_first_hit4(const rtcd_bvh_view* bvh, rtcd_u32 prims, rtcd_v3 org, rtcd_v3 dir, float tmin,
                                 rtcd_u32 skip_vertex, rtcd_tri_hit* best)
{
    rtcd_u32 first = prims >> RTCD_BVH_LEAF_BITS, end = first + (prims & RTCD_BVH_MAX_LEAF_SIZE);
    const rtcd_f4 dx = f4_splat(dir.x), dy = f4_splat(dir.y), dz = f4_splat(dir.z);
    const rtcd_f4 dd = f4_splat(v3_dot(dir, dir));
    for (rtcd_u32 k = first; k < end; k += 4) {
        /* Lanes past the leaf repeat its last triangle and are masked off. */
        const RTCD_GLOBAL float* q[4];
        rtcd_u32 lanes = end - k < 4 ? end - k : 4;
        for (rtcd_u32 j = 0; j < 4; ++j) q[j] = bvh->tris + 9 * (k + (j < lanes ? j : lanes - 1));
        rtcd_f4 c[9]; /* corner coordinate k of the four triangles */
#if defined(__SSE2__) && !defined(__OPENCL_VERSION__)
        /* Two 4 x 4 transposes of each record's first eight floats. */
        for (int h = 0; h < 2; ++h) {
            __m128 r0 = _mm_loadu_ps(q[0] + 4 * h), r1 = _mm_loadu_ps(q[1] + 4 * h), r2 = _mm_loadu_ps(q[2] + 4 * h),
                   r3 = _mm_loadu_ps(q[3] + 4 * h);
            _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
            c[4 * h] = r0, c[4 * h + 1] = r1, c[4 * h + 2] = r2, c[4 * h + 3] = r3;
        }
        c[8] = f4_set(q[0][8], q[1][8], q[2][8], q[3][8]);
#else
        for (int h = 0; h < 9; ++h) c[h] = f4_set(q[0][h], q[1][h], q[2][h], q[3][h]);
#endif
        rtcd_f4 p0x = c[0], p0y = c[1], p0z = c[2];
        rtcd_f4 e1x = f4_sub(c[3], p0x), e1y = f4_sub(c[4], p0y), e1z = f4_sub(c[5], p0z);
        rtcd_f4 e2x = f4_sub(c[6], p0x), e2y = f4_sub(c[7], p0y), e2z = f4_sub(c[8], p0z);
        /* pv = dir x e2, det = e1 . pv, scale2 = (dir . dir)(e1 . e1)(e2 . e2) */
        rtcd_f4 pvx = f4_sub(f4_mul(dy, e2z), f4_mul(dz, e2y)), pvy = f4_sub(f4_mul(dz, e2x), f4_mul(dx, e2z)),
                pvz = f4_sub(f4_mul(dx, e2y), f4_mul(dy, e2x));
        rtcd_f4 det = f4_add(f4_add(f4_mul(e1x, pvx), f4_mul(e1y, pvy)), f4_mul(e1z, pvz));
        rtcd_f4 ee1 = f4_add(f4_add(f4_mul(e1x, e1x), f4_mul(e1y, e1y)), f4_mul(e1z, e1z));
        rtcd_f4 ee2 = f4_add(f4_add(f4_mul(e2x, e2x), f4_mul(e2y, e2y)), f4_mul(e2z, e2z));
        rtcd_f4 scale2 = f4_mul(f4_mul(dd, ee1), ee2), det2 = f4_mul(det, det);
        rtcd_u32 ok = f4_gt_mask(det2, f4_mul(f4_splat(RTCD_PARALLEL_SIN2), scale2)) & ((1u << lanes) - 1u);
        if (!ok) continue;
        rtcd_f4 inv = f4_div(f4_splat(1.0f), det);
        rtcd_f4 tvx = f4_sub(f4_splat(org.x), p0x), tvy = f4_sub(f4_splat(org.y), p0y),
                tvz = f4_sub(f4_splat(org.z), p0z);
        rtcd_f4 u = f4_mul(f4_add(f4_add(f4_mul(tvx, pvx), f4_mul(tvy, pvy)), f4_mul(tvz, pvz)), inv);
        const rtcd_f4 lo = f4_splat(-RTCD_BARY_EPS), hi = f4_splat(1.0f + RTCD_BARY_EPS);
        ok &= ~(f4_lt_mask(u, lo) | f4_gt_mask(u, hi));
        if (!ok) continue;
        /* qv = tv x e1 */
        rtcd_f4 qvx = f4_sub(f4_mul(tvy, e1z), f4_mul(tvz, e1y)), qvy = f4_sub(f4_mul(tvz, e1x), f4_mul(tvx, e1z)),
                qvz = f4_sub(f4_mul(tvx, e1y), f4_mul(tvy, e1x));
        rtcd_f4 v = f4_mul(f4_add(f4_add(f4_mul(dx, qvx), f4_mul(dy, qvy)), f4_mul(dz, qvz)), inv);
        ok &= ~(f4_lt_mask(v, lo) | f4_gt_mask(f4_add(u, v), hi));
        if (!ok) continue;
        rtcd_f4 t = f4_mul(f4_add(f4_add(f4_mul(e2x, qvx), f4_mul(e2y, qvy)), f4_mul(e2z, qvz)), inv);
        rtcd_u32 grazing = ok & f4_le_mask(det2, f4_mul(f4_splat(RTCD_GRAZING_SIN2), scale2));
        ok &= ~grazing & f4_ge_mask(t, f4_splat(tmin)) & f4_le_mask(t, f4_splat(best->t));
        if (!(ok | grazing)) continue;
        float tt[4], uu[4], vv[4];
        f4_store(t, tt);
        f4_store(u, uu);
        f4_store(v, vv);
        for (rtcd_u32 j = 0; j < lanes; ++j) {
            if (!((ok | grazing) >> j & 1u)) continue;
            float th = tt[j], uh = uu[j], vh = vv[j];
            if (grazing >> j & 1u) {
                const RTCD_GLOBAL float* p = q[j];
                if (!ray_triangle(org, dir, v3(p[0], p[1], p[2]), v3(p[3], p[4], p[5]), v3(p[6], p[7], p[8]), tmin,
                                  best->t, &th, &uh, &vh))
                    continue;
            }
            offer_hit(bvh, bvh->tri_ids[k + j], th, uh, vh, skip_vertex, best);
        }
    }
}
#endif

/* Stackless first hit: walks the escape links, no per-ray memory (GPU path). */
RTCD_INLINE rtcd_tri_hit bvh_first_hit_stackless(const rtcd_bvh_view* bvh, rtcd_v3 org, rtcd_v3 dir,
                                                 float tmin, float tmax, rtcd_u32 skip_vertex)
{
    rtcd_tri_hit best;
    best.tri = RTCD_INVALID;
    best.t = tmax;
    best.u = best.v = 0.0f;
    rtcd_v3 inv = safe_reciprocal(dir);
    rtcd_u32 i = 0;
    while (i < bvh->node_count) {
        const RTCD_GLOBAL rtcd_bvh_node* n = bvh->nodes + i;
        float t_enter;
        if (!ray_aabb(org, inv, v3(n->lo[0], n->lo[1], n->lo[2]), v3(n->hi[0], n->hi[1], n->hi[2]), tmin,
                      best.t, &t_enter)) {
            i = n->escape;
            continue;
        }
        if (n->prims != 0) {
            leaf_first_hit(bvh, n->prims, org, dir, tmin, skip_vertex, &best);
            i = n->escape;
        } else {
            i = i + 1;
        }
    }
    return best;
}

/* Ordered first hit with a small stack: nearer child first (CPU path). Same
 * answer as the stackless walk. */
RTCD_INLINE rtcd_tri_hit bvh_first_hit(const rtcd_bvh_view* bvh, rtcd_v3 org, rtcd_v3 dir, float tmin,
                                       float tmax, rtcd_u32 skip_vertex)
{
    rtcd_tri_hit best;
    best.tri = RTCD_INVALID;
    best.t = tmax;
    best.u = best.v = 0.0f;
    if (bvh->node_count == 0) return best;
    rtcd_v3 inv = safe_reciprocal(dir);
    rtcd_u32 stack[RTCD_BVH_STACK_SIZE];
    float stack_t[RTCD_BVH_STACK_SIZE];
    int sp = 0;
    float t_root;
    if (!ray_aabb(org, inv, v3(bvh->nodes[0].lo[0], bvh->nodes[0].lo[1], bvh->nodes[0].lo[2]),
                  v3(bvh->nodes[0].hi[0], bvh->nodes[0].hi[1], bvh->nodes[0].hi[2]), tmin, tmax, &t_root))
        return best;
    stack[sp] = 0;
    stack_t[sp] = t_root;
    ++sp;
    while (sp > 0) {
        --sp;
        if (stack_t[sp] > best.t) continue;
        rtcd_u32 i = stack[sp];
        const RTCD_GLOBAL rtcd_bvh_node* n = bvh->nodes + i;
        while (n->prims == 0) {
            rtcd_u32 l = i + 1, r = bvh->nodes[i + 1].escape;
            const RTCD_GLOBAL rtcd_bvh_node* nl = bvh->nodes + l;
            const RTCD_GLOBAL rtcd_bvh_node* nr = bvh->nodes + r;
            float tl, tr;
            int hl = ray_aabb(org, inv, v3(nl->lo[0], nl->lo[1], nl->lo[2]), v3(nl->hi[0], nl->hi[1], nl->hi[2]),
                              tmin, best.t, &tl);
            int hr = ray_aabb(org, inv, v3(nr->lo[0], nr->lo[1], nr->lo[2]), v3(nr->hi[0], nr->hi[1], nr->hi[2]),
                              tmin, best.t, &tr);
            if (hl && hr) {
                rtcd_u32 near_i = tl <= tr ? l : r, far_i = tl <= tr ? r : l;
                float far_t = tl <= tr ? tr : tl;
                if (sp < RTCD_BVH_STACK_SIZE) {
                    stack[sp] = far_i;
                    stack_t[sp] = far_t;
                    ++sp;
                }
                i = near_i;
            } else if (hl) {
                i = l;
            } else if (hr) {
                i = r;
            } else {
                break;
            }
            n = bvh->nodes + i;
        }
        if (n->prims != 0) leaf_first_hit(bvh, n->prims, org, dir, tmin, skip_vertex, &best);
    }
    return best;
}

/* Ordered first hit through the 4-wide copy (nodes4[0] is the root, which
 * has inner children; a tree without a copy takes bvh_first_hit): ray_aabb
 * for four children at once, hit children nearest first, leaves tested at
 * once (best.t shrinks early), the farther inner children stacked. The
 * same answer as every walk here: the nearest hit, ties to the lower id. */
RTCD_INLINE rtcd_tri_hit bvh4_first_hit(const RTCD_GLOBAL rtcd_bvh4_node* nodes4, const rtcd_bvh_view* bvh,
                                        rtcd_v3 org, rtcd_v3 dir, float tmin, float tmax, rtcd_u32 skip_vertex)
{
    rtcd_tri_hit best;
    best.tri = RTCD_INVALID;
    best.t = tmax;
    best.u = best.v = 0.0f;
    rtcd_v3 inv = safe_reciprocal(dir);
    const rtcd_f4 ox = f4_splat(org.x), oy = f4_splat(org.y), oz = f4_splat(org.z);
    const rtcd_f4 ix = f4_splat(inv.x), iy = f4_splat(inv.y), iz = f4_splat(inv.z);
    const rtcd_f4 vtmin = f4_splat(tmin);
    rtcd_i32 stack[RTCD_BVH4_STACK_SIZE];
    float stack_t[RTCD_BVH4_STACK_SIZE];
    int sp = 0;
    rtcd_i32 id = 0;
    for (;;) {
        const RTCD_GLOBAL rtcd_bvh4_node* n = nodes4 + id;
        rtcd_f4 tx0 = f4_slab(f4_load(n->lo[0]), ox, ix), tx1 = f4_slab(f4_load(n->hi[0]), ox, ix);
        rtcd_f4 ty0 = f4_slab(f4_load(n->lo[1]), oy, iy), ty1 = f4_slab(f4_load(n->hi[1]), oy, iy);
        rtcd_f4 tz0 = f4_slab(f4_load(n->lo[2]), oz, iz), tz1 = f4_slab(f4_load(n->hi[2]), oz, iz);
        rtcd_f4 t0 = f4_max(f4_max(f4_min(tx0, tx1), f4_min(ty0, ty1)), f4_max(f4_min(tz0, tz1), vtmin));
        rtcd_f4 t1 = f4_min(f4_min(f4_max(tx0, tx1), f4_max(ty0, ty1)), f4_min(f4_max(tz0, tz1), f4_splat(best.t)));
        rtcd_u32 mask = f4_le_mask(t0, t1) & ((1u << n->count) - 1u);
        float tn[4];
        f4_store(t0, tn);
        int order[4], m = 0;
        for (int k = 0; k < 4; ++k)
            if (mask & (1u << k)) order[m++] = k;
        for (int a = 1; a < m; ++a)
            for (int b = a; b > 0 && tn[order[b]] < tn[order[b - 1]]; --b) {
                int tmp = order[b];
                order[b] = order[b - 1];
                order[b - 1] = tmp;
            }
        rtcd_i32 next = -1;
        int later[4], n_later = 0;
        for (int k = 0; k < m; ++k) {
            rtcd_i32 c = n->child[order[k]];
            if (tn[order[k]] > best.t) break; /* the rest are farther */
#ifdef RTCD_LEAF4
            if (c < 0) leaf_first_hit4(bvh, (rtcd_u32)(-1 - c), org, dir, tmin, skip_vertex, &best);
#else
            if (c < 0) leaf_first_hit(bvh, (rtcd_u32)(-1 - c), org, dir, tmin, skip_vertex, &best);
#endif
            else if (next < 0) next = c;
            else later[n_later++] = order[k];
        }
        /* Farthest pushed first, so pops come nearest first. */
        for (int k = n_later - 1; k >= 0; --k) {
            stack[sp] = n->child[later[k]];
            stack_t[sp++] = tn[later[k]];
        }
        if (next >= 0) {
            id = next;
            continue;
        }
        while (sp > 0 && stack_t[sp - 1] > best.t) --sp;
        if (sp == 0) break;
        id = stack[--sp];
    }
    return best;
}

/* Is there any hit with t in [tmin, tmax)? Early exit (the Hermann self test). */
RTCD_INLINE int bvh_any_hit(const rtcd_bvh_view* bvh, rtcd_v3 org, rtcd_v3 dir, float tmin, float tmax,
                            rtcd_u32 skip_vertex)
{
    rtcd_v3 inv = safe_reciprocal(dir);
    rtcd_u32 i = 0;
    while (i < bvh->node_count) {
        const RTCD_GLOBAL rtcd_bvh_node* n = bvh->nodes + i;
        float t_enter;
        if (!ray_aabb(org, inv, v3(n->lo[0], n->lo[1], n->lo[2]), v3(n->hi[0], n->hi[1], n->hi[2]), tmin, tmax,
                      &t_enter)) {
            i = n->escape;
            continue;
        }
        if (n->prims == 0) {
            i = i + 1;
            continue;
        }
        rtcd_u32 first = n->prims >> RTCD_BVH_LEAF_BITS, count = n->prims & RTCD_BVH_MAX_LEAF_SIZE;
        for (rtcd_u32 k = first; k < first + count; ++k) {
            const RTCD_GLOBAL float* p = bvh->tris + 9 * k;
            float t, u, v;
            if (ray_triangle(org, dir, v3(p[0], p[1], p[2]), v3(p[3], p[4], p[5]), v3(p[6], p[7], p[8]), tmin,
                             tmax, &t, &u, &v) &&
                t < tmax &&
                !(skip_vertex != RTCD_INVALID && tri_uses_vertex(bvh->indices, bvh->tri_ids[k], skip_vertex)))
                return 1;
        }
        i = n->escape;
    }
    return 0;
}

/* The paper's "basic" traversal: every triangle of an indexed mesh, same
 * tie-break as the BVH walks (the reference they are tested against). */
RTCD_INLINE rtcd_tri_hit brute_first_hit(const RTCD_GLOBAL float* vertices, const RTCD_GLOBAL rtcd_u32* indices,
                                         rtcd_u32 tri_count, rtcd_v3 org, rtcd_v3 dir, float tmin, float tmax,
                                         rtcd_u32 skip_vertex)
{
    rtcd_tri_hit best;
    best.tri = RTCD_INVALID;
    best.t = tmax;
    best.u = best.v = 0.0f;
    for (rtcd_u32 t = 0; t < tri_count; ++t) {
        float th, u, w;
        if (!ray_triangle(org, dir, v3_load(vertices + 3 * indices[3 * t]), v3_load(vertices + 3 * indices[3 * t + 1]),
                          v3_load(vertices + 3 * indices[3 * t + 2]), tmin, best.t, &th, &u, &w))
            continue;
        if (skip_vertex != RTCD_INVALID && tri_uses_vertex(indices, t, skip_vertex)) continue;
        if (hit_is_better(th, t, &best)) {
            best.tri = t;
            best.t = th;
            best.u = u;
            best.v = w;
        }
    }
    return best;
}

#endif
