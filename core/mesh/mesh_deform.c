/* Deforming meshes (rtcd_mesh_update_vertices): new positions, same triangles.
 *
 * An update does what the next step reads and no more, in place:
 *   check     the new vertices, copied into a spare buffer, checked as
 *             creation checks them (finite, in range, no degenerate triangle);
 *   volume    a closed mesh's volume (inside out is refused): the same sum as
 *             the mass properties', without the inertia;
 *   geometry  normals, box, edge lengths (mean and longest), reach: exact,
 *             bit for bit what creation computes for the same vertices;
 *   bvh       refitted in place in one pass with its SAH cost, the 4-wide
 *             copy's boxes with it (see below);
 *   grids     the occupancy filled over the kept box, the near grid kept
 *             conservatively, both rebuilt when their slack runs out;
 *   clusters  the same runs of vertices, their balls recomputed: exact.
 * Only the checks can fail, and they run before anything of the mesh
 * changes, so a refused shape leaves it exactly as it was; the buffers an
 * update needs (the spare vertices, the normals' sums, the grids as built)
 * are made by the first update, before its checks.
 *
 * Why each kept structure stays right (test_deform's randomized comparison
 * checks each against a fresh mesh over 1000 updates):
 * - Occupancy grid: filled afresh at every update (the rule creation
 *   uses: surface cells and what the outside's flood does not reach), over
 *   the grid's box as it was built, widened by `margin` around the mesh's
 *   box then. Between rebuilds every vertex moved at most D (`moved`, the
 *   sum of the updates' largest displacements since the build), so while
 *   D < margin the mesh stays inside that box and the grid is the grid a
 *   fresh mesh would have over it; past that the box is placed again.
 *   (Keeping the built occupancy widened by D instead, valid too, let 60 %
 *   more rays through in the deforming avalanche than it saved.)
 * - Near grid. Between rebuilds every point of every triangle moved at most
 *   D too (the same affine map of its corners), so the distance to the new
 *   surface is at least the distance to the built one less D: the built
 *   lower bounds lowered by D, in whole steps rounded up.
 * - Vertex clusters. Runs of vertices in Morton order at the last sort, each
 *   with its exact ball for the vertices of now: any grouping is right, a
 *   grouping that has drifted only culls less; sorted again with the grids.
 * - Mass properties: computed when asked for (a deforming body's mass and
 *   inertia are the user's to set); the update computes the volume only.
 * The margin is 24 updates of the current largest displacement, within 2 %
 * and 15 % of the mesh's extent: a coarser grid culls less, a rebuild costs
 * a few updates' worth.
 *
 * Why refit the BVH: the topology stays, and smooth deformations keep
 * neighbouring triangles neighbours, so the tree built for the first shape
 * still groups the triangles well. A refit (new leaf-ordered corners, leaf
 * boxes padded as the build pads, inner boxes their children's union) is
 * linear; the binned-SAH build is
 * not, and dominates an update past a few thousand triangles. The traversal
 * is exact whatever the boxes (they stay conservative), so a refitted tree
 * gives the same first hits as a fresh one; only speed suffers. The 4-wide
 * copy keeps the grouping its collapse chose and takes the new boxes.
 *
 * When to rebuild: each update compares the refitted tree's SAH cost
 * (rtcd_bvh_sah: expected box and triangle tests per ray) with the cost the
 * tree had when it was built, and past REFIT_SAH_BOUND rebuilds it with the
 * leaf size it was created with. Measured with `test_deform --bound`: blobs
 * of 2k and 20k triangles refitted from rest to twists, radial noise and
 * stretches of growing amplitude, 100k rays (random and the narrow phase's
 * own) against a fresh build of the same shape. The work of the walk (box
 * plus triangle tests, counted) grows with the ratio about one to one:
 * ratio 1.03 -> +4 %, 1.08 -> +9..12 %, 1.13 -> +16 %, 1.21 -> +30 %,
 * 1.25 -> +25 %, 1.37 -> +47 %, 1.50 -> +46 %, 1.7 -> +75 %; first-hit time
 * follows at a little less (+11 % at 1.13, +16 % at 1.21, +34 % at 1.37),
 * with +-5..10 % of timing noise on the shared test machine. Below ~1.1 the
 * slowdown is within that noise; the bound is 1.2, where rays have become
 * measurably (15-30 %) slower: a rebuild cost 2-4x a refitting update when
 * updates recomputed every structure, and rays cast at that loss for a few
 * dozen steps paid for it. Now that an update refits only, a rebuild costs
 * 40-70 refitting updates (test_deform --bench), which argues for a bound
 * no lower. The +-20 % pulses
 * and twists of the tests stay at 0.97-1.07 and keep refitting.
 * Known blind spot: a deformation that lowers the cost a fresh tree would
 * have (radial noise of +-100 % of the radius) can slow rays by 20-40 % at a
 * ratio still below 1; smooth deformations up to +-50 % cost at most 10 %. */
