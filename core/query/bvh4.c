/* A 4-wide copy of the BVH for the CPU: the binary tree collapsed so that one
 * SSE slab test covers four children. Same leaves (the triangle slots of the
 * binary tree), same padded boxes and the same tie-break, so it returns
 * exactly what the binary walks return; the GPU keeps the binary stackless
 * layout. Where SSE is missing the binary walk is used instead. */
#include "bvh_tree.h"

#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#include <xmmintrin.h>
#define RTCD_HAVE_BVH4 1
#endif

#define BVH4_LEAF(prims) (-1 - (int32_t)(prims)) /* leaf children are negative */

static float node_area(const rtcd_bvh_node* n)
{
    float dx = n->hi[0] - n->lo[0], dy = n->hi[1] - n->lo[1], dz = n->hi[2] - n->lo[2];
    return dx * dy + dy * dz + dz * dx;
}

/* Emits the 4-wide node for binary node `root`; returns its index. */
static uint32_t collapse(const rtcd_bvh* bvh, uint32_t root, rtcd_bvh4_node* out, uint32_t* src, uint32_t* count)
{
    uint32_t self = (*count)++;
    uint32_t kids[4] = {root + 1, bvh->nodes[root + 1].escape, 0, 0};
    uint32_t n = 2;
    /* Open the largest inner child until there are four. */
    while (n < 4) {
        int best = -1;
        float best_area = -1.0f;
        for (uint32_t k = 0; k < n; ++k) {
            const rtcd_bvh_node* c = &bvh->nodes[kids[k]];
            if (c->prims == 0 && node_area(c) > best_area) {
                best_area = node_area(c);
                best = (int)k;
            }
        }
        if (best < 0) break;
        uint32_t open = kids[best];
        kids[best] = open + 1;
        kids[n++] = bvh->nodes[open + 1].escape;
    }
    rtcd_bvh4_node node;
    memset(&node, 0, sizeof node);
    node.count = n;
    for (uint32_t k = 0; k < 4; ++k) {
        for (int a = 0; a < 3; ++a) {
            node.lo[a][k] = k < n ? bvh->nodes[kids[k]].lo[a] : 0.0f;
            node.hi[a][k] = k < n ? bvh->nodes[kids[k]].hi[a] : 0.0f;
        }
    }
    for (uint32_t k = 0; k < n; ++k) {
        const rtcd_bvh_node* c = &bvh->nodes[kids[k]];
        node.child[k] = c->prims ? BVH4_LEAF(c->prims) : (int32_t)collapse(bvh, kids[k], out, src, count);
    }
    for (uint32_t k = 0; k < 4; ++k) src[4 * self + k] = k < n ? kids[k] : RTCD_INVALID;
    out[self] = node;
    return self;
}

rtcd_error rtcd_bvh4_build(rtcd_bvh* bvh)
{
    bvh->nodes4 = NULL;
    bvh->nodes4_src = NULL;
    bvh->node4_count = 0;
#ifdef RTCD_HAVE_BVH4
    /* A single-leaf tree stays binary: nothing to collapse. */
    if (bvh->node_count < 3 || bvh->nodes[0].prims != 0) return RTCD_OK;
    bvh->nodes4 = rtcd_calloc(bvh->node_count, sizeof(rtcd_bvh4_node));
    bvh->nodes4_src = rtcd_alloc((size_t)bvh->node_count * 4 * sizeof(uint32_t));
    if (!bvh->nodes4 || !bvh->nodes4_src) {
        rtcd_free(bvh->nodes4);
        rtcd_free(bvh->nodes4_src);
        bvh->nodes4 = NULL;
        bvh->nodes4_src = NULL;
        return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "BVH: no memory for the 4-wide copy");
    }
    collapse(bvh, 0, bvh->nodes4, bvh->nodes4_src, &bvh->node4_count);
#endif
    return RTCD_OK;
}

/* Keeps the collapse's choice of children (made on the boxes as built): the
 * walk is exact with any grouping, only its speed follows the boxes. */
void rtcd_bvh4_refit(rtcd_bvh* bvh)
{
    for (uint32_t i = 0; i < bvh->node4_count; ++i) {
        rtcd_bvh4_node* n = &bvh->nodes4[i];
        for (uint32_t k = 0; k < n->count; ++k) {
            const rtcd_bvh_node* c = &bvh->nodes[bvh->nodes4_src[4 * i + k]];
            for (int a = 0; a < 3; ++a) {
                n->lo[a][k] = c->lo[a];
                n->hi[a][k] = c->hi[a];
            }
        }
    }
}

