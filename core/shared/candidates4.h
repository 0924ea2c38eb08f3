/* pair_is_candidate (shared/pair.h) for four caster vertices at once, in
 * f4.h's vectors (OpenCL's float4; SSE in C): xf_point, grid_may_contain
 * and grid_may_be_near, each operation as the scalar code does it and in
 * its order, so every lane's answer is the scalar one (test_candidates
 * compares them). The CPU reference's standard pass tests its clusters'
 * vertices with it (mark_candidates, pair_candidates_of4); the kernels on
 * CPU devices (RTCD_CL_SWEEP4, cl_devices.c) skip the vertices it turns
 * down before pair_sweep_vertex, which would give up on them
 * (pair_candidates4). Scalar, the predictive pass's near test costs six
 * divisions a vertex. */
#ifndef RTCD_SHARED_CANDIDATES4_H
#define RTCD_SHARED_CANDIDATES4_H

#include "f4.h"
#include "pair.h"

/* Bit k set: caster vertex vk (3 floats, caster's frame), placed in the
 * target's frame by x, is a candidate; bits past count (1..4) are clear
 * (their lanes may repeat a vertex). */
RTCD_INLINE rtcd_u32 pair_candidates_at4(const rtcd_pair_ctx* c, const rtcd_mesh_view* target, const rtcd_xform* x,
                                         const RTCD_GLOBAL float* v0, const RTCD_GLOBAL float* v1,
                                         const RTCD_GLOBAL float* v2, const RTCD_GLOBAL float* v3, rtcd_u32 count)
{
    const rtcd_u32 maybe = (1u << count) - 1u;
    rtcd_f4 px = f4_set(v0[0], v1[0], v2[0], v3[0]);
    rtcd_f4 py = f4_set(v0[1], v1[1], v2[1], v3[1]);
    rtcd_f4 pz = f4_set(v0[2], v1[2], v2[2], v3[2]);
    /* xf_point: (r0 x + r1 y) + r2 z, then + t. */
    rtcd_f4 tx = f4_add(f4_add(f4_add(f4_mul(f4_splat(x->r[0]), px), f4_mul(f4_splat(x->r[1]), py)),
                               f4_mul(f4_splat(x->r[2]), pz)),
                        f4_splat(x->t[0]));
    rtcd_f4 ty = f4_add(f4_add(f4_add(f4_mul(f4_splat(x->r[3]), px), f4_mul(f4_splat(x->r[4]), py)),
                               f4_mul(f4_splat(x->r[5]), pz)),
                        f4_splat(x->t[1]));
    rtcd_f4 tz = f4_add(f4_add(f4_add(f4_mul(f4_splat(x->r[6]), px), f4_mul(f4_splat(x->r[7]), py)),
                               f4_mul(f4_splat(x->r[8]), pz)),
                        f4_splat(x->t[2]));
    const rtcd_f4 inv_x = f4_splat(target->grid_inv.x), inv_y = f4_splat(target->grid_inv.y),
                  inv_z = f4_splat(target->grid_inv.z);
    rtcd_f4 fx = f4_mul(f4_sub(tx, f4_splat(target->grid_lo.x)), inv_x);
    rtcd_f4 fy = f4_mul(f4_sub(ty, f4_splat(target->grid_lo.y)), inv_y);
    rtcd_f4 fz = f4_mul(f4_sub(tz, f4_splat(target->grid_lo.z)), inv_z);
    /* The nearest cell (always in the grid): the point's own in the grid box,
     * the same index there as the unclamped coordinates give. */
    const rtcd_f4 zero = f4_splat(0.0f), n = f4_splat((float)RTCD_GRID_N);
    const rtcd_f4 top = f4_splat((float)RTCD_NEAR_GRID_N - 0.5f);
    rtcd_i4 ix = f4_trunc(f4_min(f4_max(fx, zero), top)), iy = f4_trunc(f4_min(f4_max(fy, zero), top)),
            iz = f4_trunc(f4_min(f4_max(fz, zero), top));
    int cx[4], cy[4], cz[4];
    i4_store(ix, cx);
    i4_store(iy, cy);
    i4_store(iz, cz);
    /* grid_may_contain: the cell's occupancy bit, in the grid box only. */
    rtcd_u32 in = f4_ge_mask(fx, zero) & f4_ge_mask(fy, zero) & f4_ge_mask(fz, zero) & f4_lt_mask(fx, n) &
                  f4_lt_mask(fy, n) & f4_lt_mask(fz, n) & maybe;
    rtcd_u32 out = 0u;
    for (rtcd_u32 k = 0; in && k < 4u; ++k) {
        if (!((in >> k) & 1u)) continue;
        rtcd_u32 i = ((rtcd_u32)cz[k] * RTCD_GRID_N + (rtcd_u32)cy[k]) * RTCD_GRID_N + (rtcd_u32)cx[k];
        out |= (rtcd_u32)((target->solid[i >> 3] >> (i & 7u)) & 1u) << k;
    }
    if (!c->predict_pass) return out;
    /* grid_may_be_near: the distance to the grid box first (0 in it). */
    const float dist = c->extension;
    const rtcd_f4 nn = f4_splat((float)RTCD_NEAR_GRID_N);
    rtcd_f4 bx = f4_div(f4_sub(fx, f4_min(f4_max(fx, zero), nn)), inv_x);
    rtcd_f4 by = f4_div(f4_sub(fy, f4_min(f4_max(fy, zero), nn)), inv_y);
    rtcd_f4 bz = f4_div(f4_sub(fz, f4_min(f4_max(fz, zero), nn)), inv_z);
    rtcd_f4 b2 = f4_add(f4_add(f4_mul(bx, bx), f4_mul(by, by)), f4_mul(bz, bz));
    rtcd_u32 todo = ~f4_gt_mask(b2, f4_splat(dist * dist)) & maybe & ~out;
    if (!todo) return out;
    float steps[4];
    for (rtcd_u32 k = 0; k < 4u; ++k)
        steps[k] = (float)target->near[((rtcd_u32)cz[k] * RTCD_NEAR_GRID_N + (rtcd_u32)cy[k]) * RTCD_NEAR_GRID_N +
                                      (rtcd_u32)cx[k]];
    rtcd_f4 centre = f4_mul(f4_set(steps[0], steps[1], steps[2], steps[3]),
                            f4_splat(target->min_cell / RTCD_NEAR_STEPS));
    rtcd_f4 gap = f4_sub(centre, f4_splat(dist)); /* near unless |p - centre| < gap */
    const rtcd_f4 mid = f4_splat(0.5f); /* a cell's centre */
    rtcd_f4 dx = f4_div(f4_sub(fx, f4_add(i4_float(ix), mid)), inv_x);
    rtcd_f4 dy = f4_div(f4_sub(fy, f4_add(i4_float(iy), mid)), inv_y);
    rtcd_f4 dz = f4_div(f4_sub(fz, f4_add(i4_float(iz), mid)), inv_z);
    rtcd_f4 d2 = f4_add(f4_add(f4_mul(dx, dx), f4_mul(dy, dy)), f4_mul(dz, dz));
    rtcd_u32 near_ok = f4_le_mask(gap, zero) | f4_ge_mask(d2, f4_mul(gap, gap));
    return out | (near_ok & todo);
}

