/* Binned-SAH BVH build into the depth-first layout of shared/bvh.h. */
#include "bvh_tree.h"

#include <float.h>
#include <math.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define SAH_BINS 16
#define MEDIAN_SPLIT_DEPTH 40 /* past this, split at the median: depth stays bounded */

typedef struct box3 {
    float lo[3], hi[3];
} box3;

typedef struct builder {
    const float* vertices;
    const uint32_t* indices;
    box3* tri_box;
    float* centroid; /* 3 per triangle */
    uint32_t* order; /* triangle ids, partitioned in place */
    rtcd_bvh_node* nodes;
    uint32_t node_count, leaf_size, max_depth;
    float pad;
} builder;

static box3 box_empty(void)
{
    box3 b = {{FLT_MAX, FLT_MAX, FLT_MAX}, {-FLT_MAX, -FLT_MAX, -FLT_MAX}};
    return b;
}

static void box_grow(box3* b, const box3* o)
{
    for (int k = 0; k < 3; ++k) {
        b->lo[k] = fminf(b->lo[k], o->lo[k]);
        b->hi[k] = fmaxf(b->hi[k], o->hi[k]);
    }
}

static float box_area(const box3* b)
{
    float d[3];
    for (int k = 0; k < 3; ++k) d[k] = fmaxf(0.0f, b->hi[k] - b->lo[k]);
    return d[0] * d[1] + d[1] * d[2] + d[2] * d[0];
}

static uint32_t emit_leaf(builder* b, uint32_t node, uint32_t begin, uint32_t end)
{
    b->nodes[node].prims = (begin << RTCD_BVH_LEAF_BITS) | (end - begin);
    return node + 1;
}

/* The SAH bin of a centroid coordinate, clamped to [0, SAH_BINS) before the
 * conversion: with extents near the float limits (c - lo) * scale is Inf or
 * NaN, and converting either to int is undefined behaviour. */
static int sah_bin(float c, float lo, float scale)
{
    float f = (c - lo) * scale;
    if (!(f > 0.0f)) return 0; /* NaN too */
    return f < (float)(SAH_BINS - 1) ? (int)f : SAH_BINS - 1;
}

/* Partitions order[begin, end) so that entries for which `left` holds come first. */
static uint32_t partition(builder* b, uint32_t begin, uint32_t end, int axis, float split_pos, int by_bin,
                          float cmin, float scale)
{
    uint32_t i = begin, j = end;
    while (i < j) {
        float c = b->centroid[3 * b->order[i] + axis];
        int left = by_bin ? sah_bin(c, cmin, scale) < (int)split_pos : c < split_pos;
        if (left) {
            ++i;
        } else {
            --j;
            uint32_t tmp = b->order[i];
            b->order[i] = b->order[j];
            b->order[j] = tmp;
        }
    }
    return i;
}

/* Pad by a fraction of the whole mesh's size: the slab test's rounding
 * scales with the ray's length, not the node's, and the box must stay
 * conservative against the triangle test's tolerance. */
static void store_padded(rtcd_bvh_node* n, const box3* bounds, float pad)
{
    for (int k = 0; k < 3; ++k) {
        n->lo[k] = bounds->lo[k] - pad - 1e-6f * fabsf(bounds->lo[k]);
        n->hi[k] = bounds->hi[k] + pad + 1e-6f * fabsf(bounds->hi[k]);
    }
}

static float mesh_pad(const box3* all)
{
    return 1e-5f * fmaxf(fmaxf(all->hi[0] - all->lo[0], all->hi[1] - all->lo[1]), all->hi[2] - all->lo[2]) + 1e-30f;
}

