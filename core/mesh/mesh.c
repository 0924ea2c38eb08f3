/* Mesh creation: copy, validate (closed, 2-manifold, consistently and outward
 * oriented), derive normals, adjacency, bounds, mass properties and the BVH. */
#include "mesh_internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#include <xmmintrin.h>
#endif

rtcd_mesh_def rtcd_default_mesh_def(void)
{
    rtcd_mesh_def def;
    memset(&def, 0, sizeof def);
    return def;
}

/* One directed edge of a triangle, keyed by its undirected endpoints. */
typedef struct edge_ref {
    uint32_t lo, hi;  /* endpoints, lo < hi */
    uint32_t tri;
    uint8_t slot;     /* edge e runs from corner e to corner (e+1)%3 */
    uint8_t forward;  /* 1 when the triangle walks it lo -> hi */
} edge_ref;

static int edge_ref_cmp(const void* pa, const void* pb)
{
    const edge_ref* a = pa;
    const edge_ref* b = pb;
    if (a->lo != b->lo) return a->lo < b->lo ? -1 : 1;
    if (a->hi != b->hi) return a->hi < b->hi ? -1 : 1;
    if (a->tri != b->tri) return a->tri < b->tri ? -1 : 1;
    return (int)a->slot - (int)b->slot;
}

static const char* mesh_label(const rtcd_mesh_def* def) { return def->name ? def->name : "mesh"; }

static rtcd_error validate_elements(const rtcd_mesh_def* def, const float* v, const uint32_t* idx)
{
    const char* name = mesh_label(def);
    for (uint32_t t = 0; t < def->triangle_count; ++t) {
        for (int c = 0; c < 3; ++c) {
            if (idx[3 * t + c] >= def->vertex_count)
                return rtcd_fail(RTCD_ERROR_MESH_INDEX_OUT_OF_RANGE,
                                 "%s: triangle %u corner %d has vertex index %u, but the mesh has %u vertices", name,
                                 t, c, idx[3 * t + c], def->vertex_count);
        }
    }
    return rtcd_mesh_check_shape(name, v, def->vertex_count, idx, def->triangle_count, NULL);
}

rtcd_error rtcd_mesh_fail_inside_out(const char* name, double volume, int flip_hint)
{
    return rtcd_fail(RTCD_ERROR_MESH_INSIDE_OUT, "%s: enclosed volume is %g (triangles wind clockwise seen from outside)%s",
                     name, volume, flip_hint ? "; pass RTCD_MESH_FLIP_INSIDE_OUT to flip it" : "");
}

/* Sorts every edge use, checks closed / manifold / consistent, fills neighbours. */
static rtcd_error build_adjacency(const rtcd_mesh_def* def, const uint32_t* idx, uint32_t* neighbors)
{
    const char* name = mesh_label(def);
    size_t n = (size_t)def->triangle_count * 3;
    edge_ref* edges = rtcd_calloc(n, sizeof *edges);
    if (!edges) return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "%s: no memory for %zu edges", name, n);
    for (uint32_t t = 0; t < def->triangle_count; ++t) {
        for (uint8_t e = 0; e < 3; ++e) {
            uint32_t a = idx[3 * t + e], b = idx[3 * t + (e + 1) % 3];
            edge_ref* r = &edges[3 * t + e];
            r->lo = a < b ? a : b;
            r->hi = a < b ? b : a;
            r->tri = t;
            r->slot = e;
            r->forward = a < b;
        }
    }
    qsort(edges, n, sizeof *edges, edge_ref_cmp);
    rtcd_error err = RTCD_OK;
    /* Classify every group first so the reported error follows the documented order. */
    size_t open_at = n, nonmanifold_at = n, flipped_at = n;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && edges[j].lo == edges[i].lo && edges[j].hi == edges[i].hi) ++j;
        size_t count = j - i;
        if (count == 1) neighbors[3 * edges[i].tri + edges[i].slot] = RTCD_INVALID; /* open surfaces */
        if (count == 1 && open_at == n && !(def->flags & RTCD_MESH_OPEN_SURFACE)) open_at = i;
        if (count > 2 && nonmanifold_at == n) nonmanifold_at = i;
        if (count == 2) {
            if (edges[i].forward == edges[i + 1].forward && flipped_at == n) flipped_at = i;
            neighbors[3 * edges[i].tri + edges[i].slot] = edges[i + 1].tri;
            neighbors[3 * edges[i + 1].tri + edges[i + 1].slot] = edges[i].tri;
        }
        i = j;
    }
    if (open_at < n) {
        const edge_ref* r = &edges[open_at];
        err = rtcd_fail(RTCD_ERROR_MESH_OPEN_EDGE,
                        "%s: edge (%u, %u) of triangle %u has no neighbour: the mesh is not closed", name, r->lo,
                        r->hi, r->tri);
    } else if (nonmanifold_at < n) {
        const edge_ref* r = &edges[nonmanifold_at];
        uint32_t users = 0;
        for (size_t k = nonmanifold_at; k < n && edges[k].lo == r->lo && edges[k].hi == r->hi; ++k) ++users;
        err = rtcd_fail(RTCD_ERROR_MESH_NONMANIFOLD_EDGE,
                        "%s: edge (%u, %u) is shared by %u triangles (first: %u); at most 2 allowed", name, r->lo,
                        r->hi, users, r->tri);
    } else if (flipped_at < n) {
        const edge_ref* r = &edges[flipped_at];
        err = rtcd_fail(RTCD_ERROR_MESH_INCONSISTENT_ORIENTATION,
                        "%s: triangles %u and %u both run edge (%u, %u) in the same direction", name, r->tri,
                        edges[flipped_at + 1].tri, r->lo, r->hi);
    }
    rtcd_free(edges);
    return err;
}

