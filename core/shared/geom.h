/* Geometry shared by the CPU reference and the OpenCL kernels: this header
 * compiles as C11 and as OpenCL C 1.2, so both run the same arithmetic.
 * No library calls beyond sqrt and fabs, which both languages have. */
#ifndef RTCD_SHARED_GEOM_H
#define RTCD_SHARED_GEOM_H

#ifdef __OPENCL_VERSION__
/* Same arithmetic as the CPU build (-ffp-contract=off): no fused multiply-add. */
#pragma OPENCL FP_CONTRACT OFF
#define RTCD_INLINE inline
#define RTCD_GLOBAL __global
typedef uint rtcd_u32;
#define rtcd_minf(a, b) fmin(a, b)
#define rtcd_maxf(a, b) fmax(a, b)
#else
#include <math.h>
#include <stdint.h>
#define RTCD_INLINE static inline
#define RTCD_GLOBAL
typedef uint32_t rtcd_u32;
/* C's fmin/fmax are double library calls: 40 % of a ray's time. Operands are never NaN here. */
static inline float rtcd_minf(float a, float b) { return a < b ? a : b; }
static inline float rtcd_maxf(float a, float b) { return a > b ? a : b; }
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
RTCD_INLINE rtcd_v3 v3_min(rtcd_v3 a, rtcd_v3 b) { return v3(rtcd_minf(a.x, b.x), rtcd_minf(a.y, b.y), rtcd_minf(a.z, b.z)); }
RTCD_INLINE rtcd_v3 v3_max(rtcd_v3 a, rtcd_v3 b) { return v3(rtcd_maxf(a.x, b.x), rtcd_maxf(a.y, b.y), rtcd_maxf(a.z, b.z)); }

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
/* inverse(a) * b into *out: maps b's local frame into a's local frame, from
 * rotations and translations wherever they are (xf_relative's, or the public
 * rtcd_transform's read in place: no copy through the stack). Written in
 * place on the hot paths: a value returned was built in a temporary and
 * copied with vector loads over its scalar stores (a store-forwarding stall;
 * rtcd_track_plan's largest cost at 8192 blobs). */
RTCD_INLINE void xf_relative_into(rtcd_xform* out, const float* ra, const float* ta, const float* rb, const float* tb)
{
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) {
            out->r[3 * i + j] = ra[0 + i] * rb[0 + j] + ra[3 + i] * rb[3 + j] + ra[6 + i] * rb[6 + j];
        }
        float d0 = tb[0] - ta[0], d1 = tb[1] - ta[1], d2 = tb[2] - ta[2];
        out->t[i] = ra[0 + i] * d0 + ra[3 + i] * d1 + ra[6 + i] * d2;
    }
}

RTCD_INLINE rtcd_xform xf_relative(const rtcd_xform* a, const rtcd_xform* b)
{
    rtcd_xform out;
    xf_relative_into(&out, a->r, a->t, b->r, b->t);
    return out;
}

/* The inverse rigid transform. */
RTCD_INLINE rtcd_xform xf_inverse(const rtcd_xform* x)
{
    rtcd_xform out;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) out.r[3 * i + j] = x->r[3 * j + i];
    /* From x's own rows (the same products as out.r's): reading out.r back
     * made the compiler load a vector over scalars it had just stored. */
    for (int i = 0; i < 3; ++i) out.t[i] = -(x->r[i] * x->t[0] + x->r[3 + i] * x->t[1] + x->r[6 + i] * x->t[2]);
    return out;
}

/* The ray's parameter interval inside the box [lo, hi]; inv_dir from
 * safe_reciprocal (always finite, so no 0 * inf NaN can appear). */
RTCD_INLINE void ray_box_interval(rtcd_v3 org, rtcd_v3 inv_dir, rtcd_v3 lo, rtcd_v3 hi, float* t0, float* t1)
{
    float tx0 = (lo.x - org.x) * inv_dir.x, tx1 = (hi.x - org.x) * inv_dir.x;
    float ty0 = (lo.y - org.y) * inv_dir.y, ty1 = (hi.y - org.y) * inv_dir.y;
    float tz0 = (lo.z - org.z) * inv_dir.z, tz1 = (hi.z - org.z) * inv_dir.z;
    *t0 = rtcd_maxf(rtcd_maxf(rtcd_minf(tx0, tx1), rtcd_minf(ty0, ty1)), rtcd_minf(tz0, tz1));
    *t1 = rtcd_minf(rtcd_minf(rtcd_maxf(tx0, tx1), rtcd_maxf(ty0, ty1)), rtcd_maxf(tz0, tz1));
}

/* Slab test against an AABB. Returns 1 when [tmin, tmax] overlaps the box;
 * *t_enter gets the entry t. BVH boxes are padded at build time, so a plain
 * comparison is conservative. */
RTCD_INLINE int ray_aabb(rtcd_v3 org, rtcd_v3 inv_dir, rtcd_v3 lo, rtcd_v3 hi, float tmin, float tmax,
                         float* t_enter)
{
    float t0, t1;
    ray_box_interval(org, inv_dir, lo, hi, &t0, &t1);
    t0 = rtcd_maxf(t0, tmin);
    t1 = rtcd_minf(t1, tmax);
    *t_enter = t0;
    return t0 <= t1;
}

/* Direction components below 1e-30 in magnitude become +-1e-30, so the
 * reciprocal is always finite. */
