/* Deforming meshes (rtcd_mesh_update_vertices): new positions, same triangles.
 *
 * The update builds the new state beside the old one (vertices, normals,
 * BVH, grids, clusters) and swaps it in only when every step succeeded, so a
 * refused shape or a failed allocation leaves the mesh exactly as it was.
 * Everything derived from the vertices is recomputed by the functions that
 * creation uses, so it equals, bit for bit, what rtcd_mesh_create gives for
 * the same vertices. The BVH is the exception: it is refitted.
 *
 * Why refit: the topology stays, and smooth deformations keep neighbouring
 * triangles neighbours, so the tree built for the first shape still groups
 * the triangles well. A refit (new leaf-ordered corners, boxes bottom-up,
 * padded as the build pads) is linear; the binned-SAH build is not, and
 * dominates an update past a few thousand triangles (`test_deform --bench`:
 * a whole update costs 32 ms refitting vs 62 ms rebuilding at 10k triangles,
 * 129 vs 481 ms at 100k; the grids, recomputed either way, dominate at 1k).
 * The traversal is exact whatever the boxes (they stay conservative), so a
 * refitted tree gives the same first hits as a fresh one; only speed suffers.
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
 * measurably (15-30 %) slower: a rebuild costs 2-4x a refitting update, and
 * rays cast at that loss for a few dozen steps pay for it. The +-20 % pulses
 * and twists of the tests stay at 0.97-1.07 and keep refitting.
 * Known blind spot: a deformation that lowers the cost a fresh tree would
 * have (radial noise of +-100 % of the radius) can slow rays by 20-40 % at a
 * ratio still below 1; smooth deformations up to +-50 % cost at most 10 %. */
#include "mesh_internal.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#define REFIT_SAH_BOUND 1.2

_Static_assert(offsetof(rtcd_mesh, refcount) == 0, "the swap copies everything after the reference count");

/* Frees what `parts` owns that `keep` does not share (an update moves the
 * old vertices to prev_vertices). */
static void release_parts(rtcd_mesh* parts, const rtcd_mesh* keep)
{
    if (parts->vertices != keep->vertices && parts->vertices != keep->prev_vertices) rtcd_free(parts->vertices);
    if (parts->prev_vertices != keep->prev_vertices && parts->prev_vertices != keep->vertices)
        rtcd_free(parts->prev_vertices);
    if (parts->triangle_normals != keep->triangle_normals) rtcd_free(parts->triangle_normals);
    if (parts->vertex_normals != keep->vertex_normals) rtcd_free(parts->vertex_normals);
    if (parts->cluster_vertices != keep->cluster_vertices) rtcd_free(parts->cluster_vertices);
    if (parts->clusters != keep->clusters) rtcd_free(parts->clusters);
    if (parts->bvh.nodes4 != keep->bvh.nodes4) rtcd_free(parts->bvh.nodes4);
    if (parts->bvh.nodes != keep->bvh.nodes) rtcd_free(parts->bvh.nodes);
    if (parts->bvh.tris != keep->bvh.tris) rtcd_free(parts->bvh.tris);
    if (parts->bvh.tri_ids != keep->bvh.tri_ids) rtcd_free(parts->bvh.tri_ids);
}

/* Refits a copy of m's tree into next (sharing the triangle order, which a
 * refit keeps); rebuilds instead once the refit has degraded it. */
static rtcd_error update_bvh(const rtcd_mesh* m, rtcd_mesh* next, int* rebuilt)
{
    const rtcd_bvh* old = &m->bvh;
    rtcd_bvh* b = &next->bvh;
    *rebuilt = 0;
    memset(b, 0, sizeof *b);
    b->nodes = rtcd_alloc((size_t)old->node_count * sizeof *b->nodes);
    b->tris = rtcd_alloc((size_t)m->triangle_count * 9 * sizeof(float));
    if (!b->nodes || !b->tris)
        return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "%s: no memory to refit the BVH", m->name);
    memcpy(b->nodes, old->nodes, (size_t)old->node_count * sizeof *b->nodes);
    b->tri_ids = old->tri_ids;
    b->node_count = old->node_count;
    b->depth = old->depth;
    b->leaf_size = old->leaf_size;
    b->built_sah = old->built_sah;
    rtcd_bvh_refit(b, next->vertices, next->indices);
    if (rtcd_bvh_sah(b) > REFIT_SAH_BOUND * b->built_sah) {
        rtcd_free(b->nodes);
        rtcd_free(b->tris);
        *rebuilt = 1;
        /* rtcd_bvh_build leaves *b empty on failure (the 4-wide copy included). */
        return rtcd_bvh_build(next->vertices, next->indices, next->triangle_count, old->leaf_size, b);
    }
    return rtcd_bvh4_build(b);
}

