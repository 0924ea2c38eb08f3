/* Private to rtcd: the mesh's layout (struct rtcd_mesh) with what is built
 * with it (the BVH, the occupancy and near grids, the vertex clusters), and
 * the inline reads of it. The layout only: each builder has its own header
 * (mesh/solid_grid.h, query/bvh_tree.h, ...), mesh/mesh_internal.h brings
 * them all. */
#ifndef RTCD_CORE_MESH_LAYOUT_H
#define RTCD_CORE_MESH_LAYOUT_H

#include "hooks.h"
#include "query/bvh_tree.h"
#include "shared/bvh.h"
#include "shared/iterate.h"
#include "shared/mesh_view.h"

/* Occupancy of the mesh's box (core/mesh/solid_grid.c, RTCD_GRID_N cells per
 * axis): bit set = the cell may hold surface or inside. */
typedef struct rtcd_solid_grid {
    float lo[3], inv_cell[3];
    uint8_t solid[RTCD_GRID_BYTES];
    /* Distance from each cell's centre to the surface in steps of
     * min_cell / RTCD_NEAR_STEPS, rounded down: the predictive candidates
     * (grid_may_be_near, shared/iterate.h). */
    uint8_t near[RTCD_NEAR_BYTES];
    float min_cell; /* smallest cell edge */
} rtcd_solid_grid;

/* Deforming meshes keep the grids' box and the near grid lazily
 * (core/mesh/mesh_deform.c): built over the mesh's box widened by `margin`, the
 * near grid kept as built here and between rebuilds lowered by `moved`, the
 * sum of the updates' largest displacements since the build. */
typedef struct rtcd_grid_keep {
    uint8_t near[RTCD_NEAR_BYTES];
    float margin;      /* room the grid box has around the mesh's box when built */
    double moved;      /* displacement bound since the build (mesh frame) */
    int lowered;       /* steps the current near grid is lowered by */
} rtcd_grid_keep;

/* Vertices in spatial runs of up to RTCD_CLUSTER_SIZE (Morton order), each
 * with a bounding sphere: the candidate sweep skips whole runs far from the
 * other mesh (core/mesh/solid_grid.c). */
#define RTCD_CLUSTER_SIZE 32
typedef struct rtcd_vertex_cluster {
    float centre[3], radius;
    uint32_t first, count; /* into rtcd_mesh.cluster_vertices */
} rtcd_vertex_cluster;

struct rtcd_mesh {
    int refcount;
    /* Never reused in the process (rtcd_mesh_id): whoever keeps a mesh's
     * address between calls keeps the id beside it, since a mesh created
     * after another's release may get its address. */
    uint64_t id;
    uint32_t vertex_count, triangle_count;
    char* name;
    float* vertices;          /* 3 per vertex */
    uint32_t* indices;        /* 3 per triangle */
    float* triangle_normals;  /* 3 per triangle */
    float* vertex_normals;    /* 3 per vertex */
    uint32_t* neighbors;      /* 3 per triangle */
    float lo[3], hi[3];
    int open_surface;         /* RTCD_MESH_OPEN_SURFACE: open edges have neighbour RTCD_INVALID */
    int deformable;           /* RTCD_MESH_DEFORMABLE or updated once: the near grid's cheap bound */
    float facing[3];          /* open surfaces: the area-weighted mean normal (unit), where the front looks */
    float mean_edge_length;
    float max_edge_length;    /* longest edge (crossings: a triangle lies within it of its vertices) */
    float reach;              /* largest distance of a vertex from the origin */
    rtcd_mass_properties mass;
    rtcd_bvh bvh;
    rtcd_solid_grid grid;
    uint32_t* cluster_vertices; /* vertex ids, cluster by cluster */
    rtcd_vertex_cluster* clusters;
    uint32_t cluster_count;
    /* Deformation (rtcd_mesh_update_vertices, core/mesh/mesh_deform.c). */
    uint64_t version;         /* 0 at creation, +1 per update: backends re-upload on a change */
    float* prev_vertices;     /* the vertices before the last update (NULL before the first):
                                 the deformation of the last step, for the motion rays */
    double deformation;       /* sum over updates of the largest vertex displacement: a bound on
                                 how far any vertex moved between two versions (mesh frame) */
    uint64_t bvh_refits, bvh_rebuilds; /* how the updates kept the BVH (rtcd_mesh_deform_stats) */
    int mass_stale;           /* updated: mass properties computed on request (rtcd_mesh_mass_properties) */
    rtcd_grid_keep* keep;     /* the grids as built, once the mesh has deformed (NULL before) */
    float* spare_vertices;    /* the next update's vertex buffer (the one before prev_vertices) */
    double* normal_sums;      /* scratch, 3 per vertex: the normals' sums, then the grid coordinates */
    /* 1 (read with __atomic): an update left the occupancy to fill and the
     * near grid to lower; the first reader does it (rtcd_mesh_grids_ready). */
    int grids_stale;
    /* Who fills them (mesh_deform.c's rtcd_mesh_fill_grids, set with
     * grids_stale): the layout calls it without depending on the updater. */
    void (*fill_grids)(struct rtcd_mesh* m);
    unsigned char grid_lock;  /* the lazy fill's spin lock (__atomic_test_and_set) */
    uint64_t grid_rebuilds, cluster_sorts, lazy_fills;
    uint64_t edge_sums_in_order; /* derivations whose edge sum was not exact in any order (mesh.c) */
    double part_ms[RTCD_DEFORM_PARTS]; /* time spent per part over all updates */
};

