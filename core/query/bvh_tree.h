/* Private to rtcd: the CPU's BVH of a mesh, binary and its 4-wide copy, and
 * what builds, refits and walks it (core/query/bvh_build.c, core/query/bvh4.c).
 * It knows triangles only, not the mesh around them. */
#ifndef RTCD_CORE_BVH_TREE_H
#define RTCD_CORE_BVH_TREE_H

#include "hooks.h"
#include "shared/bvh.h"

/* The 4-wide copy's node, rtcd_bvh4_node, is shared/bvh.h's: the kernels read it too. */
typedef struct rtcd_bvh {
    rtcd_bvh4_node* nodes4; /* NULL: use the binary walk */
    uint32_t* nodes4_src;   /* 4 per 4-wide node: the binary node of each child (refits copy its box) */
    uint32_t node4_count;
    rtcd_bvh_node* nodes;
    float* tris;        /* 9 per slot: leaf-ordered triangle corners */
    uint32_t* tri_ids;
    uint32_t node_count;
    uint32_t depth;
    uint32_t leaf_size;  /* as built: a rebuild after deformation uses it again */
    double built_sah;    /* rtcd_bvh_sah when built: refits are measured against it */
} rtcd_bvh;

#define RTCD_BVH_DEFAULT_LEAF_SIZE 4u

/* Builds with binned SAH over the mesh's triangles. */
rtcd_error rtcd_bvh_build(const float* vertices, const uint32_t* indices, uint32_t triangle_count,
                          uint32_t leaf_size, rtcd_bvh* out);
void rtcd_bvh_destroy(rtcd_bvh* bvh);
/* Surface-area cost of the tree relative to its root box: inner nodes count 1,
 * leaves their triangle count (the builder's cost model). */
double rtcd_bvh_sah(const rtcd_bvh* bvh);
/* New boxes and leaf-ordered corners for moved vertices, same topology; the
 * 4-wide copy is left alone (rebuild it with rtcd_bvh4_build). */
void rtcd_bvh_refit(rtcd_bvh* bvh, const float* vertices, const uint32_t* indices);
/* The same in one pass for an update, returning rtcd_bvh_sah of the result;
 * lo, hi: a box holding every vertex (the padding's scale). */
double rtcd_bvh_refit_sah(rtcd_bvh* bvh, const float* vertices, const uint32_t* indices, const float lo[3],
                          const float hi[3]);
rtcd_error rtcd_bvh4_build(rtcd_bvh* bvh);
/* The 4-wide copy's boxes from the (refitted) binary nodes; same layout. */
void rtcd_bvh4_refit(rtcd_bvh* bvh);
/* Nearest hit through the 4-wide copy; same answer as bvh_first_hit. */
rtcd_tri_hit rtcd_bvh4_first_hit(const rtcd_bvh* bvh, const rtcd_bvh_view* view, rtcd_v3 org, rtcd_v3 dir,
                                 float tmin, float tmax, uint32_t skip_vertex);

#endif