/* Returns the index one past the subtree rooted at `node`. */
static uint32_t build_node(builder* b, uint32_t begin, uint32_t end, uint32_t depth)
{
    uint32_t node = b->node_count++;
    box3 bounds = box_empty(), cbounds = box_empty();
    for (uint32_t i = begin; i < end; ++i) {
        box_grow(&bounds, &b->tri_box[b->order[i]]);
        const float* c = b->centroid + 3 * b->order[i];
        box3 cb = {{c[0], c[1], c[2]}, {c[0], c[1], c[2]}};
        box_grow(&cbounds, &cb);
    }
    rtcd_bvh_node* n = &b->nodes[node];
    store_padded(n, &bounds, b->pad);
    n->prims = 0;
    if (depth > b->max_depth) b->max_depth = depth;
    uint32_t count = end - begin;
    if (count <= 1) {
        n->escape = emit_leaf(b, node, begin, end);
        return n->escape;
    }

    /* Binned SAH over the centroid bounds of each axis. */
    float best_cost = FLT_MAX;
    int best_axis = -1, best_bin = 0;
    for (int axis = 0; axis < 3; ++axis) {
        float extent = cbounds.hi[axis] - cbounds.lo[axis];
        if (!(extent > 0.0f)) continue;
        float scale = SAH_BINS * (1.0f - 1e-6f) / extent;
        box3 bin_box[SAH_BINS];
        uint32_t bin_count[SAH_BINS] = {0};
        for (int k = 0; k < SAH_BINS; ++k) bin_box[k] = box_empty();
        for (uint32_t i = begin; i < end; ++i) {
            uint32_t t = b->order[i];
            int k = sah_bin(b->centroid[3 * t + axis], cbounds.lo[axis], scale);
            bin_count[k]++;
            box_grow(&bin_box[k], &b->tri_box[t]);
        }
        float right_area[SAH_BINS];
        uint32_t right_count[SAH_BINS];
        box3 acc = box_empty();
        uint32_t acc_n = 0;
        for (int k = SAH_BINS - 1; k > 0; --k) {
            box_grow(&acc, &bin_box[k]);
            acc_n += bin_count[k];
            right_area[k] = box_area(&acc);
            right_count[k] = acc_n;
        }
        acc = box_empty();
        acc_n = 0;
        for (int k = 1; k < SAH_BINS; ++k) {
            box_grow(&acc, &bin_box[k - 1]);
            acc_n += bin_count[k - 1];
            if (acc_n == 0 || right_count[k] == 0) continue;
            float cost = box_area(&acc) * acc_n + right_area[k] * right_count[k];
            if (cost < best_cost) {
                best_cost = cost;
                best_axis = axis;
                best_bin = k;
            }
        }
    }
    float leaf_cost = box_area(&bounds) * count;
    /* Traversal step costs about one triangle test relative to the parent's area. */
    float split_cost = best_cost + box_area(&bounds);
    if (count <= b->leaf_size && !(split_cost < leaf_cost)) {
        n->escape = emit_leaf(b, node, begin, end);
        return n->escape;
    }
    uint32_t mid;
    if (best_axis >= 0 && depth < MEDIAN_SPLIT_DEPTH) {
        float extent = cbounds.hi[best_axis] - cbounds.lo[best_axis];
        mid = partition(b, begin, end, best_axis, (float)best_bin, 1, cbounds.lo[best_axis],
                        SAH_BINS * (1.0f - 1e-6f) / extent);
    } else {
        /* All centroids coincide or the tree is too deep: split the list in half. */
        mid = begin + count / 2;
    }
    if (mid == begin || mid == end) mid = begin + count / 2;
    build_node(b, begin, mid, depth + 1);
    uint32_t past = build_node(b, mid, end, depth + 1);
    b->nodes[node].escape = past;
    return past;
}

