/* A 4-wide copy of the BVH for the CPU (and the OpenCL CPU devices): the
 * binary tree collapsed so that one SSE slab test covers four children. Same leaves (the triangle slots of the
 * binary tree), same padded boxes and the same tie-break, so it returns
 * exactly what the binary walks return; the GPU keeps the binary stackless
 * layout. Where SSE is missing the binary walk is used instead. */
#include "bvh_tree.h"

#include <string.h>

#if defined(__SSE2__)
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

/* The walk itself is the kernels' (shared/bvh.h bvh4_first_hit, SSE here
 * through shared/f4.h): one copy for the CPU and the CPU devices. */
rtcd_tri_hit rtcd_bvh4_first_hit(const rtcd_bvh* bvh, const rtcd_bvh_view* view, rtcd_v3 org, rtcd_v3 dir,
                                 float tmin, float tmax, uint32_t skip_vertex)
{
#ifdef RTCD_HAVE_BVH4
    return bvh4_first_hit(bvh->nodes4, view, org, dir, tmin, tmax, skip_vertex);
#else
    (void)bvh;
    return bvh_first_hit(view, org, dir, tmin, tmax, skip_vertex);
#endif
}
