/* Private to rtcd: the mesh's layout (core/mesh.c) and what is built with
 * it: the BVH and its 4-wide copy, the occupancy and near grids, the vertex
 * clusters, mass properties, the surface-overlap test. */
#ifndef RTCD_CORE_MESH_INTERNAL_H
#define RTCD_CORE_MESH_INTERNAL_H

#include "hooks.h"
#include "shared/bvh.h"
#include "shared/iterate.h"
#include "shared/mesh_view.h"

/* 4-wide CPU copy of the binary tree (core/bvh4.c): children's boxes side by
 * side for one SSE slab test; child >= 0 is a node, < 0 a leaf (-1 - prims). */
typedef struct rtcd_bvh4_node {
    float lo[3][4], hi[3][4];
    int32_t child[4];
    uint32_t count;
} rtcd_bvh4_node;

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

/* Occupancy of the mesh's box (core/solid_grid.c, RTCD_GRID_N cells per
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
 * (core/mesh_deform.c): built over the mesh's box widened by `margin`, the
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
 * other mesh (core/solid_grid.c). */
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
    /* Deformation (rtcd_mesh_update_vertices, core/mesh_deform.c). */
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
    unsigned char grid_lock;  /* the lazy fill's spin lock (__atomic_test_and_set) */
    uint64_t grid_rebuilds, cluster_sorts, lazy_fills;
    double part_ms[RTCD_DEFORM_PARTS]; /* time spent per part over all updates */
};

/* Shared by creation and rtcd_mesh_update_vertices (core/mesh.c). */
/* volume_out (may be NULL): the closed mesh's volume, as rtcd_compute_volume
 * sums it (up to rounding), from the check's own cross products. */
rtcd_error rtcd_mesh_check_shape(const char* name, const float* v, uint32_t vertex_count, const uint32_t* idx,
                                 uint32_t triangle_count, double* volume_out);
rtcd_error rtcd_mesh_fail_inside_out(const char* name, double volume, int flip_hint);
/* sums: 3 doubles per vertex of scratch, or NULL to allocate them here. */
rtcd_error rtcd_mesh_derive_geometry(rtcd_mesh* m, double* sums);

rtcd_error rtcd_solid_grid_build(rtcd_mesh* m);
/* The same over the mesh's box widened by margin on every side. */
rtcd_error rtcd_solid_grid_build_margin(rtcd_mesh* m, float margin);
/* The occupancy of the vertices of now over the grid's box as it is (which
 * must hold the mesh's box). */
rtcd_error rtcd_solid_grid_fill(rtcd_mesh* m);
rtcd_error rtcd_near_grid_build(rtcd_mesh* m); /* after the BVH */
rtcd_error rtcd_vertex_clusters_build(rtcd_mesh* m);
/* New balls for the clusters' vertices as they are now (same runs). */
void rtcd_vertex_clusters_refit(rtcd_mesh* m);

/* The occupancy and near grid for the vertices of now (core/mesh_deform.c):
 * an update leaves them to the first reader, who fills them under the
 * mesh's lock (pair workers may meet one mesh at once). The grid's box is
 * never lazy. Every reader of grid.solid or grid.near calls this first. */
RTCD_API void rtcd_mesh_fill_grids(rtcd_mesh* m); /* exported for the tests' grid checks */
static inline void rtcd_mesh_grids_ready(const rtcd_mesh* m)
{
    /* A cache of the const mesh: filling it changes no answer, only when the work is done. */
    if (__atomic_load_n(&m->grids_stale, __ATOMIC_ACQUIRE)) rtcd_mesh_fill_grids((rtcd_mesh*)m);
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

/* The squared distance from p to m's surface, searching only closer than
 * sqrt(bound2) first (a bound at or above the distance keeps it exact and
 * prunes the search; below it, the whole mesh is searched). Needs the BVH. */
double rtcd_mesh_closest_distance2_within(const rtcd_mesh* m, const double p[3], double bound2);

/* Is p behind the open surface m (core/point_query.c)? Needs the BVH. */
int rtcd_open_surface_contains(const rtcd_mesh* m, rtcd_v3 p);

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

/* Mass properties of a closed surface (core/mass.c). */
rtcd_mass_properties rtcd_compute_mass_properties(const float* vertices, const uint32_t* indices,
                                                  uint32_t triangle_count);
/* Its volume alone, the same value, at a fraction of the cost. */
double rtcd_compute_volume(const float* vertices, const uint32_t* indices, uint32_t triangle_count);

/* Do the surfaces of a and b (b placed by b_in_a, the pose of b in a's frame)
 * intersect? Conservative: touching or coplanar overlap counts as yes
 * (core/surface_overlap.c). */
int rtcd_surfaces_intersect(const rtcd_mesh* a, const rtcd_mesh* b, const rtcd_xform* b_in_a);

#endif
