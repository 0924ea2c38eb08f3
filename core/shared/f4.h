/* Four floats at a time for the shared code's 4-wide tests (bvh.h's
 * 4-wide walk, which the CPU reference runs too, and candidates4.h):
 * OpenCL's float4, which CPU devices (PoCL) run as one SIMD operation; SSE
 * in C where the compiler has it, else a plain 4-float array. Each
 * operation is the scalar one lane by lane (no contraction: geom.h), so a
 * lane's result is the scalar code's. C11 and OpenCL C 1.2. */
#ifndef RTCD_SHARED_F4_H
#define RTCD_SHARED_F4_H

#include "geom.h"

#ifdef __OPENCL_VERSION__
typedef float4 rtcd_f4;
typedef int4 rtcd_i4;
#define f4_load(p) vload4(0, p)
#define f4_set(a, b, c, d) ((float4)(a, b, c, d))
#define f4_splat(x) ((float4)(x))
#define f4_add(a, b) ((a) + (b))
#define f4_sub(a, b) ((a) - (b))
#define f4_mul(a, b) ((a) * (b))
#define f4_div(a, b) ((a) / (b))
/* C's rtcd_minf and rtcd_maxf lane by lane (one SIMD min or max); fmin's
 * NaN handling costs a compare and a blend more, and no operand is NaN. */
RTCD_INLINE float4 f4_min(float4 a, float4 b) { return a < b ? a : b; }
RTCD_INLINE float4 f4_max(float4 a, float4 b) { return a > b ? a : b; }
#define f4_slab(lo, o, inv) (((lo) - (o)) * (inv))
#define f4_store(v, p) vstore4(v, 0, p)
#define f4_trunc(a) convert_int4(a) /* toward zero, as C's cast */
#define i4_float(a) convert_float4(a)
#define i4_store(v, p) vstore4(v, 0, p)
/* Bit k set where the lanes' comparison holds (-1 in the vector). */
RTCD_INLINE rtcd_u32 i4_bits(int4 c) { return (rtcd_u32)((c.s0 & 1) | (c.s1 & 2) | (c.s2 & 4) | (c.s3 & 8)); }
#define f4_le_mask(a, b) i4_bits((a) <= (b))
#define f4_lt_mask(a, b) i4_bits((a) < (b))
#define f4_ge_mask(a, b) i4_bits((a) >= (b))
#define f4_gt_mask(a, b) i4_bits((a) > (b))
#elif defined(__SSE2__)
/* The CPU: one SSE operation each (the same lane-by-lane operations). */
#include <emmintrin.h>
typedef __m128 rtcd_f4;
typedef __m128i rtcd_i4;
RTCD_INLINE rtcd_f4 f4_load(const float* p) { return _mm_loadu_ps(p); }
RTCD_INLINE rtcd_f4 f4_set(float a, float b, float c, float d) { return _mm_setr_ps(a, b, c, d); }
RTCD_INLINE rtcd_f4 f4_splat(float x) { return _mm_set1_ps(x); }
RTCD_INLINE rtcd_f4 f4_add(rtcd_f4 a, rtcd_f4 b) { return _mm_add_ps(a, b); }
RTCD_INLINE rtcd_f4 f4_sub(rtcd_f4 a, rtcd_f4 b) { return _mm_sub_ps(a, b); }
RTCD_INLINE rtcd_f4 f4_mul(rtcd_f4 a, rtcd_f4 b) { return _mm_mul_ps(a, b); }
RTCD_INLINE rtcd_f4 f4_div(rtcd_f4 a, rtcd_f4 b) { return _mm_div_ps(a, b); }
/* minps and maxps answer as rtcd_minf and rtcd_maxf: a < b ? a : b, the
 * second operand on NaN. */