rtcd_error rtcd_bvh_build(const float* vertices, const uint32_t* indices, uint32_t triangle_count,
                          uint32_t leaf_size, rtcd_bvh* out)
{
    memset(out, 0, sizeof *out);
    builder b;
    memset(&b, 0, sizeof b);
    b.vertices = vertices;
    b.indices = indices;
    b.leaf_size = leaf_size < 1 ? 1 : (leaf_size > RTCD_BVH_MAX_LEAF_SIZE ? RTCD_BVH_MAX_LEAF_SIZE : leaf_size);
    b.tri_box = rtcd_calloc(triangle_count, sizeof(box3));
    b.centroid = rtcd_calloc((size_t)triangle_count * 3, sizeof(float));
    b.order = rtcd_calloc(triangle_count, sizeof(uint32_t));
    b.nodes = rtcd_calloc((size_t)triangle_count * 2, sizeof(rtcd_bvh_node));
    rtcd_error err = RTCD_OK;
    if (!b.tri_box || !b.centroid || !b.order || !b.nodes) {
        err = rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "BVH: no memory for %u triangles", triangle_count);
        goto done;
    }
    for (uint32_t t = 0; t < triangle_count; ++t) {
        box3 bx = box_empty();
        for (int c = 0; c < 3; ++c) {
            const float* p = vertices + 3 * indices[3 * t + c];
            box3 pb = {{p[0], p[1], p[2]}, {p[0], p[1], p[2]}};
            box_grow(&bx, &pb);
        }
        b.tri_box[t] = bx;
        for (int k = 0; k < 3; ++k) b.centroid[3 * t + k] = 0.5f * (bx.lo[k] + bx.hi[k]);
        b.order[t] = t;
    }
    box3 all = box_empty();
    for (uint32_t t = 0; t < triangle_count; ++t) box_grow(&all, &b.tri_box[t]);
    b.pad = mesh_pad(&all);
    build_node(&b, 0, triangle_count, 0);
    out->node_count = b.node_count;
    out->depth = b.max_depth;
    out->leaf_size = b.leaf_size;
    out->nodes = b.nodes;
    b.nodes = NULL;
    out->tri_ids = b.order;
    b.order = NULL;
    out->tris = rtcd_alloc((size_t)triangle_count * 9 * sizeof(float));
    if (!out->tris) {
        err = rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "BVH: no memory for %u triangles", triangle_count);
        rtcd_bvh_destroy(out);
        goto done;
    }
    for (uint32_t k = 0; k < triangle_count; ++k)
        for (int c = 0; c < 3; ++c)
            memcpy(out->tris + 9 * k + 3 * c, vertices + 3 * indices[3 * out->tri_ids[k] + c], 3 * sizeof(float));
    RTCD_ASSERT(out->depth < RTCD_BVH_STACK_SIZE);
    out->built_sah = rtcd_bvh_sah(out);
    if ((err = rtcd_bvh4_build(out)) != RTCD_OK) rtcd_bvh_destroy(out);
done:
    rtcd_free(b.tri_box);
    rtcd_free(b.centroid);
    rtcd_free(b.order);
    rtcd_free(b.nodes);
    return err;
}

void rtcd_bvh_destroy(rtcd_bvh* bvh)
{
    rtcd_free(bvh->nodes4);
    rtcd_free(bvh->nodes4_src);
    rtcd_free(bvh->nodes);
    rtcd_free(bvh->tris);
    rtcd_free(bvh->tri_ids);
    memset(bvh, 0, sizeof *bvh);
}

static double node_area(const rtcd_bvh_node* n)
{
    double d[3];
    for (int k = 0; k < 3; ++k) {
        double e = (double)n->hi[k] - n->lo[k];
        d[k] = e > 0.0 ? e : 0.0; /* a compare, not fmax (a library call; every update measures the tree) */
    }
    return d[0] * d[1] + d[1] * d[2] + d[2] * d[0];
}

double rtcd_bvh_sah(const rtcd_bvh* bvh)
{
    if (bvh->node_count == 0) return 0.0;
    double sum = 0.0;
    for (uint32_t i = 0; i < bvh->node_count; ++i) {
        uint32_t prims = bvh->nodes[i].prims;
        sum += node_area(&bvh->nodes[i]) * (prims ? (double)(prims & RTCD_BVH_MAX_LEAF_SIZE) : 1.0);
    }
    double root = node_area(&bvh->nodes[0]);
    return root > 0.0 ? sum / root : 1.0;
}

/* Leaf n's triangles into the leaf-ordered corner copy, and their box. */
static void leaf_refit(rtcd_bvh* bvh, const rtcd_bvh_node* n, const float* vertices, const uint32_t* indices,
                       float lo[3], float hi[3])
{
    uint32_t first = n->prims >> RTCD_BVH_LEAF_BITS, count = n->prims & RTCD_BVH_MAX_LEAF_SIZE;
    float* t = bvh->tris + 9 * first;
    for (uint32_t k = first; k < first + count; ++k) { /* the leaf-ordered corner copy */
        const uint32_t* tri = indices + 3 * bvh->tri_ids[k];
        for (int c = 0; c < 3; ++c, t += 3) {
            const float* v = vertices + 3 * tri[c];
            t[0] = v[0], t[1] = v[1], t[2] = v[2];
        }
    }
    t = bvh->tris + 9 * first;
    for (int a = 0; a < 3; ++a) lo[a] = hi[a] = t[a];
    for (uint32_t k = 3; k < 9 * count; k += 3)
        for (int a = 0; a < 3; ++a) {
            float x = t[k + a];
            lo[a] = x < lo[a] ? x : lo[a];
            hi[a] = x > hi[a] ? x : hi[a];
        }
}

