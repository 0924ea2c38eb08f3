/* Private to rtcd: the CPU's candidate test of several caster vertices at
 * once (mark_candidates, core/narrowphase/narrowphase.c). The decision stays
 * shared/pair.h's pair_is_candidate; SSE only turns down, four vertices at a
 * time, the ones it certainly refuses: outside the target's grid box (and,
 * in a predictive pass, farther than the extension from it). That first
 * test is most of the refusals and, scalar, three divisions a vertex. The
 * rest go to pair_is_candidate as before, so the answer is the same bits.
 * Without SSE2 every vertex goes to pair_is_candidate. */
#ifndef RTCD_CORE_CANDIDATES_H
#define RTCD_CORE_CANDIDATES_H

#include "shared/pair.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#include <xmmintrin.h>
#define RTCD_CANDIDATES_SSE 1
#endif

/* Lanes of the box prefilter may err only towards "maybe": its limit is a
 * hair wider than grid_may_be_near's, and the in-box test a hair longer
 * than grid_may_contain's (cell units). */
#define RTCD_CANDIDATES_SLACK (1.0f / 4096.0f)

/* Bit k set: vertex ids[k] (caster frame, vertices 3 floats each), placed in
 * the target's frame by x, is a candidate (pair_is_candidate); count <= 4. */
static inline uint32_t candidates_of4(const rtcd_pair_ctx* c, const rtcd_mesh_view* target, const rtcd_xform* x,
                                      const float* vertices, const uint32_t* ids, uint32_t count)
{
    uint32_t maybe = (1u << count) - 1u;
#ifdef RTCD_CANDIDATES_SSE
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
    __m128 keep;
    if (c->predict_pass) {
        /* grid_may_be_near's first test, the distance to the grid box; a
         * point in the box has 0. NaN lanes compare false and are kept. */
        const __m128 zero = _mm_setzero_ps(), n = _mm_set1_ps((float)RTCD_NEAR_GRID_N);
        __m128 bx = _mm_div_ps(_mm_sub_ps(fx, _mm_min_ps(_mm_max_ps(fx, zero), n)), _mm_set1_ps(target->grid_inv.x));
        __m128 by = _mm_div_ps(_mm_sub_ps(fy, _mm_min_ps(_mm_max_ps(fy, zero), n)), _mm_set1_ps(target->grid_inv.y));
        __m128 bz = _mm_div_ps(_mm_sub_ps(fz, _mm_min_ps(_mm_max_ps(fz, zero), n)), _mm_set1_ps(target->grid_inv.z));
        __m128 d2 = _mm_add_ps(_mm_add_ps(_mm_mul_ps(bx, bx), _mm_mul_ps(by, by)), _mm_mul_ps(bz, bz));
        float lim = c->extension * c->extension;
        lim += lim * RTCD_CANDIDATES_SLACK;
        keep = _mm_cmpngt_ps(d2, _mm_set1_ps(lim));
    } else {
        /* grid_may_contain's box test; NaN lanes compare false, as there. */
        const __m128 lo = _mm_set1_ps(-RTCD_CANDIDATES_SLACK), hi = _mm_set1_ps((float)RTCD_GRID_N + RTCD_CANDIDATES_SLACK);
        keep = _mm_and_ps(_mm_and_ps(_mm_and_ps(_mm_cmpge_ps(fx, lo), _mm_cmpge_ps(fy, lo)), _mm_cmpge_ps(fz, lo)),
                          _mm_and_ps(_mm_and_ps(_mm_cmplt_ps(fx, hi), _mm_cmplt_ps(fy, hi)), _mm_cmplt_ps(fz, hi)));
    }
    maybe &= (uint32_t)_mm_movemask_ps(keep);
#endif
    uint32_t out = 0;
    for (uint32_t k = 0; k < count; ++k) {
        if (!((maybe >> k) & 1u)) continue;
        if (pair_is_candidate(c, target, xf_point(x, v3_load(vertices + 3 * ids[k])))) out |= 1u << k;
    }
    return out;
}

#endif