#include "mesh_internal.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "batch/task.h"

#define REFIT_SAH_BOUND 1.2
/* The grids' margin: updates of the current displacement it holds, and its
 * bounds relative to the mesh's extent. */
#define GRID_MARGIN_UPDATES 24.0f
#define GRID_MARGIN_MIN 0.02f
#define GRID_MARGIN_MAX 0.15f

enum { PART_CHECK, PART_VOLUME, PART_GEOMETRY, PART_BVH, PART_GRIDS, PART_CLUSTERS, PART_LAZY_GRIDS };
static const char* const k_part_names[RTCD_DEFORM_PARTS] = {"check",    "volume",   "geometry",  "bvh",
                                                            "grids",    "clusters", "lazy_grids"};

const char* rtcd_mesh_deform_part_name(int part)
{
    return part >= 0 && part < RTCD_DEFORM_PARTS ? k_part_names[part] : "";
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* Records the time since *t in part `part` and restarts the clock. */
static void lap(rtcd_mesh* m, int part, double* t)
{
    double now = now_ms();
    m->part_ms[part] += now - *t;
    *t = now;
}

/* Refits in place; rebuilds once the refit has degraded the tree. A rebuild
 * that finds no memory keeps the refitted tree (exact) for now. */
static int update_bvh(rtcd_mesh* m)
{
    double sah = rtcd_bvh_refit_sah(&m->bvh, m->vertices, m->indices, m->lo, m->hi);
    rtcd_bvh4_refit(&m->bvh);
    if (!(sah > REFIT_SAH_BOUND * m->bvh.built_sah)) return 0;
    rtcd_bvh fresh;
    if (rtcd_bvh_build(m->vertices, m->indices, m->triangle_count, m->bvh.leaf_size, &fresh) != RTCD_OK) return 0;
    rtcd_bvh_destroy(&m->bvh);
    m->bvh = fresh;
    return 1;
}

/* The grids for the vertices of now: the occupancy filled afresh over the
 * kept box, the near grid lowered by the displacement since it was built;
 * both rebuilt (a new box) once that displacement passes the box's margin
 * (open surfaces: always, their solid is not a closed one's). Returns 1
 * when rebuilt. */
static int update_grids(rtcd_mesh* m, double moved)
{
    rtcd_grid_keep* k = m->keep;
    rtcd_solid_grid* g = &m->grid;
    k->moved += moved * (1.0 + 1e-9);
    if (m->open_surface || k->moved > 0.999 * (double)k->margin) {
        float ext = fmaxf(m->hi[0] - m->lo[0], fmaxf(m->hi[1] - m->lo[1], m->hi[2] - m->lo[2]));
        float margin = fminf(GRID_MARGIN_MAX * ext, fmaxf(GRID_MARGIN_MIN * ext, GRID_MARGIN_UPDATES * (float)moved));
        if (m->open_surface) margin = 0.0f;
        /* Neither fails: no allocation. */
        __atomic_store_n(&m->grids_stale, 0, __ATOMIC_RELAXED); /* built now, whatever an earlier update left */
        rtcd_solid_grid_build_margin(m, margin);
        rtcd_near_grid_build(m);
        memcpy(k->near, g->near, sizeof k->near);
        k->margin = margin;
        k->moved = 0.0;
        k->lowered = 0;
        return 1;
    }
    /* The box holds the mesh (it moved less than the margin): the fill and
     * the lowering are left to the first reader (rtcd_mesh_fill_grids). */
    if (k->moved > 0.0) {
        m->fill_grids = rtcd_mesh_fill_grids;
        __atomic_store_n(&m->grids_stale, 1, __ATOMIC_RELEASE);
    }
    return 0;
}

/* The grids an update left stale: the occupancy over the kept box for the
 * vertices of now, the near grid lowered by the displacement since its
 * build. What it computes depends on the updates only (the box and `moved`
 * are set by them), never on when the first reader comes: CPU and device
 * read the same grids. */
void rtcd_mesh_fill_grids(rtcd_mesh* m)
{
    while (__atomic_test_and_set(&m->grid_lock, __ATOMIC_ACQUIRE)) {
    }
    if (__atomic_load_n(&m->grids_stale, __ATOMIC_RELAXED)) {
        double t = now_ms();
        rtcd_grid_keep* k = m->keep;
        rtcd_solid_grid* g = &m->grid;
        rtcd_solid_grid_fill(m);
        double steps = k->moved / (double)(g->min_cell / RTCD_NEAR_STEPS) * (1.0 + 1e-4);
        int lower = steps >= 255.0 ? 255 : (int)steps + 1;
        if (lower != k->lowered) {
            for (int i = 0; i < RTCD_NEAR_BYTES; ++i) g->near[i] = (uint8_t)(k->near[i] > lower ? k->near[i] - lower : 0);
            k->lowered = lower;
        }
        m->lazy_fills++;
        lap(m, PART_LAZY_GRIDS, &t);
        __atomic_store_n(&m->grids_stale, 0, __ATOMIC_RELEASE);
    }
    __atomic_clear(&m->grid_lock, __ATOMIC_RELEASE);
}

/* The first update's buffers, made before its checks (an update past its
 * checks cannot fail). */
static rtcd_error ensure_buffers(rtcd_mesh* m)
{
    size_t nv = 3 * (size_t)m->vertex_count;
    if (!m->spare_vertices) m->spare_vertices = rtcd_alloc(nv * sizeof(float));
    if (!m->normal_sums) m->normal_sums = rtcd_alloc(nv * sizeof(double));
    if (!m->keep) {
        m->keep = rtcd_calloc(1, sizeof *m->keep); /* margin 0: the first move rebuilds the grids */
        if (m->keep) memcpy(m->keep->near, m->grid.near, sizeof m->keep->near);
    }
    if (!m->spare_vertices || !m->normal_sums || !m->keep)
        return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "%s: no memory for %u new vertices", m->name, m->vertex_count);
    return RTCD_OK;
}

