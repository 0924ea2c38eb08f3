/* Buffers shared by the OpenCL host code and the kernels: only 32-bit
 * scalars and arrays of them, so C and OpenCL C lay them out alike. */
#ifndef RTCD_CL_TYPES_H
#define RTCD_CL_TYPES_H

#include "../../core/shared/crossing.h"

#define RTCD_CL_GROUP_SIZE 64   /* work items per pair */
/* Contact records (colliding rays, speculative contacts, crossings) a pair
 * keeps on chip. The group kernel starts with RTCD_CL_GROUP_RAYS, so that
 * more work-groups fit a compute unit (registers and local memory allow
 * twice as many on an H100 at 256 as at 2048), and lists the few pairs
 * with more for its retry kernel, which has RTCD_CL_LOCAL_RAYS (as the
 * serial kernel); past that the host redoes the pair. A build option may
 * set either (RTCD_CL_BUILD_OPTIONS). */
#ifndef RTCD_CL_LOCAL_RAYS
#define RTCD_CL_LOCAL_RAYS 2048
#endif
#ifndef RTCD_CL_GROUP_RAYS
#define RTCD_CL_GROUP_RAYS 256
#endif
/* Kept rays (iterative algorithms) one pair holds on its device at most: 2
 * words each (feature, triangle | prediction flag). */
#define RTCD_CL_STATE_ENTRIES 1024
/* Words of the second phase's vertex marks (pair_vertex_may_cross) a pair
 * keeps on chip: pairs with more vertices run every item unmarked. */
#define RTCD_CL_MARK_WORDS 256
/* The serial kernel's second phase walks fans of fewer triangles than this
 * (cl_fans.c; a mesh with a vertex of more looks at every triangle). */
#define RTCD_CL_FAN_ITEMS 64
/* Balls per mesh for the second phase's cull (pair_may_cross). */
#define RTCD_CL_SPHERES 32 /* at most 32: a pair's ball masks are one word per mesh */

/* rtcd_cl_pair.flags */
#define RTCD_CL_ALGORITHM_MASK 3u  /* rtcd_algorithm: 0 standard, 1 iterative, 2 predictive */
#define RTCD_CL_STANDARD_PASS 4u   /* run the standard algorithm (and keep its rays), else walk the kept ones */
#define RTCD_CL_HAS_MOTION 8u      /* `before`: the pose one call earlier (reach by motion; motion rays) */
#define RTCD_CL_EDGES 16u          /* rtcd_narrowphase_def.edge_crossings */
#define RTCD_CL_DEEP 32u           /* rtcd_narrowphase_def.deep_contacts */
#define RTCD_CL_DEFORMED_SHIFT 6u  /* 2 bits: rtcd_pair_track.deformed (mesh A, B updated since `before`) */
#define RTCD_CL_APART 256u         /* the host proved the surfaces apart (reach balls, rtcd_meshes_provably_apart): no second phase */

#if RTCD_CL_SPHERES > 32 || RTCD_CL_GROUP_SIZE != 2 * RTCD_CL_SPHERES
#error "the group kernel tests one ball per work item, both meshes' in one pass"
#endif

typedef struct rtcd_cl_mesh {
    rtcd_u32 vertex_offset, vertex_count, tri_offset, tri_count;
    rtcd_u32 node_offset, node_count, grid_offset, near_offset;
    rtcd_u32 node4_offset, node4_count; /* the 4-wide copy (rtcd_bvh4_node); count 0: none */
    float lo[3], grid_lo[3], grid_inv[3], hi[3];
    float min_cell; /* smallest occupancy cell edge (grid_may_be_near) */
    float max_edge; /* longest edge (rtcd_mesh_view.max_edge) */
    float reach;    /* rtcd_mesh_view.reach */
    rtcd_u32 fans;  /* 1: every vertex's triangles form one closed fan (cl_fans.c) */
    rtcd_u32 sphere_count;
    float spheres[RTCD_CL_SPHERES][4]; /* balls holding every vertex: the mesh's clusters, merged to fit (cl_spheres.c) */
} rtcd_cl_mesh;

/* A body's pose in the call's body buffer (RTCD_KARG_BODIES): rotation
 * row-major, then translation. Pairs name bodies, so a pose crosses the bus
 * once however many pairs its body is in. */
#define RTCD_CL_BODY_FLOATS 12

typedef struct rtcd_cl_pair {
    rtcd_u32 mesh_a, mesh_b;
    rtcd_u32 body_a, body_b; /* their poses: RTCD_CL_BODY_FLOATS each in the body buffer */
    rtcd_u32 ray_offset;   /* where its colliding rays go when rays are requested */
    rtcd_u32 flags;        /* algorithm | RTCD_CL_STANDARD_PASS */
    rtcd_u32 entries_in;   /* kept rays to walk: entry index in the input arena, */
    rtcd_u32 entry_count;  /* and how many */
    rtcd_u32 entries_out;  /* where this call's kept rays go in the output arena (room for the pass's items,
                              at most RTCD_CL_STATE_ENTRIES) */
    rtcd_u32 max_iterations;
    float threshold, extension, culling; /* rtcd_iterative_params */
    float speculative;     /* the speculative contacts' reach (rtcd_pair_track.speculative) */
    float margin;          /* rtcd_narrowphase_def.speculative_margin */
    float before[12];      /* b in a's frame one call earlier (rtcd_pair_track.before) */
} rtcd_cl_pair;

