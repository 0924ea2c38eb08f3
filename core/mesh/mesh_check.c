/* The shape check of creation and of every update (rtcd_mesh_check_shape,
 * mesh_check.h): finite coordinates, the range of validity, no
 * degenerate triangle, and a closed mesh's volume from the same cross
 * products. An update runs it on every new shape, so it has a quick path:
 * with SSE it only clears a good shape, and the scalar code looks again at
 * whatever it flags and names the failure. */
#include "mesh_check.h"

#include "hooks.h"

#include <float.h>
#include <math.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* The range of validity (rtcd_mesh.h). */
static rtcd_error check_range(const char* name, const float* v, uint32_t n)
{
    float lo[3] = {FLT_MAX, FLT_MAX, FLT_MAX}, hi[3] = {-FLT_MAX, -FLT_MAX, -FLT_MAX}, far = 0.0f;
    uint32_t far_vertex = 0;
    for (uint32_t i = 0; i < n; ++i)
        for (int k = 0; k < 3; ++k) {
            float x = v[3 * i + k], ax = x < 0.0f ? -x : x; /* finite (checked first) */
            lo[k] = x < lo[k] ? x : lo[k];
            hi[k] = x > hi[k] ? x : hi[k];
            if (ax > far) far = ax, far_vertex = i;
        }
    float extent = fmaxf(hi[0] - lo[0], fmaxf(hi[1] - lo[1], hi[2] - lo[2]));
    if (far > RTCD_MESH_MAX_COORDINATE)
        return rtcd_fail(RTCD_ERROR_MESH_OUT_OF_RANGE, "%s: vertex %u lies %g m from the origin, beyond %g m", name,
                         far_vertex, (double)far, (double)RTCD_MESH_MAX_COORDINATE);
    if (!(extent >= RTCD_MESH_MIN_EXTENT && extent <= RTCD_MESH_MAX_EXTENT))
        return rtcd_fail(RTCD_ERROR_MESH_OUT_OF_RANGE, "%s: extent %g m is outside [%g, %g] m", name, (double)extent,
                         (double)RTCD_MESH_MIN_EXTENT, (double)RTCD_MESH_MAX_EXTENT);
    if (extent < 1e-4f * far)
        return rtcd_fail(RTCD_ERROR_MESH_OUT_OF_RANGE,
                         "%s: extent %g m is below 1e-4 of its distance from the origin (%g m): move it to its origin",
                         name, (double)extent, (double)far);
    return RTCD_OK;
}

/* One triangle of the shape check: 0 when fine (its volume term added),
 * else the failure's code (the message said). */
static rtcd_error check_triangle(const char* name, const float* v, const uint32_t* idx, uint32_t t, const double ref[3],
                                 double* volume)
{
    uint32_t a = idx[3 * t], b = idx[3 * t + 1], c = idx[3 * t + 2];
    if (a == b || b == c || a == c)
        return rtcd_fail(RTCD_ERROR_MESH_DEGENERATE_TRIANGLE, "%s: triangle %u repeats a vertex (%u, %u, %u)", name, t,
                         a, b, c);
    double e1[3], e2[3], e3[3];
    for (int k = 0; k < 3; ++k) {
        e1[k] = (double)v[3 * b + k] - v[3 * a + k];
        e2[k] = (double)v[3 * c + k] - v[3 * a + k];
        e3[k] = (double)v[3 * c + k] - v[3 * b + k];
    }
    double cx = e1[1] * e2[2] - e1[2] * e2[1], cy = e1[2] * e2[0] - e1[0] * e2[2], cz = e1[0] * e2[1] - e1[1] * e2[0];
    double l1 = e1[0] * e1[0] + e1[1] * e1[1] + e1[2] * e1[2], l2 = e2[0] * e2[0] + e2[1] * e2[1] + e2[2] * e2[2],
           l3 = e3[0] * e3[0] + e3[1] * e3[1] + e3[2] * e3[2];
    double longest = l1 > l2 ? l1 : l2;
    longest = l3 > longest ? l3 : longest;
    /* Zero area up to float precision: height below ~1e-6 of the longest
     * edge (squared both sides: no square root per triangle). */
    if (cx * cx + cy * cy + cz * cz <= 1e-12 * longest * longest)
        return rtcd_fail(RTCD_ERROR_MESH_DEGENERATE_TRIANGLE, "%s: triangle %u (%u, %u, %u) has zero area", name, t, a,
                         b, c);
    *volume += (((double)v[3 * a] - ref[0]) * cx + ((double)v[3 * a + 1] - ref[1]) * cy +
                ((double)v[3 * a + 2] - ref[2]) * cz) / 6.0;
    return RTCD_OK;
}