rtcd_error rtcd_mesh_update_vertices(rtcd_mesh* m, const float* vertices, size_t stride)
{
    if (!m || !vertices)
        return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_mesh_update_vertices: NULL mesh or vertices");
    if (stride == 0) stride = 3 * sizeof(float);
    if (stride < 3 * sizeof(float))
        return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "%s: vertex stride %zu is below 12 bytes", m->name, stride);
    double t = now_ms();
    rtcd_error err = ensure_buffers(m);
    if (err != RTCD_OK) return err;
    float* v = m->spare_vertices;
    size_t nv = (size_t)m->vertex_count * 3;
    if (stride == 3 * sizeof(float)) memcpy(v, vertices, nv * sizeof(float));
    else
        for (uint32_t i = 0; i < m->vertex_count; ++i)
            memcpy(v + 3 * i, (const char*)vertices + stride * i, 3 * sizeof(float));
    /* The checks of rtcd_mesh_create that depend on positions; topology was checked then. */
    double volume = 0.0; /* summed by the checks, from their cross products */
    if ((err = rtcd_mesh_check_shape(m->name, v, m->vertex_count, m->indices, m->triangle_count, &volume)) != RTCD_OK)
        return err;
    lap(m, PART_CHECK, &t);
    if (!m->open_surface && !(volume > 0.0))
        return rtcd_mesh_fail_inside_out(m->name, volume, 0); /* no flipping: the triangles stay */
    lap(m, PART_VOLUME, &t);

    /* Past the checks: nothing below fails. Largest displacement, in
     * double: `deformation` bounds every vertex's travel. */
    double moved2 = 0.0;
    for (size_t i = 0; i < nv; i += 3) {
        double d2 = 0.0;
        for (int k = 0; k < 3; ++k) {
            double d = (double)v[i + k] - m->vertices[i + k];
            d2 += d * d;
        }
        moved2 = moved2 > d2 ? moved2 : d2;
    }
    double moved = sqrt(moved2);
    m->spare_vertices = m->prev_vertices; /* NULL after the first update: the next one makes it */
    m->prev_vertices = m->vertices;       /* the motion rays' deformation (shared/pair.h) */
    m->vertices = v;
    m->deformable = 1; /* from the first update on: the near grid's cheap bound */
    m->mass_stale = !m->open_surface;
    rtcd_mesh_derive_geometry(m, m->normal_sums); /* with its scratch given it cannot fail */
    lap(m, PART_GEOMETRY, &t);
    int rebuilt = update_bvh(m);
    lap(m, PART_BVH, &t);
    int regrid = update_grids(m, moved);
    lap(m, PART_GRIDS, &t);
    /* Sorted again with the grids; should the sort find no memory, the runs
     * stay as they were (their balls are exact either way). */
    if (regrid && rtcd_vertex_clusters_build(m) == RTCD_OK) m->cluster_sorts++;
    else rtcd_vertex_clusters_refit(m);
    lap(m, PART_CLUSTERS, &t);
    m->grid_rebuilds += (uint64_t)regrid;
    m->version++;
    m->deformation += moved;
    m->bvh_refits += !rebuilt;
    m->bvh_rebuilds += rebuilt;
    return RTCD_OK;
}