RTCD_INLINE rtcd_v3 safe_reciprocal(rtcd_v3 d)
{
    const float tiny = 1e-30f;
    float x = fabs(d.x) > tiny ? d.x : (d.x < 0.0f ? -tiny : tiny);
    float y = fabs(d.y) > tiny ? d.y : (d.y < 0.0f ? -tiny : tiny);
    float z = fabs(d.z) > tiny ? d.z : (d.z < 0.0f ? -tiny : tiny);
    return v3(1.0f / x, 1.0f / y, 1.0f / z);
}

/* Möller–Trumbore with a small inclusive tolerance on the barycentrics, so a
 * ray through a shared edge or vertex hits at least one of the triangles that
 * meet there (both report the same t up to rounding; callers break ties by
 * triangle index). Returns 1 on a hit with t in [tmin, tmax]. */
#define RTCD_BARY_EPS 1e-6f
#define RTCD_PARALLEL_SIN2 1e-14f /* sin^2 of the angle to the plane: below it, float noise */
#define RTCD_GRAZING_SIN2 1e-6f   /* below it, t is ill-conditioned */

RTCD_INLINE int ray_triangle(rtcd_v3 org, rtcd_v3 dir, rtcd_v3 p0, rtcd_v3 p1, rtcd_v3 p2,
                             float tmin, float tmax, float* t_out, float* u_out, float* v_out)
{
    rtcd_v3 e1 = v3_sub(p1, p0);
    rtcd_v3 e2 = v3_sub(p2, p0);
    rtcd_v3 pv = v3_cross(dir, e2);
    float det = v3_dot(e1, pv);
    float scale2 = v3_dot(dir, dir) * v3_dot(e1, e1) * v3_dot(e2, e2); /* squared: no sqrt per test */
    if (!(det * det > RTCD_PARALLEL_SIN2 * scale2)) return 0;
    float inv = 1.0f / det;
    rtcd_v3 tv = v3_sub(org, p0);
    float u = v3_dot(tv, pv) * inv;
    if (u < -RTCD_BARY_EPS || u > 1.0f + RTCD_BARY_EPS) return 0;
    rtcd_v3 qv = v3_cross(tv, e1);
    float v = v3_dot(dir, qv) * inv;
    if (v < -RTCD_BARY_EPS || u + v > 1.0f + RTCD_BARY_EPS) return 0;
    float t = v3_dot(e2, qv) * inv;
    if (det * det <= RTCD_GRAZING_SIN2 * scale2) {
        /* A grazing ray's t carries float error / sin(angle) and can land
         * outside the triangle. The true crossing lies inside the triangle's
         * bounds, so clamping t to the ray's interval there only improves it,
         * and keeps the hit inside the BVH leaf that holds the triangle. */
        float b0, b1;
        ray_box_interval(org, safe_reciprocal(dir), v3_min(p0, v3_min(p1, p2)), v3_max(p0, v3_max(p1, p2)), &b0, &b1);
        t = rtcd_minf(rtcd_maxf(t, b0), rtcd_maxf(b0, b1));
    }
    if (!(t >= tmin && t <= tmax)) return 0;
    *t_out = t;
    *u_out = u;
    *v_out = v;
    return 1;
}

/* Do two boxes overlap? Box A: centre ca, half extents ha, in A's frame; box
 * B: centre cb, half extents hb, in B's frame; b_in_a maps B's frame into
 * A's. Separating-axis test on the 15 axes (Gottschalk), padded by `pad`
 * so rounding never separates touching boxes. */
RTCD_INLINE int obb_overlap(rtcd_v3 ca, rtcd_v3 ha, rtcd_v3 cb, rtcd_v3 hb, const rtcd_xform* b_in_a, float pad)
{
    float r[3][3], ar[3][3];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            r[i][j] = b_in_a->r[3 * i + j];
            ar[i][j] = fabs(r[i][j]) + 1e-6f;
        }
    rtcd_v3 c = v3_sub(xf_point(b_in_a, cb), ca); /* B's centre relative to A's, in A's frame */
    float t[3] = {c.x, c.y, c.z}, a[3] = {ha.x + pad, ha.y + pad, ha.z + pad}, b[3] = {hb.x + pad, hb.y + pad, hb.z + pad};
    for (int i = 0; i < 3; ++i) /* A's axes */
        if (fabs(t[i]) > a[i] + b[0] * ar[i][0] + b[1] * ar[i][1] + b[2] * ar[i][2]) return 0;
    for (int j = 0; j < 3; ++j) { /* B's axes */
        float tb = t[0] * r[0][j] + t[1] * r[1][j] + t[2] * r[2][j];
        if (fabs(tb) > b[j] + a[0] * ar[0][j] + a[1] * ar[1][j] + a[2] * ar[2][j]) return 0;
    }
    for (int i = 0; i < 3; ++i) /* cross products of an axis of each */
        for (int j = 0; j < 3; ++j) {
            int i1 = (i + 1) % 3, i2 = (i + 2) % 3, j1 = (j + 1) % 3, j2 = (j + 2) % 3;
            float tl = fabs(t[i2] * r[i1][j] - t[i1] * r[i2][j]);
            float ra = a[i1] * ar[i2][j] + a[i2] * ar[i1][j];
            float rb = b[j1] * ar[i][j2] + b[j2] * ar[i][j1];
            if (tl > ra + rb) return 0;
        }
    return 1;
}

#endif