#if defined(__SSE2__)
/* Coordinate k of two vertices as doubles, lane by lane. */
static inline __m128d pair_pd(const float* v, uint32_t i0, uint32_t i1, int k)
{
    return _mm_cvtps_pd(_mm_unpacklo_ps(_mm_load_ss(v + 3 * i0 + k), _mm_load_ss(v + 3 * i1 + k)));
}

/* check_triangle for triangles t and t + 1 at once, the same double
 * operations lane by lane; the verdicts and the volume's terms in
 * triangle order. Returns 0 when both are fine (terms added), else 1 (the
 * caller checks them one by one for the message). */
static int check_pair(const float* v, const uint32_t* idx, uint32_t t, __m128d ref[3], double* volume)
{
    const uint32_t* p = idx + 3 * t;
    if (p[0] == p[1] || p[1] == p[2] || p[0] == p[2] || p[3] == p[4] || p[4] == p[5] || p[3] == p[5]) return 1;
    __m128d A[3], e1[3], e2[3], e3[3];
    for (int k = 0; k < 3; ++k) {
        A[k] = pair_pd(v, p[0], p[3], k);
        __m128d B = pair_pd(v, p[1], p[4], k), C = pair_pd(v, p[2], p[5], k);
        e1[k] = _mm_sub_pd(B, A[k]);
        e2[k] = _mm_sub_pd(C, A[k]);
        e3[k] = _mm_sub_pd(C, B);
    }
#define MUL _mm_mul_pd
    __m128d cx = _mm_sub_pd(MUL(e1[1], e2[2]), MUL(e1[2], e2[1]));
    __m128d cy = _mm_sub_pd(MUL(e1[2], e2[0]), MUL(e1[0], e2[2]));
    __m128d cz = _mm_sub_pd(MUL(e1[0], e2[1]), MUL(e1[1], e2[0]));
#define LEN2(e) _mm_add_pd(_mm_add_pd(MUL((e)[0], (e)[0]), MUL((e)[1], (e)[1])), MUL((e)[2], (e)[2]))
    __m128d longest = _mm_max_pd(LEN2(e1), LEN2(e2)); /* l1 > l2 ? l1 : l2 */
    longest = _mm_max_pd(LEN2(e3), longest);
#undef LEN2
    __m128d area2 = _mm_add_pd(_mm_add_pd(MUL(cx, cx), MUL(cy, cy)), MUL(cz, cz));
    if (_mm_movemask_pd(_mm_cmple_pd(area2, MUL(MUL(_mm_set1_pd(1e-12), longest), longest)))) return 1;
    __m128d term = _mm_add_pd(_mm_add_pd(MUL(_mm_sub_pd(A[0], ref[0]), cx), MUL(_mm_sub_pd(A[1], ref[1]), cy)),
                              MUL(_mm_sub_pd(A[2], ref[2]), cz));
#undef MUL
    term = _mm_div_pd(term, _mm_set1_pd(6.0));
    double terms[2];
    _mm_storeu_pd(terms, term);
    *volume += terms[0];
    *volume += terms[1];
    return 0;
}