/* Caster vertices first .. first + count - 1 (the kernels' sweep). Missing
 * lanes repeat the first vertex (nothing read past the last). */
RTCD_INLINE rtcd_u32 pair_candidates4(const rtcd_pair_ctx* c, const rtcd_mesh_view* target, const rtcd_xform* x,
                                      const RTCD_GLOBAL float* vertices, rtcd_u32 first, rtcd_u32 count)
{
    const RTCD_GLOBAL float* v0 = vertices + 3u * first;
    return pair_candidates_at4(c, target, x, v0, v0 + (count > 1u ? 3u : 0u), v0 + (count > 2u ? 6u : 0u),
                               v0 + (count > 3u ? 9u : 0u), count);
}

/* Caster vertices ids[0 .. count) (the CPU's clusters). */
RTCD_INLINE rtcd_u32 pair_candidates_of4(const rtcd_pair_ctx* c, const rtcd_mesh_view* target, const rtcd_xform* x,
                                         const RTCD_GLOBAL float* vertices, const rtcd_u32* ids, rtcd_u32 count)
{
    return pair_candidates_at4(c, target, x, vertices + 3u * ids[0], vertices + 3u * ids[count > 1u ? 1u : 0u],
                               vertices + 3u * ids[count > 2u ? 2u : 0u], vertices + 3u * ids[count > 3u ? 3u : 0u],
                               count);
}

#endif