void rtcd_bvh_refit(rtcd_bvh* bvh, const float* vertices, const uint32_t* indices)
{
    /* Children follow their parent (depth-first layout): walking backwards
     * meets every child before its parent. The nodes hold raw boxes at first
     * and are padded once the root's box (the whole mesh's) gives the pad,
     * exactly as the build pads. Compares, not fminf/fmaxf (library calls):
     * the coordinates are finite (checked by the update). */
    for (uint32_t i = bvh->node_count; i-- > 0;) {
        rtcd_bvh_node* n = &bvh->nodes[i];
        float lo[3], hi[3];
        if (n->prims) {
            leaf_refit(bvh, n, vertices, indices, lo, hi);
        } else {
            const rtcd_bvh_node* l = n + 1;
            const rtcd_bvh_node* r = &bvh->nodes[n[1].escape];
            for (int a = 0; a < 3; ++a) {
                lo[a] = r->lo[a] < l->lo[a] ? r->lo[a] : l->lo[a];
                hi[a] = r->hi[a] > l->hi[a] ? r->hi[a] : l->hi[a];
            }
        }
        memcpy(n->lo, lo, sizeof lo);
        memcpy(n->hi, hi, sizeof hi);
    }
    if (bvh->node_count == 0) return;
    box3 all = {{bvh->nodes[0].lo[0], bvh->nodes[0].lo[1], bvh->nodes[0].lo[2]},
                {bvh->nodes[0].hi[0], bvh->nodes[0].hi[1], bvh->nodes[0].hi[2]}};
    float pad = mesh_pad(&all);
    for (uint32_t i = 0; i < bvh->node_count; ++i) {
        rtcd_bvh_node* n = &bvh->nodes[i];
        box3 raw = {{n->lo[0], n->lo[1], n->lo[2]}, {n->hi[0], n->hi[1], n->hi[2]}};
        store_padded(n, &raw, pad);
    }
}

#if defined(__SSE2__)
/* Three floats into lanes x, y, z (w 0): no read past the third, which may
 * be the array's last. */
static inline __m128 load3(const float* p)
{
    return _mm_movelh_ps(_mm_loadl_pi(_mm_setzero_ps(), (const __m64*)(const void*)p), _mm_load_ss(p + 2));
}

/* Lanes x, y, z of v into p[0..2], p[3] kept (a node's escape or prims). */
static inline void store3(float* p, __m128 v, __m128 xyz)
{
    _mm_storeu_ps(p, _mm_or_ps(_mm_and_ps(xyz, v), _mm_andnot_ps(xyz, _mm_loadu_ps(p))));
}

/* node_area of the box lo, hi (lanes x, y, z), in doubles: the same operations. */
static inline double area_sse(__m128 lo, __m128 hi)
{
    const __m128d zero = _mm_setzero_pd();
    __m128d dxy = _mm_max_pd(_mm_sub_pd(_mm_cvtps_pd(hi), _mm_cvtps_pd(lo)), zero);
    __m128d hz = _mm_cvtps_pd(_mm_movehl_ps(hi, hi)), lz = _mm_cvtps_pd(_mm_movehl_ps(lo, lo));
    __m128d dzw = _mm_max_pd(_mm_sub_pd(hz, lz), zero);
    __m128d dyz = _mm_shuffle_pd(dxy, dzw, 1);       /* dy, dz */
    __m128d p = _mm_mul_pd(dxy, dyz);                 /* dx dy, dy dz */
    __m128d zx = _mm_mul_sd(dzw, dxy);                /* dz dx */
    return _mm_cvtsd_f64(_mm_add_sd(_mm_add_sd(p, _mm_unpackhi_pd(p, p)), zx));
}
#endif

/* The update's refit (core/mesh/mesh_deform.c): one backward pass. Leaves get
 * their corners' box padded as the build pads (the pad from `lo`, `hi`, a
 * box holding every vertex); an inner node gets the union of its
 * children's padded boxes, unpadded: it holds them, and the slab test is
 * monotone in the box, so a ray that meets a child meets its parent. The
 * SAH cost (rtcd_bvh_sah) comes out of the same pass. With SSE a box is one
 * register pair, the same compares and operations lane by lane as the
 * scalar code (the same bits: test_deform's assert_refit_boxes). */
