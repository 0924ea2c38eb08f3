/* Private to rtcd: the CPU's candidate test of four caster vertices at once
 * (mark_candidates, core/narrowphase/narrowphase.c): shared/pair.h's
 * pair_is_candidate (xf_point, grid_may_contain, grid_may_be_near) in SSE,
 * each operation as the scalar code does it and in its order (no
 * contraction: the build's -ffp-contract=off), so every lane's answer is
 * the scalar one; test_candidates compares them. Scalar, the predictive
 * pass's near test costs six divisions a vertex, and most vertices get that
 * far. Without SSE2 every vertex goes to pair_is_candidate. */
#ifndef RTCD_CORE_CANDIDATES_H
#define RTCD_CORE_CANDIDATES_H

#include "shared/pair.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#include <xmmintrin.h>
#define RTCD_CANDIDATES_SSE 1
#endif

/* Cell indices by shifts: 16 cells an axis. */
_Static_assert(RTCD_GRID_N == 16 && RTCD_NEAR_GRID_N == 16, "candidates_of4: cell index by shifts of 4");

/* Bit k set: vertex ids[k] (caster frame, vertices 3 floats each), placed in
 * the target's frame by x, is a candidate (pair_is_candidate); count <= 4. */
static inline uint32_t candidates_of4(const rtcd_pair_ctx* c, const rtcd_mesh_view* target, const rtcd_xform* x,
                                      const float* vertices, const uint32_t* ids, uint32_t count)
{
#ifdef RTCD_CANDIDATES_SSE
    const uint32_t maybe = (1u << count) - 1u;
    /* Missing lanes repeat vertex 0. Built in registers (shuffles): a
     * float array read back as a vector stalls on its stores. */
    const float* v0 = vertices + 3 * ids[0];
    const float* v1 = vertices + 3 * ids[count > 1 ? 1 : 0];
    const float* v2 = vertices + 3 * ids[count > 2 ? 2 : 0];
    const float* v3 = vertices + 3 * ids[count > 3 ? 3 : 0];
    __m128 px = _mm_setr_ps(v0[0], v1[0], v2[0], v3[0]);
    __m128 py = _mm_setr_ps(v0[1], v1[1], v2[1], v3[1]);
    __m128 pz = _mm_setr_ps(v0[2], v1[2], v2[2], v3[2]);
    /* xf_point's operations in its order: the same p as the scalar path. */
    __m128 tx = _mm_add_ps(_mm_add_ps(_mm_add_ps(_mm_mul_ps(_mm_set1_ps(x->r[0]), px), _mm_mul_ps(_mm_set1_ps(x->r[1]), py)),
                                      _mm_mul_ps(_mm_set1_ps(x->r[2]), pz)),
                           _mm_set1_ps(x->t[0]));
    __m128 ty = _mm_add_ps(_mm_add_ps(_mm_add_ps(_mm_mul_ps(_mm_set1_ps(x->r[3]), px), _mm_mul_ps(_mm_set1_ps(x->r[4]), py)),
                                      _mm_mul_ps(_mm_set1_ps(x->r[5]), pz)),
                           _mm_set1_ps(x->t[1]));
    __m128 tz = _mm_add_ps(_mm_add_ps(_mm_add_ps(_mm_mul_ps(_mm_set1_ps(x->r[6]), px), _mm_mul_ps(_mm_set1_ps(x->r[7]), py)),
                                      _mm_mul_ps(_mm_set1_ps(x->r[8]), pz)),
                           _mm_set1_ps(x->t[2]));
    /* Grid coordinates as grid_may_contain and grid_may_be_near take them. */
    __m128 fx = _mm_mul_ps(_mm_sub_ps(tx, _mm_set1_ps(target->grid_lo.x)), _mm_set1_ps(target->grid_inv.x));
    __m128 fy = _mm_mul_ps(_mm_sub_ps(ty, _mm_set1_ps(target->grid_lo.y)), _mm_set1_ps(target->grid_inv.y));
    __m128 fz = _mm_mul_ps(_mm_sub_ps(tz, _mm_set1_ps(target->grid_lo.z)), _mm_set1_ps(target->grid_inv.z));
    /* grid_may_contain: the cell's occupancy bit, in the grid box only. */
    const __m128 zero = _mm_setzero_ps(), n = _mm_set1_ps((float)RTCD_GRID_N);
    __m128 inbox = _mm_and_ps(_mm_and_ps(_mm_and_ps(_mm_cmpge_ps(fx, zero), _mm_cmpge_ps(fy, zero)), _mm_cmpge_ps(fz, zero)),
                              _mm_and_ps(_mm_and_ps(_mm_cmplt_ps(fx, n), _mm_cmplt_ps(fy, n)), _mm_cmplt_ps(fz, n)));
    uint32_t out = 0, in = (uint32_t)_mm_movemask_ps(inbox) & maybe;
    if (in) {
        __m128i cell = _mm_add_epi32(_mm_slli_epi32(_mm_add_epi32(_mm_slli_epi32(_mm_cvttps_epi32(fz), 4), _mm_cvttps_epi32(fy)), 4),
                                     _mm_cvttps_epi32(fx));
        uint32_t cells[4];
        _mm_storeu_si128((__m128i*)cells, cell);
        for (uint32_t k = 0; k < 4; ++k)
            if ((in >> k) & 1u) out |= (uint32_t)((target->solid[cells[k] >> 3] >> (cells[k] & 7u)) & 1u) << k;
    }
    if (!c->predict_pass) return out;
    /* grid_may_be_near, its steps in its order. First the distance to the
     * grid box (0 in it); NaN lanes compare false, as there. */
    const float dist = c->extension;
    const __m128 inv_x = _mm_set1_ps(target->grid_inv.x), inv_y = _mm_set1_ps(target->grid_inv.y),
                 inv_z = _mm_set1_ps(target->grid_inv.z), nn = _mm_set1_ps((float)RTCD_NEAR_GRID_N);
    __m128 bx = _mm_div_ps(_mm_sub_ps(fx, _mm_min_ps(_mm_max_ps(fx, zero), nn)), inv_x);
    __m128 by = _mm_div_ps(_mm_sub_ps(fy, _mm_min_ps(_mm_max_ps(fy, zero), nn)), inv_y);
    __m128 bz = _mm_div_ps(_mm_sub_ps(fz, _mm_min_ps(_mm_max_ps(fz, zero), nn)), inv_z);
    __m128 b2 = _mm_add_ps(_mm_add_ps(_mm_mul_ps(bx, bx), _mm_mul_ps(by, by)), _mm_mul_ps(bz, bz));
    uint32_t todo = (uint32_t)_mm_movemask_ps(_mm_cmpngt_ps(b2, _mm_set1_ps(dist * dist))) & maybe & ~out;
    if (!todo) return out;
    /* The nearest cell: always in the grid, so every lane may read it. */
    const __m128 top = _mm_set1_ps((float)RTCD_NEAR_GRID_N - 0.5f);
    __m128i ix = _mm_cvttps_epi32(_mm_min_ps(_mm_max_ps(fx, zero), top));
    __m128i iy = _mm_cvttps_epi32(_mm_min_ps(_mm_max_ps(fy, zero), top));
    __m128i iz = _mm_cvttps_epi32(_mm_min_ps(_mm_max_ps(fz, zero), top));
    uint32_t cells[4];
    _mm_storeu_si128((__m128i*)cells, _mm_add_epi32(_mm_slli_epi32(_mm_add_epi32(_mm_slli_epi32(iz, 4), iy), 4), ix));
    const RTCD_GLOBAL unsigned char* near = target->near;
    __m128 centre = _mm_mul_ps(_mm_setr_ps((float)near[cells[0]], (float)near[cells[1]], (float)near[cells[2]], (float)near[cells[3]]),
                               _mm_set1_ps(target->min_cell / RTCD_NEAR_STEPS));
    __m128 gap = _mm_sub_ps(centre, _mm_set1_ps(dist));
    const __m128 half = _mm_set1_ps(0.5f);
    __m128 dx = _mm_div_ps(_mm_sub_ps(fx, _mm_add_ps(_mm_cvtepi32_ps(ix), half)), inv_x);
    __m128 dy = _mm_div_ps(_mm_sub_ps(fy, _mm_add_ps(_mm_cvtepi32_ps(iy), half)), inv_y);
    __m128 dz = _mm_div_ps(_mm_sub_ps(fz, _mm_add_ps(_mm_cvtepi32_ps(iz), half)), inv_z);
    __m128 d2 = _mm_add_ps(_mm_add_ps(_mm_mul_ps(dx, dx), _mm_mul_ps(dy, dy)), _mm_mul_ps(dz, dz));
    __m128 near_ok = _mm_or_ps(_mm_cmple_ps(gap, zero), _mm_cmpge_ps(d2, _mm_mul_ps(gap, gap)));
    return out | ((uint32_t)_mm_movemask_ps(near_ok) & todo);
#else
    uint32_t out = 0;
    for (uint32_t k = 0; k < count; ++k)
        if (pair_is_candidate(c, target, xf_point(x, v3_load(vertices + 3 * ids[k])))) out |= 1u << k;
    return out;
#endif
}

#endif