/* Four square roots or quotients in one instruction where SSE is there
 * (correctly rounded, as sqrtf and / are: the same bits either way). The
 * lanes are gathered in registers: four scalar stores read back as one
 * vector would stall store forwarding. */
static inline void sqrt4(float* x)
{
#if defined(__SSE2__)
    _mm_storeu_ps(x, _mm_sqrt_ps(_mm_set_ps(x[3], x[2], x[1], x[0])));
#else
    for (int k = 0; k < 4; ++k) x[k] = sqrtf(x[k]);
#endif
}
static inline void div4(float* x, const float* y)
{
#if defined(__SSE2__)
    _mm_storeu_ps(x, _mm_div_ps(_mm_set_ps(x[3], x[2], x[1], x[0]), _mm_set_ps(y[3], y[2], y[1], y[0])));
#else
    for (int k = 0; k < 4; ++k) x[k] = x[k] / y[k];
#endif
}

/* Deformable meshes' normals, recomputed at every update (creation with
 * RTCD_MESH_DEFORMABLE computes them so too: an updated mesh equals a
 * created one): the same angle-weighted normals in floats throughout, the
 * acos by a polynomial, the sums in floats: several times cheaper than the
 * double path. Edge lengths as the exact path has them. Each triangle's
 * terms (unit normal, corner angles, edge lengths) come four triangles at
 * a time where SSE is there, lane by lane the same operations as
 * tri_terms (the same bits), and are summed into the vertices in triangle
 * order either way. */
typedef struct tri_terms4 {
    float n[3][4];     /* unit normal, axis by lane */
    float angle[3][4]; /* corner k's angle */
    float len[3][4];   /* edge k: corner k to k + 1 */
} tri_terms4;

/* acos(|x|) for the corner angles (Abramowitz and Stegun 4.4.46, 2e-8 rad): root = sqrt(1 - |x|) given. */
#define RTCD_ACOS_POLY(x, x2, x4)                                                                                      \
    ((1.5707963050f - 0.2145988016f * (x)) + (x2) * (0.0889789874f - 0.0501743046f * (x)) +                            \
     (x4) * ((0.0308918810f - 0.0170881256f * (x)) + (x2) * (0.0066700901f - 0.0012624911f * (x))))

/* One triangle's terms into lane j. */
static void tri_terms(const rtcd_mesh* m, uint32_t t, tri_terms4* o, int j)
{
    const uint32_t* tri = m->indices + 3 * t;
    rtcd_v3 p[3] = {mesh_vertex(m, tri[0]), mesh_vertex(m, tri[1]), mesh_vertex(m, tri[2])};
    rtcd_v3 e[3] = {v3_sub(p[1], p[0]), v3_sub(p[2], p[1]), v3_sub(p[0], p[2])}; /* edge c: corner c to c + 1 */
    rtcd_v3 c = v3_cross(e[0], v3_sub(p[2], p[0]));
    float len[4] = {sqrtf(v3_dot(e[0], e[0])), sqrtf(v3_dot(e[1], e[1])), sqrtf(v3_dot(e[2], e[2])),
                    sqrtf(v3_dot(c, c))};
    float inv = 1.0f / (len[3] > 0.0f ? len[3] : 1.0f);
    rtcd_v3 n = len[3] > 0.0f ? v3_scale(c, inv) : c;
    o->n[0][j] = n.x, o->n[1][j] = n.y, o->n[2][j] = n.z;
    for (int k = 0; k < 3; ++k) { /* corner k lies between edge k and edge k + 2 reversed */
        float num = -v3_dot(e[k], e[(k + 2) % 3]), den = len[k] * len[(k + 2) % 3];
        if (!(den > 0.0f)) num = 1.0f, den = 1.0f;
        float cosang = num / den;
        float x = cosang < -1.0f ? -1.0f : (cosang > 1.0f ? 1.0f : cosang);
        float a = fabsf(x), a2 = a * a, a4 = a2 * a2;
        float r = sqrtf(1.0f - a) * RTCD_ACOS_POLY(a, a2, a4);
        o->angle[k][j] = cosang < 0.0f ? 3.14159265f - r : r;
        o->len[k][j] = len[k];
    }
}

