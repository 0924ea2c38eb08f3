/* Private to rtcd: hooks, error reporting and the mesh's layout. */
#ifndef RTCD_CORE_INTERNAL_H
#define RTCD_CORE_INTERNAL_H

#include <rtcd/rtcd.h>

#include "shared/bvh.h"

#if defined(__GNUC__)
#define RTCD_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define RTCD_PRINTF(fmt, args)
#endif

void* rtcd_alloc(size_t size);          /* 64-byte aligned, NULL on failure */
void* rtcd_calloc(size_t count, size_t size); /* zeroed, overflow-checked */
void rtcd_free(void* memory);

/* Records the message for rtcd_last_error_message, calls the user's error
 * callback and returns `code`, so call sites read `return rtcd_fail(...)`. */
rtcd_error rtcd_fail(rtcd_error code, const char* format, ...) RTCD_PRINTF(2, 3);
void rtcd_log(rtcd_log_level level, const char* format, ...) RTCD_PRINTF(2, 3);
int rtcd_assert_failed(const char* condition, const char* file, int line);

#define RTCD_ASSERT(c) ((c) ? (void)0 : (void)rtcd_assert_failed(#c, __FILE__, __LINE__))

static inline rtcd_xform rtcd_to_xform(const rtcd_transform* t)
{
    rtcd_xform x;
    for (int i = 0; i < 9; ++i) x.r[i] = t->rotation[i];
    for (int i = 0; i < 3; ++i) x.t[i] = t->translation[i];
    return x;
}

/* 4-wide CPU copy of the binary tree (core/bvh4.c): children's boxes side by
 * side for one SSE slab test; child >= 0 is a node, < 0 a leaf (-1 - prims). */
typedef struct rtcd_bvh4_node {
    float lo[3][4], hi[3][4];
    int32_t child[4];
    uint32_t count;
} rtcd_bvh4_node;

typedef struct rtcd_bvh {
    rtcd_bvh4_node* nodes4; /* NULL: use the binary walk */
    uint32_t node4_count;
    rtcd_bvh_node* nodes;
    float* tris;        /* 9 per slot: leaf-ordered triangle corners */
    uint32_t* tri_ids;
    uint32_t node_count;
    uint32_t depth;
} rtcd_bvh;

/* Occupancy of the mesh's box (core/solid_grid.c): bit set = the cell may
 * hold surface or inside. */
#define RTCD_GRID_N 16
typedef struct rtcd_solid_grid {
    float lo[3], inv_cell[3];
    uint8_t solid[RTCD_GRID_N * RTCD_GRID_N * RTCD_GRID_N / 8];
} rtcd_solid_grid;

struct rtcd_mesh {
    int refcount;
    uint32_t vertex_count, triangle_count;
    char* name;
    float* vertices;          /* 3 per vertex */
    uint32_t* indices;        /* 3 per triangle */
    float* triangle_normals;  /* 3 per triangle */
    float* vertex_normals;    /* 3 per vertex */
    uint32_t* neighbors;      /* 3 per triangle */
    float lo[3], hi[3];
    float mean_edge_length;
    rtcd_mass_properties mass;
    rtcd_bvh bvh;
    rtcd_solid_grid grid;
};

rtcd_error rtcd_solid_grid_build(rtcd_mesh* m);

/* 0 when p (mesh frame) is certainly outside the mesh. */
static inline int rtcd_mesh_may_contain(const rtcd_mesh* m, rtcd_v3 p)
{
    const rtcd_solid_grid* g = &m->grid;
    float fx = (p.x - g->lo[0]) * g->inv_cell[0], fy = (p.y - g->lo[1]) * g->inv_cell[1],
          fz = (p.z - g->lo[2]) * g->inv_cell[2];
    if (!(fx >= 0.0f && fy >= 0.0f && fz >= 0.0f && fx < RTCD_GRID_N && fy < RTCD_GRID_N && fz < RTCD_GRID_N)) return 0;
    uint32_t i = ((uint32_t)fz * RTCD_GRID_N + (uint32_t)fy) * RTCD_GRID_N + (uint32_t)fx;
    return (g->solid[i >> 3] >> (i & 7)) & 1;
}

/* Builds with binned SAH over the mesh's triangles. */
rtcd_error rtcd_bvh_build(const float* vertices, const uint32_t* indices, uint32_t triangle_count,
                          uint32_t leaf_size, rtcd_bvh* out);
void rtcd_bvh_destroy(rtcd_bvh* bvh);
rtcd_error rtcd_bvh4_build(rtcd_bvh* bvh);
/* Nearest hit through the 4-wide copy; same answer as bvh_first_hit. */
rtcd_tri_hit rtcd_bvh4_first_hit(const rtcd_bvh* bvh, const rtcd_bvh_view* view, rtcd_v3 org, rtcd_v3 dir,
                                 float tmin, float tmax, uint32_t skip_vertex);

static inline rtcd_bvh_view rtcd_mesh_bvh_view(const rtcd_mesh* m)
{
    rtcd_bvh_view v;
    v.nodes = m->bvh.nodes;
    v.tris = m->bvh.tris;
    v.tri_ids = m->bvh.tri_ids;
    v.indices = m->indices;
    v.node_count = m->bvh.node_count;
    return v;
}

static inline rtcd_v3 mesh_vertex(const rtcd_mesh* m, uint32_t i) { return v3_load(m->vertices + 3 * i); }

/* Mass properties of a closed surface (core/mass.c). */
rtcd_mass_properties rtcd_compute_mass_properties(const float* vertices, const uint32_t* indices,
                                                  uint32_t triangle_count);

/* Do the surfaces of a and b (b placed by b_in_a, the pose of b in a's frame)
 * intersect? Conservative: touching or coplanar overlap counts as yes
 * (core/surface_overlap.c). */
int rtcd_surfaces_intersect(const rtcd_mesh* a, const rtcd_mesh* b, const rtcd_xform* b_in_a);

#endif