RTCD_INLINE rtcd_f4 f4_min(rtcd_f4 a, rtcd_f4 b) { return _mm_min_ps(a, b); }
RTCD_INLINE rtcd_f4 f4_max(rtcd_f4 a, rtcd_f4 b) { return _mm_max_ps(a, b); }
RTCD_INLINE rtcd_f4 f4_slab(rtcd_f4 lo, rtcd_f4 o, rtcd_f4 inv) { return _mm_mul_ps(_mm_sub_ps(lo, o), inv); }
RTCD_INLINE void f4_store(rtcd_f4 a, float* p) { _mm_storeu_ps(p, a); }
RTCD_INLINE rtcd_i4 f4_trunc(rtcd_f4 a) { return _mm_cvttps_epi32(a); } /* toward zero, as C's cast */
RTCD_INLINE rtcd_f4 i4_float(rtcd_i4 a) { return _mm_cvtepi32_ps(a); }
RTCD_INLINE void i4_store(rtcd_i4 a, int* p) { _mm_storeu_si128((__m128i*)p, a); }
RTCD_INLINE rtcd_u32 f4_le_mask(rtcd_f4 a, rtcd_f4 b) { return (rtcd_u32)_mm_movemask_ps(_mm_cmple_ps(a, b)); }
RTCD_INLINE rtcd_u32 f4_lt_mask(rtcd_f4 a, rtcd_f4 b) { return (rtcd_u32)_mm_movemask_ps(_mm_cmplt_ps(a, b)); }
RTCD_INLINE rtcd_u32 f4_ge_mask(rtcd_f4 a, rtcd_f4 b) { return (rtcd_u32)_mm_movemask_ps(_mm_cmpge_ps(a, b)); }
RTCD_INLINE rtcd_u32 f4_gt_mask(rtcd_f4 a, rtcd_f4 b) { return (rtcd_u32)_mm_movemask_ps(_mm_cmpgt_ps(a, b)); }
#else
typedef struct rtcd_f4 {
    float v[4];
} rtcd_f4;
typedef struct rtcd_i4 {
    int v[4];
} rtcd_i4;
#define RTCD_F4_EACH(k) for (int k = 0; k < 4; ++k)
RTCD_INLINE rtcd_f4 f4_load(const float* p) { rtcd_f4 r; RTCD_F4_EACH(k) r.v[k] = p[k]; return r; }
RTCD_INLINE rtcd_f4 f4_set(float a, float b, float c, float d) { rtcd_f4 r = {{a, b, c, d}}; return r; }
RTCD_INLINE rtcd_f4 f4_splat(float x) { return f4_set(x, x, x, x); }
RTCD_INLINE rtcd_f4 f4_add(rtcd_f4 a, rtcd_f4 b) { RTCD_F4_EACH(k) a.v[k] = a.v[k] + b.v[k]; return a; }
RTCD_INLINE rtcd_f4 f4_sub(rtcd_f4 a, rtcd_f4 b) { RTCD_F4_EACH(k) a.v[k] = a.v[k] - b.v[k]; return a; }
RTCD_INLINE rtcd_f4 f4_mul(rtcd_f4 a, rtcd_f4 b) { RTCD_F4_EACH(k) a.v[k] = a.v[k] * b.v[k]; return a; }
RTCD_INLINE rtcd_f4 f4_div(rtcd_f4 a, rtcd_f4 b) { RTCD_F4_EACH(k) a.v[k] = a.v[k] / b.v[k]; return a; }
RTCD_INLINE rtcd_f4 f4_min(rtcd_f4 a, rtcd_f4 b) { RTCD_F4_EACH(k) a.v[k] = rtcd_minf(a.v[k], b.v[k]); return a; }
RTCD_INLINE rtcd_f4 f4_max(rtcd_f4 a, rtcd_f4 b) { RTCD_F4_EACH(k) a.v[k] = rtcd_maxf(a.v[k], b.v[k]); return a; }
RTCD_INLINE rtcd_f4 f4_slab(rtcd_f4 lo, rtcd_f4 o, rtcd_f4 inv) { return f4_mul(f4_sub(lo, o), inv); }
RTCD_INLINE void f4_store(rtcd_f4 a, float* p) { RTCD_F4_EACH(k) p[k] = a.v[k]; }
RTCD_INLINE rtcd_i4 f4_trunc(rtcd_f4 a) { rtcd_i4 r; RTCD_F4_EACH(k) r.v[k] = (int)a.v[k]; return r; }
RTCD_INLINE rtcd_f4 i4_float(rtcd_i4 a) { rtcd_f4 r; RTCD_F4_EACH(k) r.v[k] = (float)a.v[k]; return r; }
RTCD_INLINE void i4_store(rtcd_i4 a, int* p) { RTCD_F4_EACH(k) p[k] = a.v[k]; }
#define RTCD_F4_MASK(name, op)                                                                                     \
    RTCD_INLINE rtcd_u32 name(rtcd_f4 a, rtcd_f4 b)                                                                \
    {                                                                                                              \
        rtcd_u32 m = 0;                                                                                            \
        RTCD_F4_EACH(k) m |= (rtcd_u32)(a.v[k] op b.v[k]) << k;                                                    \
        return m;                                                                                                  \
    }
RTCD_F4_MASK(f4_le_mask, <=)
RTCD_F4_MASK(f4_lt_mask, <)
RTCD_F4_MASK(f4_ge_mask, >=)
RTCD_F4_MASK(f4_gt_mask, >)
#undef RTCD_F4_MASK
#endif

#endif
