/* Geometry shared by the CPU reference and the OpenCL kernels: this header
 * compiles as C11 and as OpenCL C 1.2, so both run the same arithmetic.
 * No library calls beyond sqrt/fabs/fmin/fmax, which both languages have. */
#ifndef RTCD_SHARED_GEOM_H
#define RTCD_SHARED_GEOM_H

#ifdef __OPENCL_VERSION__
#define RTCD_INLINE inline
#define RTCD_GLOBAL __global
typedef uint rtcd_u32;
#else
#include <math.h>
#include <stdint.h>
#define RTCD_INLINE static inline
#define RTCD_GLOBAL
typedef uint32_t rtcd_u32;
#endif

#define RTCD_INVALID 0xffffffffu
#define RTCD_FLT_MAX 3.402823466e+38f

typedef struct rtcd_v3 {
    float x, y, z;
} rtcd_v3;

RTCD_INLINE rtcd_v3 v3(float x, float y, float z) { rtcd_v3 r; r.x = x; r.y = y; r.z = z; return r; }
RTCD_INLINE rtcd_v3 v3_load(const RTCD_GLOBAL float* p) { return v3(p[0], p[1], p[2]); }
RTCD_INLINE rtcd_v3 v3_add(rtcd_v3 a, rtcd_v3 b) { return v3(a.x + b.x, a.y + b.y, a.z + b.z); }
RTCD_INLINE rtcd_v3 v3_sub(rtcd_v3 a, rtcd_v3 b) { return v3(a.x - b.x, a.y - b.y, a.z - b.z); }
RTCD_INLINE rtcd_v3 v3_scale(rtcd_v3 a, float s) { return v3(a.x * s, a.y * s, a.z * s); }
RTCD_INLINE rtcd_v3 v3_neg(rtcd_v3 a) { return v3(-a.x, -a.y, -a.z); }
RTCD_INLINE float v3_dot(rtcd_v3 a, rtcd_v3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
RTCD_INLINE rtcd_v3 v3_cross(rtcd_v3 a, rtcd_v3 b)
{
    return v3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
RTCD_INLINE float v3_length(rtcd_v3 a) { return sqrt(v3_dot(a, a)); }
RTCD_INLINE rtcd_v3 v3_normalize(rtcd_v3 a)
{
    float len = v3_length(a);
    return len > 0.0f ? v3_scale(a, 1.0f / len) : a;
}
RTCD_INLINE rtcd_v3 v3_min(rtcd_v3 a, rtcd_v3 b) { return v3(fmin(a.x, b.x), fmin(a.y, b.y), fmin(a.z, b.z)); }
RTCD_INLINE rtcd_v3 v3_max(rtcd_v3 a, rtcd_v3 b) { return v3(fmax(a.x, b.x), fmax(a.y, b.y), fmax(a.z, b.z)); }

/* Rigid transform: p' = R p + t, R row-major (same layout as rtcd_transform). */
typedef struct rtcd_xform {
    float r[9];
    float t[3];
} rtcd_xform;

RTCD_INLINE rtcd_v3 xf_rotate(const rtcd_xform* x, rtcd_v3 p)
{
    return v3(x->r[0] * p.x + x->r[1] * p.y + x->r[2] * p.z,
              x->r[3] * p.x + x->r[4] * p.y + x->r[5] * p.z,
              x->r[6] * p.x + x->r[7] * p.y + x->r[8] * p.z);
}
RTCD_INLINE rtcd_v3 xf_point(const rtcd_xform* x, rtcd_v3 p)
{
    return v3_add(xf_rotate(x, p), v3(x->t[0], x->t[1], x->t[2]));
}
/* inverse(a) * b: maps b's local frame into a's local frame. */
RTCD_INLINE rtcd_xform xf_relative(const rtcd_xform* a, const rtcd_xform* b)
{
    rtcd_xform out;
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) {
            out.r[3 * i + j] = a->r[0 + i] * b->r[0 + j] + a->r[3 + i] * b->r[3 + j] + a->r[6 + i] * b->r[6 + j];
        }
        float d0 = b->t[0] - a->t[0], d1 = b->t[1] - a->t[1], d2 = b->t[2] - a->t[2];
        out.t[i] = a->r[0 + i] * d0 + a->r[3 + i] * d1 + a->r[6 + i] * d2;
    }
    return out;
}