#if defined(__SSE2__)
/* Triangles t..t + 3: tri_terms in four lanes (the same operations, in the same order). */
static void tri_terms_sse(const rtcd_mesh* m, uint32_t t, tri_terms4* o)
{
    const uint32_t* tri = m->indices + 3 * t;
    const float* v = m->vertices;
    __m128 p[3][3]; /* corner, axis */
    for (int c = 0; c < 3; ++c)
        for (int k = 0; k < 3; ++k)
            p[c][k] = _mm_set_ps(v[3 * tri[9 + c] + k], v[3 * tri[6 + c] + k], v[3 * tri[3 + c] + k], v[3 * tri[c] + k]);
    __m128 e[3][3], f[3], c[3];
    for (int k = 0; k < 3; ++k) {
        e[0][k] = _mm_sub_ps(p[1][k], p[0][k]);
        e[1][k] = _mm_sub_ps(p[2][k], p[1][k]);
        e[2][k] = _mm_sub_ps(p[0][k], p[2][k]);
        f[k] = _mm_sub_ps(p[2][k], p[0][k]);
    }
    c[0] = _mm_sub_ps(_mm_mul_ps(e[0][1], f[2]), _mm_mul_ps(e[0][2], f[1]));
    c[1] = _mm_sub_ps(_mm_mul_ps(e[0][2], f[0]), _mm_mul_ps(e[0][0], f[2]));
    c[2] = _mm_sub_ps(_mm_mul_ps(e[0][0], f[1]), _mm_mul_ps(e[0][1], f[0]));
#define DOT4(a, b) _mm_add_ps(_mm_add_ps(_mm_mul_ps((a)[0], (b)[0]), _mm_mul_ps((a)[1], (b)[1])), _mm_mul_ps((a)[2], (b)[2]))
    const __m128 zero = _mm_setzero_ps(), one = _mm_set1_ps(1.0f), sign = _mm_set1_ps(-0.0f);
    __m128 len[3] = {_mm_sqrt_ps(DOT4(e[0], e[0])), _mm_sqrt_ps(DOT4(e[1], e[1])), _mm_sqrt_ps(DOT4(e[2], e[2]))};
    __m128 lc = _mm_sqrt_ps(DOT4(c, c)), has = _mm_cmpgt_ps(lc, zero);
    __m128 inv = _mm_div_ps(one, _mm_or_ps(_mm_and_ps(has, lc), _mm_andnot_ps(has, one)));
    for (int k = 0; k < 3; ++k)
        _mm_storeu_ps(o->n[k], _mm_or_ps(_mm_and_ps(has, _mm_mul_ps(c[k], inv)), _mm_andnot_ps(has, c[k])));
    for (int k = 0; k < 3; ++k) {
        __m128 num = _mm_xor_ps(DOT4(e[k], e[(k + 2) % 3]), sign), den = _mm_mul_ps(len[k], len[(k + 2) % 3]);
        __m128 ok = _mm_cmpgt_ps(den, zero);
        num = _mm_or_ps(_mm_and_ps(ok, num), _mm_andnot_ps(ok, one));
        den = _mm_or_ps(_mm_and_ps(ok, den), _mm_andnot_ps(ok, one));
        __m128 cosang = _mm_div_ps(num, den);
        __m128 x = _mm_max_ps(_mm_min_ps(cosang, one), _mm_set1_ps(-1.0f)); /* finite: the scalar clamp */
        __m128 a = _mm_andnot_ps(sign, x), a2 = _mm_mul_ps(a, a), a4 = _mm_mul_ps(a2, a2);
#define C4(k) _mm_set1_ps(k)
        __m128 poly = _mm_add_ps(
            _mm_add_ps(_mm_sub_ps(C4(1.5707963050f), _mm_mul_ps(C4(0.2145988016f), a)),
                       _mm_mul_ps(a2, _mm_sub_ps(C4(0.0889789874f), _mm_mul_ps(C4(0.0501743046f), a)))),
            _mm_mul_ps(a4, _mm_add_ps(_mm_sub_ps(C4(0.0308918810f), _mm_mul_ps(C4(0.0170881256f), a)),
                                      _mm_mul_ps(a2, _mm_sub_ps(C4(0.0066700901f), _mm_mul_ps(C4(0.0012624911f), a))))));
#undef C4
        __m128 r = _mm_mul_ps(_mm_sqrt_ps(_mm_sub_ps(one, a)), poly);
        __m128 neg = _mm_cmplt_ps(cosang, zero);
        __m128 angle = _mm_or_ps(_mm_and_ps(neg, _mm_sub_ps(_mm_set1_ps(3.14159265f), r)), _mm_andnot_ps(neg, r));
        _mm_storeu_ps(o->angle[k], angle);
        _mm_storeu_ps(o->len[k], len[k]);
    }
#undef DOT4
}
#endif