double rtcd_bvh_refit_sah(rtcd_bvh* bvh, const float* vertices, const uint32_t* indices, const float lo_all[3],
                          const float hi_all[3])
{
    if (bvh->node_count == 0) return 0.0;
    box3 all = {{lo_all[0], lo_all[1], lo_all[2]}, {hi_all[0], hi_all[1], hi_all[2]}};
    float pad = mesh_pad(&all);
    double sum = 0.0;
#if defined(__SSE2__)
    const __m128 xyz = _mm_castsi128_ps(_mm_set_epi32(0, -1, -1, -1)), sign = _mm_set1_ps(-0.0f);
    const __m128 vpad = _mm_set1_ps(pad), rel = _mm_set1_ps(1e-6f);
    for (uint32_t i = bvh->node_count; i-- > 0;) {
        rtcd_bvh_node* n = &bvh->nodes[i];
        __m128 lo, hi;
        double weight = 1.0;
        if (n->prims) {
            uint32_t first = n->prims >> RTCD_BVH_LEAF_BITS, count = n->prims & RTCD_BVH_MAX_LEAF_SIZE;
            float* t = bvh->tris + 9 * first;
            lo = hi = load3(vertices + 3 * indices[3 * bvh->tri_ids[first]]); /* the scalar start: corner 0 */
            for (uint32_t k = first; k < first + count; ++k, t += 9) { /* the leaf-ordered corner copy */
                const uint32_t* tri = indices + 3 * bvh->tri_ids[k];
                __m128 p0 = load3(vertices + 3 * tri[0]), p1 = load3(vertices + 3 * tri[1]);
                __m128 p2 = load3(vertices + 3 * tri[2]);
                _mm_storeu_ps(t, p0); /* its fourth lane is overwritten by p1 */
                _mm_storeu_ps(t + 3, p1);
                _mm_storel_pi((__m64*)(void*)(t + 6), p2);
                _mm_store_ss(t + 8, _mm_movehl_ps(p2, p2));
                lo = _mm_min_ps(p0, lo), hi = _mm_max_ps(p0, hi); /* lo = x < lo ? x : lo, in order */
                lo = _mm_min_ps(p1, lo), hi = _mm_max_ps(p1, hi);
                lo = _mm_min_ps(p2, lo), hi = _mm_max_ps(p2, hi);
            }
            /* store_padded: lo - pad - 1e-6 |lo|, hi + pad + 1e-6 |hi| */
            lo = _mm_sub_ps(_mm_sub_ps(lo, vpad), _mm_mul_ps(rel, _mm_andnot_ps(sign, lo)));
            hi = _mm_add_ps(_mm_add_ps(hi, vpad), _mm_mul_ps(rel, _mm_andnot_ps(sign, hi)));
            weight = (double)count;
        } else {
            const rtcd_bvh_node* l = n + 1;
            const rtcd_bvh_node* r = &bvh->nodes[n[1].escape];
            lo = _mm_min_ps(_mm_loadu_ps(r->lo), _mm_loadu_ps(l->lo));
            hi = _mm_max_ps(_mm_loadu_ps(r->hi), _mm_loadu_ps(l->hi));
        }
        store3(n->lo, lo, xyz);
        store3(n->hi, hi, xyz);
        sum += area_sse(lo, hi) * weight;
    }
#else
    for (uint32_t i = bvh->node_count; i-- > 0;) {
        rtcd_bvh_node* n = &bvh->nodes[i];
        float lo[3], hi[3];
        double weight = 1.0;
        if (n->prims) {
            uint32_t count = n->prims & RTCD_BVH_MAX_LEAF_SIZE;
            leaf_refit(bvh, n, vertices, indices, lo, hi);
            box3 raw = {{lo[0], lo[1], lo[2]}, {hi[0], hi[1], hi[2]}};
            store_padded(n, &raw, pad);
            weight = (double)count;
        } else {
            const rtcd_bvh_node* l = n + 1;
            const rtcd_bvh_node* r = &bvh->nodes[n[1].escape];
            for (int a = 0; a < 3; ++a) {
                n->lo[a] = r->lo[a] < l->lo[a] ? r->lo[a] : l->lo[a];
                n->hi[a] = r->hi[a] > l->hi[a] ? r->hi[a] : l->hi[a];
            }
        }
        sum += node_area(n) * weight;
    }
#endif
    double root = node_area(&bvh->nodes[0]);
    return root > 0.0 ? sum / root : 1.0;
}