/* Möller–Trumbore with a small inclusive tolerance on the barycentrics, so a
 * ray through a shared edge or vertex hits at least one of the triangles that
 * meet there (both report the same t up to rounding; callers break ties by
 * triangle index). Returns 1 on a hit with t in [tmin, tmax]. */
#define RTCD_BARY_EPS 1e-6f
#define RTCD_GRAZING_SIN 1e-3f

RTCD_INLINE int ray_triangle(rtcd_v3 org, rtcd_v3 dir, rtcd_v3 p0, rtcd_v3 p1, rtcd_v3 p2,
                             float tmin, float tmax, float* t_out, float* u_out, float* v_out)
{
    rtcd_v3 e1 = v3_sub(p1, p0);
    rtcd_v3 e2 = v3_sub(p2, p0);
    rtcd_v3 pv = v3_cross(dir, e2);
    float det = v3_dot(e1, pv);
    /* Grazing rays (within ~0.06 degrees of the plane) are no hit: their t is
     * ill-conditioned (float error / sin(angle)) and would land outside the
     * triangle's own bounds. On a closed mesh a neighbour takes the crossing. */
    float scale2 = v3_dot(dir, dir) * v3_dot(e1, e1) * v3_dot(e2, e2); /* squared: no sqrt per test */
    if (det * det <= (RTCD_GRAZING_SIN * RTCD_GRAZING_SIN) * scale2 || !(scale2 > 0.0f)) return 0;
    float inv = 1.0f / det;
    rtcd_v3 tv = v3_sub(org, p0);
    float u = v3_dot(tv, pv) * inv;
    if (u < -RTCD_BARY_EPS || u > 1.0f + RTCD_BARY_EPS) return 0;
    rtcd_v3 qv = v3_cross(tv, e1);
    float v = v3_dot(dir, qv) * inv;
    if (v < -RTCD_BARY_EPS || u + v > 1.0f + RTCD_BARY_EPS) return 0;
    float t = v3_dot(e2, qv) * inv;
    if (!(t >= tmin && t <= tmax)) return 0;
    *t_out = t;
    *u_out = u;
    *v_out = v;
    return 1;
}

/* Slab test against an AABB with a precomputed reciprocal direction.
 * Returns 1 when [tmin, tmax] overlaps the box; *t_enter gets the entry t. */
RTCD_INLINE int ray_aabb(rtcd_v3 org, rtcd_v3 inv_dir, rtcd_v3 lo, rtcd_v3 hi,
                         float tmin, float tmax, float* t_enter)
{
    float tx0 = (lo.x - org.x) * inv_dir.x, tx1 = (hi.x - org.x) * inv_dir.x;
    float ty0 = (lo.y - org.y) * inv_dir.y, ty1 = (hi.y - org.y) * inv_dir.y;
    float tz0 = (lo.z - org.z) * inv_dir.z, tz1 = (hi.z - org.z) * inv_dir.z;
    /* fmin/fmax drop the NaN of 0 * inf (origin on a slab of a flat box). */
    float t0 = fmax(fmax(fmin(tx0, tx1), fmin(ty0, ty1)), fmax(fmin(tz0, tz1), tmin));
    float t1 = fmin(fmin(fmax(tx0, tx1), fmax(ty0, ty1)), fmin(fmax(tz0, tz1), tmax));
    /* BVH boxes are padded at build time, so a plain comparison is conservative. */
    *t_enter = t0;
    return t0 <= t1;
}

RTCD_INLINE rtcd_v3 safe_reciprocal(rtcd_v3 d)
{
    const float big = 1e30f;
    return v3(d.x != 0.0f ? 1.0f / d.x : big, d.y != 0.0f ? 1.0f / d.y : big, d.z != 0.0f ? 1.0f / d.z : big);
}

#endif