/* Triangle t0 + j's terms (lane j of o) into its normal and its corners'
 * sums, one triangle at a time: the operations of the 4-wide path below. */
static void scatter_lane(rtcd_mesh* m, uint32_t t0, const tri_terms4* o, uint32_t j, float* vn)
{
    const uint32_t* tri = m->indices + 3 * (t0 + j);
    float nx = o->n[0][j], ny = o->n[1][j], nz = o->n[2][j];
    float* tn = m->triangle_normals + 3 * (t0 + j);
    tn[0] = nx, tn[1] = ny, tn[2] = nz;
    for (int k = 0; k < 3; ++k) {
        float angle = o->angle[k][j];
        float* sum = vn + 4 * tri[k];
        sum[0] += angle * nx;
        sum[1] += angle * ny;
        sum[2] += angle * nz;
    }
}

/* A bound under which a sum of lengths, none below `shortest`, is exact in
 * doubles in any order: every length is a multiple of the float ulp of the
 * shortest, so every partial sum below 2^52 of those ulps is a double. */
static double exact_sum_limit(float shortest)
{
    uint32_t bits;
    memcpy(&bits, &shortest, sizeof bits);
    int e = (int)((bits >> 23) & 0xffu); /* ulp 2^(e - 150); subnormals 2^-149 */
    return ldexp(1.0, (e ? e : 1) - 150 + 52);
}

/* Edge lengths' sum, longest and shortest, in any order (test_deform
 * compares the sum with the sequential one: equal while it is exact). */
typedef struct edge_acc {
    double sum;
    float longest, shortest;
} edge_acc;

static void edge_add(edge_acc* a, float len)
{
    a->sum += len;
    float bound = len * (1.0f + 1e-6f); /* rounded up: a bound */
    a->longest = bound > a->longest ? bound : a->longest;
    a->shortest = len < a->shortest ? len : a->shortest;
}

/* The vertex sums are kept 4 floats apart in the scratch (which holds 3
 * doubles per vertex): one vector per corner. */