rtcd_error rtcd_mesh_update_vertices(rtcd_mesh* m, const float* vertices, size_t stride)
{
    if (!m || !vertices)
        return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_mesh_update_vertices: NULL mesh or vertices");
    if (stride == 0) stride = 3 * sizeof(float);
    if (stride < 3 * sizeof(float))
        return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "%s: vertex stride %zu is below 12 bytes", m->name, stride);

    /* next: the mesh as it will be. Pointers it shares with m are replaced
     * one by one; release_parts(&next, m) frees exactly the new ones. */
    rtcd_mesh next = *m;
    next.deformable = 1; /* from the first update on: the near grid's cheap bound */
    next.vertices = next.triangle_normals = next.vertex_normals = NULL;
    next.cluster_vertices = NULL;
    next.clusters = NULL;
    memset(&next.bvh, 0, sizeof next.bvh);
    size_t nv = (size_t)m->vertex_count * 3, nt = (size_t)m->triangle_count * 3;
    rtcd_error err = RTCD_OK;
    int rebuilt = 0;
    next.vertices = rtcd_alloc(nv * sizeof(float));
    next.triangle_normals = rtcd_alloc(nt * sizeof(float));
    next.vertex_normals = rtcd_alloc(nv * sizeof(float));
    if (!next.vertices || !next.triangle_normals || !next.vertex_normals) {
        err = rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "%s: no memory for %u new vertices", m->name, m->vertex_count);
        goto fail;
    }
    for (uint32_t i = 0; i < m->vertex_count; ++i)
        memcpy(next.vertices + 3 * i, (const char*)vertices + stride * i, 3 * sizeof(float));

    /* The checks of rtcd_mesh_create that depend on positions; topology was checked then. */
    err = rtcd_mesh_check_shape(m->name, next.vertices, m->vertex_count, m->indices, m->triangle_count);
    if (err != RTCD_OK) goto fail;
    if (!m->open_surface) {
        next.mass = rtcd_compute_mass_properties(next.vertices, m->indices, m->triangle_count);
        if (!(next.mass.volume > 0.0)) {
            err = rtcd_mesh_fail_inside_out(m->name, next.mass.volume, 0); /* no flipping: the triangles stay */
            goto fail;
        }
    }
    if ((err = rtcd_mesh_derive_geometry(&next)) != RTCD_OK) goto fail;
    if ((err = update_bvh(m, &next, &rebuilt)) != RTCD_OK) goto fail;
    /* The grids and clusters as creation builds them (the grids ask the new BVH). */
    if ((err = rtcd_solid_grid_build(&next)) != RTCD_OK) goto fail;
    if ((err = rtcd_near_grid_build(&next)) != RTCD_OK) goto fail;
    if ((err = rtcd_vertex_clusters_build(&next)) != RTCD_OK) goto fail;

    /* Largest displacement, in double: `deformation` bounds every vertex's travel. */
    double moved2 = 0.0;
    for (size_t i = 0; i < nv; i += 3) {
        double d2 = 0.0;
        for (int k = 0; k < 3; ++k) {
            double d = (double)next.vertices[i + k] - m->vertices[i + k];
            d2 += d * d;
        }
        moved2 = fmax(moved2, d2);
    }
    next.version = m->version + 1;
    next.prev_vertices = m->vertices; /* the motion rays' deformation (shared/pair.h) */
    next.deformation = m->deformation + sqrt(moved2);
    next.bvh_refits = m->bvh_refits + !rebuilt;
    next.bvh_rebuilds = m->bvh_rebuilds + rebuilt;

    /* Swap: every field but the reference count, which holders may change meanwhile. */
    rtcd_mesh old = *m;
    size_t skip = offsetof(rtcd_mesh, vertex_count);
    memcpy((char*)m + skip, (const char*)&next + skip, sizeof next - skip);
    release_parts(&old, m);
    return RTCD_OK;
fail:
    release_parts(&next, m);
    return err;
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
    return s;
}