/* The occupancy and near grid for the vertices of now (core/mesh/mesh_deform.c):
 * an update leaves them to the first reader, who fills them under the
 * mesh's lock (pair workers may meet one mesh at once). The grid's box is
 * never lazy. Every reader of grid.solid or grid.near calls this first. */
static inline void rtcd_mesh_grids_ready(const rtcd_mesh* m)
{
    /* A cache of the const mesh: filling it changes no answer, only when the work is done. */
    if (__atomic_load_n(&m->grids_stale, __ATOMIC_ACQUIRE)) m->fill_grids((rtcd_mesh*)m);
}

/* May a ball (centre c, radius r, in m's frame) come within `dist` of m's grid box? */
static inline int rtcd_ball_near_grid(const rtcd_mesh* m, rtcd_v3 c, float r, float dist)
{
    const rtcd_solid_grid* g = &m->grid;
    float d2 = 0.0f, lim = r + dist;
    for (int k = 0; k < 3; ++k) {
        float v = k == 0 ? c.x : (k == 1 ? c.y : c.z);
        float lo = g->lo[k], hi = g->lo[k] + RTCD_GRID_N / g->inv_cell[k];
        float e = v < lo ? lo - v : (v > hi ? v - hi : 0.0f);
        d2 += e * e;
    }
    return d2 <= lim * lim;
}

/* 0 when p (mesh frame) is certainly outside the mesh. */
static inline int rtcd_mesh_may_contain(const rtcd_mesh* m, rtcd_v3 p)
{
    rtcd_mesh_grids_ready(m);
    return grid_may_contain(m->grid.solid, v3_load(m->grid.lo), v3_load(m->grid.inv_cell), p);
}

/* May p (mesh frame) be within dist of the mesh? (grid_may_be_near) */
static inline int rtcd_mesh_may_be_near(const rtcd_mesh* m, rtcd_v3 p, float dist)
{
    rtcd_mesh_grids_ready(m);
    const rtcd_solid_grid* g = &m->grid;
    return grid_may_be_near(g->near, v3_load(g->lo), v3_load(g->inv_cell), g->min_cell, p, dist);
}

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

/* The mesh as the shared pipeline reads it (shared/mesh_view.h); the BVH
 * traversal picks the 4-wide walk or the binary one (same answers). */
static inline rtcd_mesh_view rtcd_mesh_view_of(const rtcd_mesh* m, rtcd_traversal traversal)
{
    rtcd_mesh_view v;
    rtcd_mesh_grids_ready(m);
    v.bvh = rtcd_mesh_bvh_view(m);
    v.vertices = m->vertices;
    v.prev_vertices = m->prev_vertices ? m->prev_vertices : m->vertices;
    v.vnormals = m->vertex_normals;
    v.tnormals = m->triangle_normals;
    v.indices = m->indices;
    v.neighbors = m->neighbors;
    v.solid = m->grid.solid;
    v.near = m->grid.near;
    v.vertex_count = m->vertex_count;
    v.tri_count = m->triangle_count;
    v.lo = v3_load(m->lo);
    v.hi = v3_load(m->hi);
    v.grid_lo = v3_load(m->grid.lo);
    v.grid_inv = v3_load(m->grid.inv_cell);
    v.min_cell = m->grid.min_cell;
    /* A cluster reads as a ball: centre, radius (asserted in narrowphase.c). */
    v.spheres = m->clusters ? m->clusters[0].centre : NULL;
    v.sphere_count = m->clusters ? m->cluster_count : 0u;
    v.sphere_stride = (rtcd_u32)(sizeof(rtcd_vertex_cluster) / sizeof(float));
    v.max_edge = m->max_edge_length;
    v.reach = m->reach;
    v.vertex_balls = NULL; /* the CPU walks its clusters (narrowphase.c) */
    v.accel = traversal == RTCD_TRAVERSAL_BVH && m->bvh.nodes4 ? &m->bvh : NULL;
    return v;
}

static inline rtcd_v3 mesh_vertex(const rtcd_mesh* m, uint32_t i) { return v3_load(m->vertices + 3 * i); }

#endif