static void deformable_normals(rtcd_mesh* m, float* vn, double* edge_sum_out, float* max_edge_out)
{
    uint32_t nv = m->vertex_count, nt = m->triangle_count;
    memset(vn, 0, (size_t)nv * 4 * sizeof(float));
    edge_acc acc = {0.0, 0.0f, FLT_MAX};
#if defined(__SSE2__)
    __m128d sum01 = _mm_setzero_pd(), sum23 = _mm_setzero_pd();
    __m128 longest = _mm_setzero_ps(), shortest = _mm_set1_ps(FLT_MAX);
    const __m128 up = _mm_set1_ps(1.0f + 1e-6f);
#endif
    for (uint32_t t0 = 0; t0 < nt; t0 += 4) {
        uint32_t lanes = nt - t0 < 4 ? nt - t0 : 4;
        tri_terms4 o;
#if defined(__SSE2__)
        if (lanes == 4) {
            tri_terms_sse(m, t0, &o);
            for (int k = 0; k < 3; ++k) {
                __m128 len = _mm_loadu_ps(o.len[k]);
                sum01 = _mm_add_pd(sum01, _mm_cvtps_pd(len));
                sum23 = _mm_add_pd(sum23, _mm_cvtps_pd(_mm_movehl_ps(len, len)));
                longest = _mm_max_ps(_mm_mul_ps(len, up), longest);
                shortest = _mm_min_ps(len, shortest);
            }
            __m128 n0 = _mm_loadu_ps(o.n[0]), n1 = _mm_loadu_ps(o.n[1]), n2 = _mm_loadu_ps(o.n[2]);
            __m128 n3 = _mm_setzero_ps();
            _MM_TRANSPOSE4_PS(n0, n1, n2, n3); /* n_j: triangle t0 + j's normal, w 0 */
            __m128 n[4] = {n0, n1, n2, n3};
            float* tn = m->triangle_normals + 3 * t0;
            _mm_storeu_ps(tn, n0); /* each fourth lane is overwritten by the next */
            _mm_storeu_ps(tn + 3, n1);
            _mm_storeu_ps(tn + 6, n2);
            _mm_storel_pi((__m64*)(void*)(tn + 9), n3);
            _mm_store_ss(tn + 11, _mm_movehl_ps(n3, n3));
            for (int j = 0; j < 4; ++j) {
                const uint32_t* tri = m->indices + 3 * (t0 + (uint32_t)j);
                for (int k = 0; k < 3; ++k) { /* sum += angle * n, lane by lane */
                    float* sum = vn + 4 * tri[k];
                    _mm_storeu_ps(sum, _mm_add_ps(_mm_loadu_ps(sum), _mm_mul_ps(_mm_set1_ps(o.angle[k][j]), n[j])));
                }
            }
            continue;
        }
#endif
        for (uint32_t j = 0; j < lanes; ++j) tri_terms(m, t0 + j, &o, (int)j);
        for (uint32_t j = 0; j < lanes; ++j) {
            scatter_lane(m, t0, &o, j, vn);
            for (int k = 0; k < 3; ++k) edge_add(&acc, o.len[k][j]);
        }
    }
#if defined(__SSE2__)
    double s[4];
    float hi[4], lo[4];
    _mm_storeu_pd(s, sum01);
    _mm_storeu_pd(s + 2, sum23);
    _mm_storeu_ps(hi, longest);
    _mm_storeu_ps(lo, shortest);
    for (int k = 0; k < 4; ++k) {
        acc.sum += s[k];
        acc.longest = hi[k] > acc.longest ? hi[k] : acc.longest;
        acc.shortest = lo[k] < acc.shortest ? lo[k] : acc.shortest;
    }
#endif
    /* The mean edge as the sequential sum has it: the same whenever the sum
     * is exact (no rounding in any order), else summed again in order. */
    if (!(acc.shortest > 0.0f && acc.sum <= exact_sum_limit(acc.shortest))) {
        acc.sum = 0.0;
        for (uint32_t t = 0; t < nt; ++t) {
            tri_terms4 o;
            tri_terms(m, t, &o, 0);
            for (int k = 0; k < 3; ++k) acc.sum += o.len[k][0];
        }
        m->edge_sums_in_order++;
    }
    /* Unit vertex normals, four vertices at a time; unreferenced vertices keep a zero normal. */
    uint32_t i = 0;
#if defined(__SSE2__)
    for (; i + 4 <= nv; i += 4) {
        __m128 x = _mm_loadu_ps(vn + 4 * i), y = _mm_loadu_ps(vn + 4 * i + 4), z = _mm_loadu_ps(vn + 4 * i + 8);
        __m128 w = _mm_loadu_ps(vn + 4 * i + 12);
        _MM_TRANSPOSE4_PS(x, y, z, w); /* x: four vertices' x sums */
        __m128 l = _mm_sqrt_ps(_mm_add_ps(_mm_add_ps(_mm_mul_ps(x, x), _mm_mul_ps(y, y)), _mm_mul_ps(z, z)));
        __m128 pos = _mm_cmpgt_ps(l, _mm_setzero_ps()), one = _mm_set1_ps(1.0f);
        __m128 inv = _mm_div_ps(one, _mm_or_ps(_mm_and_ps(pos, l), _mm_andnot_ps(pos, one)));
        x = _mm_mul_ps(x, inv), y = _mm_mul_ps(y, inv), z = _mm_mul_ps(z, inv), w = _mm_setzero_ps();
        _MM_TRANSPOSE4_PS(x, y, z, w); /* back: one vertex a vector */
        float* out = m->vertex_normals + 3 * i;
        _mm_storeu_ps(out, x);
        _mm_storeu_ps(out + 3, y);
        _mm_storeu_ps(out + 6, z);
        _mm_storel_pi((__m64*)(void*)(out + 9), w);
        _mm_store_ss(out + 11, _mm_movehl_ps(w, w));
    }
#endif
    for (; i < nv; i += 4) {
        uint32_t n = nv - i < 4 ? nv - i : 4;
        float l[4] = {1.0f, 1.0f, 1.0f, 1.0f}, one[4] = {1.0f, 1.0f, 1.0f, 1.0f};
        for (uint32_t j = 0; j < n; ++j) {
            const float* s4 = vn + 4 * (i + j);
            l[j] = s4[0] * s4[0] + s4[1] * s4[1] + s4[2] * s4[2];
        }
        sqrt4(l);
        for (uint32_t j = 0; j < 4; ++j) l[j] = l[j] > 0.0f ? l[j] : 1.0f;
        div4(one, l);
        for (uint32_t j = 0; j < n; ++j)
            for (int k = 0; k < 3; ++k) m->vertex_normals[3 * (i + j) + k] = vn[4 * (i + j) + k] * one[j];
    }
    *edge_sum_out = acc.sum;
    *max_edge_out = acc.longest;
}

/* Normals, box, edge lengths, facing and reach from the vertices (creation
 * and every update: each field is written afresh). Each edge's direction is
 * normalized once and negated for the other corner (exact in floats), so a
 * triangle costs three square roots, not six. */