typedef struct rtcd_cl_result {
    float point[4][3];
    float normal[4][3];
    float depth[4];
    rtcd_u32 feature[4];
    rtcd_u32 contact_count, colliding_rays, rays_cast, overflow;
    rtcd_u32 predictive_rays, walk_steps, kept_rays, kept_predictions;
    rtcd_u32 state_overflow; /* more kept rays than RTCD_CL_STATE_ENTRIES: the host resets the pair */
    rtcd_u32 crossings;      /* second-phase records (shared/crossing.h) */
    rtcd_u32 second_phase;   /* 1: the pass found nothing and its second phase had items (RTCD_CL_APART or not) */
    float ray_length;
} rtcd_cl_result;

/* The kernels' arguments, in order: one list for the host's clSetKernelArg
 * and the kernels' parameters (RTCD_PAIR_KERNEL_ARGS). The first
 * RTCD_CL_MESH_BUFFERS are the concatenated meshes (cl_buffers). */
enum rtcd_cl_kernel_arg {
    RTCD_KARG_MESHES = 0,
    RTCD_KARG_VERTICES,
    RTCD_KARG_VNORMALS,
    RTCD_KARG_TNORMALS,
    RTCD_KARG_INDICES,
    RTCD_KARG_NODES,
    RTCD_KARG_TRIS,
    RTCD_KARG_TRI_IDS,
    RTCD_KARG_GRIDS,
    RTCD_KARG_NEARS,
    RTCD_KARG_NEIGHBORS,
    RTCD_KARG_PREV_VERTICES, /* the vertices before each mesh's last update (its vertices when none) */
    RTCD_KARG_VERTEX_BALLS,  /* uchar per vertex: its ball among the entry's spheres (rtcd_mesh_view.vertex_balls) */
    RTCD_KARG_VERTEX_TRIS,   /* uint per vertex: a triangle holding it, mesh-local (cl_fans.c) */
    RTCD_KARG_NODES4,        /* rtcd_bvh4_node: each mesh's 4-wide copy of its BVH (RTCD_CL_WALK4) */
    RTCD_KARG_BODIES,      /* float[RTCD_CL_BODY_FLOATS] per body of the call */
    RTCD_KARG_PAIRS,       /* rtcd_cl_pair[pair_count] */
    RTCD_KARG_PAIR_COUNT,  /* uint */
    RTCD_KARG_BRUTE_FORCE, /* uint: 1 = brute-force traversal */
    RTCD_KARG_MODE,        /* uint: rtcd_contact_normal */
    RTCD_KARG_RESULTS,     /* rtcd_cl_result[pair_count] */
    RTCD_KARG_RAYS,        /* rtcd_world_ray at each pair's ray_offset */
    RTCD_KARG_WANT_RAYS,   /* uint */
    RTCD_KARG_STATE,       /* uint: the kept rays the last call wrote (the device's input arena) */
    RTCD_KARG_STATE_OUT,   /* uint: where this call's kept rays go (the output arena) */
    RTCD_KARG_RETRY,       /* uint: the group kernels' retry list, its count first (not in the serial kernel) */
    RTCD_KARG_COUNT
};
#define RTCD_CL_MESH_BUFFERS 15

#ifdef __OPENCL_VERSION__
#define RTCD_PAIR_KERNEL_ARGS                                                                                      \
    __global const rtcd_cl_mesh *meshes, __global const float *vertices, __global const float *vnormals,           \
        __global const float *tnormals, __global const uint *indices, __global const rtcd_bvh_node *nodes,         \
        __global const float *tris, __global const uint *tri_ids, __global const uchar *grids,                     \
        __global const uchar *nears, __global const uint *neighbors, __global const float *prev_vertices,         \
        __global const uchar *vertex_balls, __global const uint *vertex_tris,                                     \
        __global const rtcd_bvh4_node *nodes4, __global const float *bodies,                                      \
        __global const rtcd_cl_pair *pairs, uint pair_count, uint brute_force, uint mode,                         \
        __global rtcd_cl_result *results,                                                                         \
        __global rtcd_world_ray *rays_out, uint want_rays, __global const uint *state, __global uint *state_out
/* The same, as arguments of a call. */
#define RTCD_PAIR_KERNEL_NAMES                                                                                     \
    meshes, vertices, vnormals, tnormals, indices, nodes, tris, tri_ids, grids, nears, neighbors, prev_vertices,  \
        vertex_balls, vertex_tris, nodes4, bodies, pairs, pair_count, brute_force, mode, results, rays_out,       \
        want_rays, state, state_out
#endif

#endif