typedef struct update_many_ctx {
    rtcd_mesh* const* meshes;
    const float* const* vertices;
    const size_t* strides;
    rtcd_error* errors;
} update_many_ctx;

static void update_range(uint32_t begin, uint32_t end, uint32_t worker, void* p)
{
    (void)worker;
    const update_many_ctx* c = p;
    for (uint32_t k = begin; k < end; ++k)
        c->errors[k] = rtcd_mesh_update_vertices(c->meshes[k], c->vertices ? c->vertices[k] : NULL,
                                                 c->strides ? c->strides[k] : 0);
}

static int cmp_ptr(const void* a, const void* b)
{
    uintptr_t x = (uintptr_t)*(void* const*)a, y = (uintptr_t)*(void* const*)b;
    return x < y ? -1 : x > y;
}

rtcd_error rtcd_mesh_update_vertices_many(rtcd_mesh* const* meshes, const float* const* vertices,
                                          const size_t* strides, uint32_t count, const rtcd_task_system* tasks,
                                          rtcd_error* errors)
{
    if (count == 0) return RTCD_OK;
    if (!meshes || !vertices)
        return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_mesh_update_vertices_many: NULL meshes or vertices");
    if (tasks && tasks->enqueue && (!tasks->finish || tasks->worker_count < 1 || tasks->worker_count > RTCD_MAX_WORKERS))
        return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_mesh_update_vertices_many: a task system needs finish "
                                                      "and 1..%u workers", RTCD_MAX_WORKERS);
    /* Distinct meshes (two updates of one mesh at once would race), and one
     * slot per mesh for the codes: both in one allocation. */
    size_t bytes = (size_t)count * (sizeof(rtcd_mesh*) + sizeof(rtcd_error));
    void* scratch = rtcd_alloc(bytes);
    if (!scratch) return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_mesh_update_vertices_many: no memory for %u meshes", count);
    rtcd_mesh** sorted = scratch;
    rtcd_error* codes = (rtcd_error*)(void*)(sorted + count);
    memcpy(sorted, meshes, (size_t)count * sizeof *sorted);
    qsort(sorted, count, sizeof *sorted, cmp_ptr);
    for (uint32_t k = 0; k < count; ++k)
        if (!sorted[k] || (k > 0 && sorted[k] == sorted[k - 1])) {
            const char* what = sorted[k] ? "a repeated" : "a NULL";
            rtcd_free(scratch);
            return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_mesh_update_vertices_many: %s mesh", what);
        }
    update_many_ctx c = {meshes, vertices, strides, codes};
    rtcd_parallel_for(tasks, count, 1, update_range, &c);
    rtcd_error first = RTCD_OK;
    uint32_t first_k = 0;
    for (uint32_t k = 0; k < count; ++k) {
        if (errors) errors[k] = codes[k];
        if (codes[k] != RTCD_OK && first == RTCD_OK) first = codes[k], first_k = k;
    }
    rtcd_free(scratch);
    if (first != RTCD_OK) /* the worker's message stayed on its thread: say which mesh failed */
        return rtcd_fail(first, "rtcd_mesh_update_vertices_many: mesh %u (%s) refused its vertices (%s)", first_k,
                         meshes[first_k]->name, rtcd_error_name(first));
    return RTCD_OK;
}

uint64_t rtcd_mesh_version(const rtcd_mesh* m) { return m ? m->version : 0; }

rtcd_mesh_deform_stats rtcd_mesh_get_deform_stats(const rtcd_mesh* m)
{
    rtcd_mesh_deform_stats s;
    memset(&s, 0, sizeof s);
    if (!m) return s;
    s.version = m->version;
    s.refits = m->bvh_refits;
    s.rebuilds = m->bvh_rebuilds;
    s.deformation = m->deformation;
    s.sah_ratio = m->bvh.built_sah > 0.0 ? rtcd_bvh_sah(&m->bvh) / m->bvh.built_sah : 1.0;
    s.grid_rebuilds = m->grid_rebuilds;
    s.cluster_sorts = m->cluster_sorts;
    memcpy(s.part_ms, m->part_ms, sizeof s.part_ms);
    return s;
}