rtcd_error rtcd_mesh_derive_geometry(rtcd_mesh* m, double* sums)
{
    m->max_edge_length = 0.0f; /* accumulated with fmaxf below */
    for (int k = 0; k < 3; ++k) {
        m->lo[k] = m->vertex_count ? m->vertices[k] : 0.0f;
        m->hi[k] = m->lo[k];
    }
    for (uint32_t i = 0; i < m->vertex_count; ++i) {
        for (int k = 0; k < 3; ++k) { /* finite (checked): compares do what fminf does */
            float x = m->vertices[3 * i + k];
            m->lo[k] = x < m->lo[k] ? x : m->lo[k];
            m->hi[k] = x > m->hi[k] ? x : m->hi[k];
        }
    }
    double* vn = sums;
    if (!vn) vn = rtcd_calloc((size_t)m->vertex_count * 3, sizeof(double));
    else if (!m->deformable) memset(vn, 0, (size_t)m->vertex_count * 3 * sizeof(double)); /* deformable: its own */
    if (!vn) return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "%s: no memory for vertex normals", m->name);
    double edge_sum = 0.0;
    float max_edge = 0.0f;
    if (m->deformable) deformable_normals(m, (float*)(void*)vn, &edge_sum, &max_edge);
    for (uint32_t t = 0; !m->deformable && t < m->triangle_count; ++t) {
        const uint32_t* tri = m->indices + 3 * t;
        rtcd_v3 p[3] = {mesh_vertex(m, tri[0]), mesh_vertex(m, tri[1]), mesh_vertex(m, tri[2])};
        rtcd_v3 n = v3_normalize(v3_cross(v3_sub(p[1], p[0]), v3_sub(p[2], p[0])));
        m->triangle_normals[3 * t] = n.x;
        m->triangle_normals[3 * t + 1] = n.y;
        m->triangle_normals[3 * t + 2] = n.z;
        rtcd_v3 dir[3]; /* edge c: corner c to corner c + 1 */
        float len[3];
        for (int c = 0; c < 3; ++c) {
            rtcd_v3 e = v3_sub(p[(c + 1) % 3], p[c]);
            len[c] = v3_length(e);
            dir[c] = len[c] > 0.0f ? v3_scale(e, 1.0f / len[c]) : e; /* v3_normalize */
        }
        for (int c = 0; c < 3; ++c) {
            rtcd_v3 e0 = dir[c], e1 = v3_scale(dir[(c + 2) % 3], -1.0f);
            double cosang = (double)v3_dot(e0, e1);
            cosang = cosang < -1.0 ? -1.0 : (cosang > 1.0 ? 1.0 : cosang); /* compares: no library calls */
            double angle = acos(cosang); /* angle-weighted: independent of tessellation */
            vn[3 * tri[c]] += angle * n.x;
            vn[3 * tri[c] + 1] += angle * n.y;
            vn[3 * tri[c] + 2] += angle * n.z;
            edge_sum += len[c];
            float bound = len[c] * (1.0f + 1e-6f); /* rounded up: a bound */
            max_edge = bound > max_edge ? bound : max_edge;
        }
    }
    m->max_edge_length = max_edge;
    if (m->open_surface) {
        double f[3] = {0, 0, 0};
        for (uint32_t t = 0; t < m->triangle_count; ++t) {
            const uint32_t* tri = m->indices + 3 * t;
            rtcd_v3 c = v3_cross(v3_sub(mesh_vertex(m, tri[1]), mesh_vertex(m, tri[0])),
                                 v3_sub(mesh_vertex(m, tri[2]), mesh_vertex(m, tri[0])));
            f[0] += c.x, f[1] += c.y, f[2] += c.z;
        }
        double len = sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
        for (int k = 0; k < 3; ++k) m->facing[k] = len > 0.0 ? (float)(f[k] / len) : (k == 2 ? 1.0f : 0.0f);
    }
    /* Each edge is counted twice (once per triangle), which the mean absorbs. */
    m->mean_edge_length = m->triangle_count ? (float)(edge_sum / (3.0 * m->triangle_count)) : 0.0f;
    if (m->open_surface) {
        /* The solid behind an open surface reaches beyond its vertices (a
         * flat floor has a box of zero height). The box, which every culling
         * test uses, takes in a quarter of the surface's extent behind it
         * (along the way it faces) and a little in front (bodies coming
         * close); the grids over the box stay as fine as they can. */
        float ext = fmaxf(m->hi[0] - m->lo[0], fmaxf(m->hi[1] - m->lo[1], m->hi[2] - m->lo[2]));
        float front = fmaxf(m->mean_edge_length, 0.05f * ext);
        for (int k = 0; k < 3; ++k) {
            m->lo[k] -= front + 0.25f * ext * fmaxf(m->facing[k], 0.0f);
            m->hi[k] += front + 0.25f * ext * fmaxf(-m->facing[k], 0.0f);
        }
    }
    /* Every vertex lies within reach of the origin (rounded up, so the
     * displacement bound stays a bound). */
    float reach2 = 0.0f;
    for (uint32_t i = 0; i < m->vertex_count; ++i) {
        rtcd_v3 v = v3_load(m->vertices + 3 * i);
        float d2 = v3_dot(v, v);
        reach2 = d2 > reach2 ? d2 : reach2;
    }
    m->reach = sqrtf(reach2) * (1.0f + 1e-6f);
    for (uint32_t i = 0; !m->deformable && i < m->vertex_count; ++i) {
        double len = sqrt(vn[3 * i] * vn[3 * i] + vn[3 * i + 1] * vn[3 * i + 1] + vn[3 * i + 2] * vn[3 * i + 2]);
        /* Unreferenced vertices keep a zero normal and cast no rays. */
        for (int k = 0; k < 3; ++k) m->vertex_normals[3 * i + k] = len > 0.0 ? (float)(vn[3 * i + k] / len) : 0.0f;
    }
    if (vn != sums) rtcd_free(vn);
    return RTCD_OK;
}