#ifdef RTCD_HAVE_BVH4
rtcd_tri_hit rtcd_bvh4_first_hit(const rtcd_bvh* bvh, const rtcd_bvh_view* view, rtcd_v3 org, rtcd_v3 dir,
                                 float tmin, float tmax, uint32_t skip_vertex)
{
    rtcd_tri_hit best = {RTCD_INVALID, tmax, 0.0f, 0.0f};
    rtcd_v3 inv = safe_reciprocal(dir);
    const __m128 ox = _mm_set1_ps(org.x), oy = _mm_set1_ps(org.y), oz = _mm_set1_ps(org.z);
    const __m128 ix = _mm_set1_ps(inv.x), iy = _mm_set1_ps(inv.y), iz = _mm_set1_ps(inv.z);
    const __m128 vtmin = _mm_set1_ps(tmin);
    /* Each node stacks at most 3; the binary depth is < 64, so 256 never fills. */
    int32_t stack[256];
    float stack_t[256];
    int sp = 0;
    int32_t id = 0;
    for (;;) {
        const rtcd_bvh4_node* n = &bvh->nodes4[id];
        /* The scalar ray_aabb, four boxes at a time. */
        __m128 tx0 = _mm_mul_ps(_mm_sub_ps(_mm_loadu_ps(n->lo[0]), ox), ix);
        __m128 tx1 = _mm_mul_ps(_mm_sub_ps(_mm_loadu_ps(n->hi[0]), ox), ix);
        __m128 ty0 = _mm_mul_ps(_mm_sub_ps(_mm_loadu_ps(n->lo[1]), oy), iy);
        __m128 ty1 = _mm_mul_ps(_mm_sub_ps(_mm_loadu_ps(n->hi[1]), oy), iy);
        __m128 tz0 = _mm_mul_ps(_mm_sub_ps(_mm_loadu_ps(n->lo[2]), oz), iz);
        __m128 tz1 = _mm_mul_ps(_mm_sub_ps(_mm_loadu_ps(n->hi[2]), oz), iz);
        __m128 t0 = _mm_max_ps(_mm_max_ps(_mm_min_ps(tx0, tx1), _mm_min_ps(ty0, ty1)),
                               _mm_max_ps(_mm_min_ps(tz0, tz1), vtmin));
        __m128 t1 = _mm_min_ps(_mm_min_ps(_mm_max_ps(tx0, tx1), _mm_max_ps(ty0, ty1)),
                               _mm_min_ps(_mm_max_ps(tz0, tz1), _mm_set1_ps(best.t)));
        int mask = _mm_movemask_ps(_mm_cmple_ps(t0, t1)) & ((1 << n->count) - 1);
        float tn[4];
        _mm_storeu_ps(tn, t0);
        /* Hit children nearest first; leaves are tested at once (shrinking
         * best.t early), inner nodes are visited or stacked. */
        int order[4], m = 0;
        for (int k = 0; k < 4; ++k)
            if (mask & (1 << k)) order[m++] = k;
        for (int a = 1; a < m; ++a)
            for (int b = a; b > 0 && tn[order[b]] < tn[order[b - 1]]; --b) {
                int tmp = order[b];
                order[b] = order[b - 1];
                order[b - 1] = tmp;
            }
        int32_t next = -1;
        int later[4], n_later = 0;
        for (int k = 0; k < m; ++k) {
            int32_t c = n->child[order[k]];
            if (tn[order[k]] > best.t) break; /* the rest are farther */
            if (c < 0) leaf_first_hit(view, (uint32_t)(-1 - c), org, dir, tmin, skip_vertex, &best);
            else if (next < 0) next = c;
            else later[n_later++] = order[k];
        }
        /* Farther inner children go on the stack farthest first, so pops come nearest first. */
        for (int k = n_later - 1; k >= 0; --k) {
            stack[sp] = n->child[later[k]];
            stack_t[sp++] = tn[later[k]];
        }
        if (next >= 0) {
            id = next;
            continue;
        }
        int found = 0;
        while (sp > 0) {
            --sp;
            if (stack_t[sp] <= best.t) {
                id = stack[sp];
                found = 1;
                break;
            }
        }
        if (!found) break;
    }
    return best;
}
#else
rtcd_tri_hit rtcd_bvh4_first_hit(const rtcd_bvh* bvh, const rtcd_bvh_view* view, rtcd_v3 org, rtcd_v3 dir,
                                 float tmin, float tmax, uint32_t skip_vertex)
{
    (void)bvh;
    return bvh_first_hit(view, org, dir, tmin, tmax, skip_vertex);
}
#endif