/* Three floats into lanes x, y, z (w 0): no read past the third. */
static inline __m128 load3f(const float* p)
{
    return _mm_movelh_ps(_mm_loadl_pi(_mm_setzero_ps(), (const __m64*)(const void*)p), _mm_load_ss(p + 2));
}
#endif

/* Finite coordinates, the range of validity, no degenerate triangle (indices
 * already in range): shared with rtcd_mesh_update_vertices. With SSE the
 * vertices' pass (finite, box, farthest coordinate) and the triangles'
 * (two at a time) only find that all is well, with the same operations as
 * the scalar code; anything they flag is looked at again by the scalar
 * code, which says what is wrong where (test_deform's test_check_agrees). */
rtcd_error rtcd_mesh_check_shape(const char* name, const float* v, uint32_t vertex_count, const uint32_t* idx,
                                 uint32_t triangle_count, double* volume_out)
{
    double volume = 0.0; /* rtcd_compute_volume's sum, from the same cross products (an update's inside-out check) */
    double ref[3] = {vertex_count ? v[0] : 0.0, vertex_count ? v[1] : 0.0, vertex_count ? v[2] : 0.0};
    int clean = 0;
#if defined(__SSE2__)
    {
        const __m128 abs = _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff)), big = _mm_set1_ps(FLT_MAX);
        __m128 finite = _mm_castsi128_ps(_mm_set1_epi32(-1)), lo = big, hi = _mm_set1_ps(-FLT_MAX);
        __m128 far = _mm_setzero_ps();
        for (uint32_t i = 0; i < vertex_count; ++i) {
            __m128 p = load3f(v + 3 * i), ap = _mm_and_ps(p, abs);
            finite = _mm_and_ps(finite, _mm_cmple_ps(ap, big)); /* false for NaN and infinities */
            lo = _mm_min_ps(p, lo), hi = _mm_max_ps(p, hi), far = _mm_max_ps(ap, far);
        }
        float l[4], h[4], f[4];
        _mm_storeu_ps(l, lo), _mm_storeu_ps(h, hi), _mm_storeu_ps(f, far);
        float extent = fmaxf(h[0] - l[0], fmaxf(h[1] - l[1], h[2] - l[2])), farthest = fmaxf(f[0], fmaxf(f[1], f[2]));
        clean = (_mm_movemask_ps(finite) & 7) == 7 && farthest <= RTCD_MESH_MAX_COORDINATE &&
                extent >= RTCD_MESH_MIN_EXTENT && extent <= RTCD_MESH_MAX_EXTENT && !(extent < 1e-4f * farthest);
    }
#endif
    if (!clean) {
        for (uint32_t i = 0; i < 3 * vertex_count; ++i) {
            if (!isfinite(v[i]))
                return rtcd_fail(RTCD_ERROR_MESH_NONFINITE_VERTEX,
                                 "%s: vertex %u has a non-finite coordinate (%c = %g)", name, i / 3, "xyz"[i % 3],
                                 (double)v[i]);
        }
        rtcd_error err = check_range(name, v, vertex_count);
        if (err != RTCD_OK) return err;
    }
    uint32_t t = 0;
#if defined(__SSE2__)
    __m128d ref2[3] = {_mm_set1_pd(ref[0]), _mm_set1_pd(ref[1]), _mm_set1_pd(ref[2])};
    for (; t + 2 <= triangle_count; t += 2) {
        if (!check_pair(v, idx, t, ref2, &volume)) continue;
        rtcd_error err = check_triangle(name, v, idx, t, ref, &volume);
        if (err == RTCD_OK) err = check_triangle(name, v, idx, t + 1, ref, &volume);
        if (err != RTCD_OK) return err;
    }
#endif
    for (; t < triangle_count; ++t) {
        rtcd_error err = check_triangle(name, v, idx, t, ref, &volume);
        if (err != RTCD_OK) return err;
    }
    if (volume_out) *volume_out = volume;
    return RTCD_OK;
}