/* 64 bits: a billion meshes a second would take centuries to wrap. */
static uint64_t next_mesh_id(void)
{
    static uint64_t last_id;
    return __atomic_add_fetch(&last_id, 1, __ATOMIC_RELAXED);
}

rtcd_error rtcd_mesh_create(const rtcd_mesh_def* def, rtcd_mesh** out)
{
    if (out) *out = NULL;
    if (!def || !out) return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_mesh_create: NULL definition or output");
    const char* name = mesh_label(def);
    /* A closed surface needs a tetrahedron at least; an open one a triangle. */
    uint32_t min_v = def->flags & RTCD_MESH_OPEN_SURFACE ? 3u : 4u, min_t = def->flags & RTCD_MESH_OPEN_SURFACE ? 1u : 4u;
    if (!def->vertices || !def->indices || def->vertex_count < min_v || def->triangle_count < min_t)
        return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT,
                         "%s: need vertex and index arrays with at least %u vertices and %u triangles (got %u, %u)",
                         name, min_v, min_t, def->vertex_count, def->triangle_count);
    if (def->flags & ~(uint32_t)(RTCD_MESH_FLIP_INSIDE_OUT | RTCD_MESH_OPEN_SURFACE | RTCD_MESH_DEFORMABLE))
        return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "%s: unknown flags 0x%x", name, def->flags);
    if (def->bvh_leaf_size > RTCD_BVH_MAX_LEAF_SIZE)
        return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "%s: bvh_leaf_size %u exceeds %u", name, def->bvh_leaf_size,
                         RTCD_BVH_MAX_LEAF_SIZE);
    if (def->vertex_count > (1u << 26) || def->triangle_count > (1u << 26))
        return rtcd_fail(RTCD_ERROR_MESH_TOO_LARGE, "%s: %u vertices / %u triangles exceed the limit of 2^26", name,
                         def->vertex_count, def->triangle_count);
    size_t stride = def->vertex_stride ? def->vertex_stride : 3 * sizeof(float);
    if (stride < 3 * sizeof(float))
        return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "%s: vertex_stride %zu is below 12 bytes", name, stride);

    rtcd_mesh* m = rtcd_calloc(1, sizeof *m);
    if (!m) return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "%s: no memory for the mesh", name);
    m->refcount = 1;
    m->id = next_mesh_id();
    m->vertex_count = def->vertex_count;
    m->triangle_count = def->triangle_count;
    size_t nv = (size_t)m->vertex_count * 3, nt = (size_t)m->triangle_count * 3;
    m->vertices = rtcd_alloc(nv * sizeof(float));
    m->indices = rtcd_alloc(nt * sizeof(uint32_t));
    m->triangle_normals = rtcd_alloc(nt * sizeof(float));
    m->vertex_normals = rtcd_alloc(nv * sizeof(float));
    m->neighbors = rtcd_alloc(nt * sizeof(uint32_t));
    m->name = rtcd_strdup(name);
    rtcd_error err = RTCD_OK;
    if (!m->vertices || !m->indices || !m->triangle_normals || !m->vertex_normals || !m->neighbors || !m->name) {
        err = rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "%s: no memory for %u vertices / %u triangles", name,
                        m->vertex_count, m->triangle_count);
        goto fail;
    }
    for (uint32_t i = 0; i < m->vertex_count; ++i)
        memcpy(m->vertices + 3 * i, (const char*)def->vertices + stride * i, 3 * sizeof(float));
    memcpy(m->indices, def->indices, nt * sizeof(uint32_t));

    if ((err = validate_elements(def, m->vertices, m->indices)) != RTCD_OK) goto fail;
    if ((err = build_adjacency(def, m->indices, m->neighbors)) != RTCD_OK) goto fail;

    m->open_surface = (def->flags & RTCD_MESH_OPEN_SURFACE) != 0;
    m->deformable = (def->flags & RTCD_MESH_DEFORMABLE) != 0;
    if (!m->open_surface) m->mass = rtcd_compute_mass_properties(m->vertices, m->indices, m->triangle_count);
    if (!m->open_surface && !(m->mass.volume > 0.0)) {
        if (!(def->flags & RTCD_MESH_FLIP_INSIDE_OUT) || !(m->mass.volume < 0.0)) {
            err = rtcd_mesh_fail_inside_out(name, m->mass.volume, 1);
            goto fail;
        }
        for (uint32_t t = 0; t < m->triangle_count; ++t) {
            uint32_t tmp = m->indices[3 * t + 1];
            m->indices[3 * t + 1] = m->indices[3 * t + 2];
            m->indices[3 * t + 2] = tmp;
        }
        if ((err = build_adjacency(def, m->indices, m->neighbors)) != RTCD_OK) goto fail;
        m->mass = rtcd_compute_mass_properties(m->vertices, m->indices, m->triangle_count);
    }
    if ((err = rtcd_mesh_derive_geometry(m, NULL)) != RTCD_OK) goto fail;
    err = rtcd_bvh_build(m->vertices, m->indices, m->triangle_count,
                         def->bvh_leaf_size ? def->bvh_leaf_size : RTCD_BVH_DEFAULT_LEAF_SIZE, &m->bvh);
    if (err != RTCD_OK) goto fail;
    if ((err = rtcd_solid_grid_build(m)) != RTCD_OK) goto fail; /* open surfaces ask the BVH */
    if ((err = rtcd_near_grid_build(m)) != RTCD_OK) goto fail;
    if ((err = rtcd_vertex_clusters_build(m)) != RTCD_OK) goto fail;
    *out = m;
    return RTCD_OK;
fail:
    m->refcount = 1;
    rtcd_mesh_release(m);
    return err;
}

void rtcd_mesh_retain(rtcd_mesh* mesh)
{
    if (mesh) __atomic_add_fetch(&mesh->refcount, 1, __ATOMIC_RELAXED);
}

void rtcd_mesh_release(rtcd_mesh* mesh)
{
    if (!mesh || __atomic_sub_fetch(&mesh->refcount, 1, __ATOMIC_ACQ_REL) != 0) return;
    rtcd_bvh_destroy(&mesh->bvh);
    rtcd_free(mesh->vertices);
    rtcd_free(mesh->prev_vertices);
    rtcd_free(mesh->spare_vertices);
    rtcd_free(mesh->normal_sums);
    rtcd_free(mesh->keep);
    rtcd_free(mesh->indices);
    rtcd_free(mesh->triangle_normals);
    rtcd_free(mesh->vertex_normals);
    rtcd_free(mesh->neighbors);
    rtcd_free(mesh->cluster_vertices);
    rtcd_free(mesh->clusters);
    rtcd_free(mesh->name);
    rtcd_free(mesh);
}

uint64_t rtcd_mesh_id(const rtcd_mesh* m) { return m ? m->id : 0; }
uint32_t rtcd_mesh_vertex_count(const rtcd_mesh* m) { return m ? m->vertex_count : 0; }
uint32_t rtcd_mesh_triangle_count(const rtcd_mesh* m) { return m ? m->triangle_count : 0; }
const char* rtcd_mesh_name(const rtcd_mesh* m) { return m ? m->name : ""; }
const float* rtcd_mesh_vertices(const rtcd_mesh* m) { return m ? m->vertices : NULL; }
const uint32_t* rtcd_mesh_indices(const rtcd_mesh* m) { return m ? m->indices : NULL; }
const float* rtcd_mesh_triangle_normals(const rtcd_mesh* m) { return m ? m->triangle_normals : NULL; }
const float* rtcd_mesh_vertex_normals(const rtcd_mesh* m) { return m ? m->vertex_normals : NULL; }
const uint32_t* rtcd_mesh_triangle_neighbors(const rtcd_mesh* m) { return m ? m->neighbors : NULL; }
float rtcd_mesh_mean_edge_length(const rtcd_mesh* m) { return m ? m->mean_edge_length : 0.0f; }
int rtcd_mesh_is_open_surface(const rtcd_mesh* m) { return m ? m->open_surface : 0; }

void rtcd_mesh_bounds(const rtcd_mesh* m, float lo[3], float hi[3])
{
    for (int k = 0; k < 3; ++k) {
        if (lo) lo[k] = m ? m->lo[k] : 0.0f;
        if (hi) hi[k] = m ? m->hi[k] : 0.0f;
    }
}

rtcd_mass_properties rtcd_mesh_mass_properties(const rtcd_mesh* m)
{
    rtcd_mass_properties none;
    memset(&none, 0, sizeof none);
    if (!m) return none;
    /* A deformed mesh's mass is computed when asked (an update does not
     * need it: a deforming body's mass and inertia are the user's to set);
     * not cached, so concurrent readers of a const mesh stay safe. */
    if (m->mass_stale) return rtcd_compute_mass_properties(m->vertices, m->indices, m->triangle_count);
    return m->mass;
}
