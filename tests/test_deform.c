/* Deforming meshes (rtcd_mesh_update_vertices, issue 13): after smooth
 * deformations the refitted mesh answers first hits as a mesh created from
 * the same vertices, and its derived data (normals, box, grids, clusters,
 * mass) equal that mesh's bit for bit; refused shapes and failed allocations
 * leave the mesh untouched.
 *
 *   test_deform           the tests
 *   test_deform --bound   the measurement behind the rebuild bound (core/mesh/mesh_deform.c)
 *   test_deform --bench   update cost per mesh size, one JSON object */
#include "test_util.h"

#include "mesh/mesh_internal.h"
#include "batch/task.h"

#include <rtcd/rtcd_narrowphase.h>
#include <rtcd/rtcd_query.h>

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- deformations: smooth maps that keep a closed mesh valid ---- */

/* Radial pulse (a direction-dependent scale s > 0 maps rays onto themselves:
 * no fold) and a twist about z; `a` about the relative displacement. */
static void pulse_twist(const float* rest, uint32_t nv, float radius, float a, float phase, float* out)
{
    for (uint32_t i = 0; i < nv; ++i) {
        const float* p = rest + 3 * i;
        float r = sqrtf(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]) + 1e-12f;
        float s = 1.0f + a * sinf(2.0f * p[0] / r + 1.5f * p[1] / r - p[2] / r + phase);
        float ang = a * cosf(phase) * p[2] / radius;
        float c = cosf(ang), sn = sinf(ang);
        out[3 * i] = s * (c * p[0] - sn * p[1]);
        out[3 * i + 1] = s * (sn * p[0] + c * p[1]);
        out[3 * i + 2] = s * p[2];
    }
}

/* Growing degradations for the bound measurement (family 0: smooth radial
 * noise of higher frequency, 1: twist, 2: stretch along x). */
static void degrade(const float* rest, uint32_t nv, int family, float a, float* out)
{
    for (uint32_t i = 0; i < nv; ++i) {
        const float* p = rest + 3 * i;
        float* q = out + 3 * i;
        if (family == 0) {
            float r = sqrtf(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]) + 1e-12f;
            float s = 1.0f + a * sinf(5.0f * p[0] / r) * sinf(4.0f * p[1] / r + 1.0f) * cosf(3.0f * p[2] / r);
            for (int k = 0; k < 3; ++k) q[k] = s * p[k];
        } else if (family == 1) {
            float ang = 3.0f * a * p[2];
            q[0] = cosf(ang) * p[0] - sinf(ang) * p[1];
            q[1] = sinf(ang) * p[0] + cosf(ang) * p[1];
            q[2] = p[2];
        } else {
            q[0] = (1.0f + 3.0f * a) * p[0];
            q[1] = p[1] / (1.0f + a);
            q[2] = p[2];
        }
    }
}

static rtcd_mesh* create_like(const rtcd_mesh* m, const float* v, uint32_t flags)
{
    rtcd_mesh_def def = rtcd_default_mesh_def();
    def.vertices = v;
    def.vertex_count = m->vertex_count;
    def.indices = m->indices;
    def.triangle_count = m->triangle_count;
    def.flags = flags | RTCD_MESH_DEFORMABLE; /* what an update makes of a mesh */
    def.bvh_leaf_size = m->bvh.leaf_size;
    def.name = m->name;
    rtcd_mesh* out = NULL;
    assert_int_equal(rtcd_mesh_create(&def, &out), RTCD_OK);
    return out;
}

/* ---- comparisons ---- */

#define SAME(a, b, n) assert_memory_equal((a), (b), (n))

/* Where the narrow phase reads the kept grids, they answer as the truth
 * needs (core/mesh/mesh_deform.c): every point inside the new shape (exact
 * containment on the fresh mesh) is "may contain", every point outside
 * within d of the surface (exact distance) is "may be near" for d. Points:
 * random ones around the box, the vertices, and points just off the surface
 * on both sides. Returns how many of the points the fresh grid culls that
 * the kept one lets through (looseness, not an error). */
static long assert_grids_sound(const rtcd_mesh* m, const rtcd_mesh* fresh, long points, uint64_t seed)
{
    test_rng rng = {seed};
    long looser = 0, inside = 0;
    for (long r = 0; r < points; ++r) {
        float p[3];
        uint32_t i = (uint32_t)(test_rng_next(&rng) % m->vertex_count);
        int kind = (int)(r % 4);
        for (int k = 0; k < 3; ++k) {
            float ext = fresh->hi[k] - fresh->lo[k];
            if (kind == 0) p[k] = (float)test_rng_range(&rng, fresh->lo[k] - 0.3 * ext, fresh->hi[k] + 0.3 * ext);
            else p[k] = fresh->vertices[3 * i + k];
        }
        if (kind >= 2) { /* just off the surface, or a few cells out (where the near grid is read) */
            float off = kind == 2 ? (float)test_rng_range(&rng, -0.4, 0.4) * fresh->mean_edge_length
                                  : (float)test_rng_range(&rng, 0.2, 3.0) * fresh->grid.min_cell;
            for (int k = 0; k < 3; ++k) p[k] += off * fresh->vertex_normals[3 * i + k];
        }
        rtcd_v3 q = v3_load(p);
        int in_kept = rtcd_mesh_may_contain(m, q);
        int truly_inside = rtcd_mesh_contains_point(fresh, p);
        if (truly_inside) {
            ++inside;
            if (!in_kept) fail_msg("%s: point (%g %g %g) inside the shape, but the kept grid says outside", m->name,
                                   (double)p[0], (double)p[1], (double)p[2]);
        }
        if (in_kept && !rtcd_mesh_may_contain(fresh, q)) ++looser;
        /* The narrow phase reads the near grid only where the occupancy says
         * outside; it is a bound wherever the point is outside, checked so. */
        if (truly_inside) continue;
        float d = rtcd_mesh_closest_point(fresh, p, NULL, NULL);
        float dist = d * (1.0f + 1e-4f) + 1e-6f * fresh->reach;
        if (!rtcd_mesh_may_be_near(m, q, dist))
            fail_msg("%s: point (%g %g %g) %g from the surface, but the kept near grid says farther", m->name,
                     (double)p[0], (double)p[1], (double)p[2], (double)d);
        if (!rtcd_ball_near_grid(m, q, 0.0f, dist)) fail_msg("%s: the kept grid's box misses a point near the surface", m->name);
        if (!rtcd_mesh_may_be_near(fresh, q, 0.5f * d) && rtcd_mesh_may_be_near(m, q, 0.5f * d)) ++looser;
    }
    assert_true(inside > 0); /* not vacuous */
    return looser;
}

/* The occupancy a fresh mesh would have over m's grid box, cell by cell
 * (an independent reference: each triangle's box marks the cells it
 * touches, a widened hair, and a breadth-first flood from the border finds
 * the outside), against the kept grid, bit for bit. */
static void assert_occupancy_exact(const rtcd_mesh* m)
{
    enum { N = RTCD_GRID_N, CELLS = RTCD_GRID_N * RTCD_GRID_N * RTCD_GRID_N };
    static uint8_t state[CELLS];
    static uint16_t queue[CELLS];
    const rtcd_solid_grid* g = &m->grid;
    memset(state, 0, sizeof state);
    for (uint32_t t = 0; t < m->triangle_count; ++t) {
        int c0[3], c1[3];
        for (int k = 0; k < 3; ++k) {
            float lo = INFINITY, hi = -INFINITY;
            for (int c = 0; c < 3; ++c) {
                float x = m->vertices[3 * m->indices[3 * t + c] + k];
                lo = fminf(lo, x), hi = fmaxf(hi, x);
            }
            float f0 = (lo - g->lo[k]) * g->inv_cell[k] - 1e-3f, f1 = (hi - g->lo[k]) * g->inv_cell[k] + 1e-3f;
            c0[k] = f0 < 0.0f ? 0 : (f0 >= N ? N - 1 : (int)f0);
            c1[k] = f1 < 0.0f ? 0 : (f1 >= N ? N - 1 : (int)f1);
        }
        for (int z = c0[2]; z <= c1[2]; ++z)
            for (int y = c0[1]; y <= c1[1]; ++y)
                for (int x = c0[0]; x <= c1[0]; ++x) state[(z * N + y) * N + x] = 1;
    }
    uint32_t head = 0, tail = 0;
    for (int i = 0; i < CELLS; ++i) {
        int x = i % N, y = i / N % N, z = i / (N * N);
        if (state[i] == 0 && (x == 0 || y == 0 || z == 0 || x == N - 1 || y == N - 1 || z == N - 1))
            state[i] = 2, queue[tail++] = (uint16_t)i;
    }
    while (head < tail) {
        int i = queue[head++], x = i % N, y = i / N % N, z = i / (N * N);
        const int d[6][3] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
        for (int k = 0; k < 6; ++k) {
            int a = x + d[k][0], b = y + d[k][1], c = z + d[k][2];
            if (a < 0 || b < 0 || c < 0 || a >= N || b >= N || c >= N) continue;
            int j = (c * N + b) * N + a;
            if (state[j] == 0) state[j] = 2, queue[tail++] = (uint16_t)j;
        }
    }
    for (int i = 0; i < CELLS; ++i) {
        int kept = (g->solid[i >> 3] >> (i & 7)) & 1;
        if (kept != (state[i] != 2)) fail_msg("%s: occupancy cell %d is %d, the reference says %d", m->name, i, kept, state[i] != 2);
    }
    /* and the box holds the mesh (the flood's premise) */
    for (int k = 0; k < 3; ++k) {
        assert_true(g->lo[k] <= m->lo[k]);
        assert_true(g->lo[k] + N / g->inv_cell[k] >= m->hi[k]);
    }
}

/* The mean and longest edge of a deformable mesh as their definition has
 * them, independently: each triangle's edges (corner k to k + 1) in floats,
 * their lengths summed in doubles in triangle order, the longest rounded up
 * by 1e-6. The update sums them in any order while that sum is exact
 * (core/mesh/mesh.c) and in this order otherwise: the same bits. */
static void assert_edge_lengths(const rtcd_mesh* m)
{
    double sum = 0.0;
    float longest = 0.0f;
    for (uint32_t t = 0; t < m->triangle_count; ++t)
        for (int k = 0; k < 3; ++k) {
            const float* a = m->vertices + 3 * m->indices[3 * t + k];
            const float* b = m->vertices + 3 * m->indices[3 * t + (k + 1) % 3];
            float d[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
            float len = sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
            sum += len;
            longest = fmaxf(longest, len * (1.0f + 1e-6f));
        }
    float mean = (float)(sum / (3.0 * m->triangle_count));
    SAME(&m->mean_edge_length, &mean, sizeof mean);
    SAME(&m->max_edge_length, &longest, sizeof longest);
}

/* What the narrow phase reads, as a mesh created from the same vertices
 * has it: the geometry bit for bit, the grids sound (above), the clusters
 * a partition of the vertices with balls that hold them, mass on request
 * equal. The BVH may differ (its answers are compared by assert_same_hits). */
static void assert_same_derived(const rtcd_mesh* m, const rtcd_mesh* f)
{
    size_t nv = 3 * (size_t)m->vertex_count, nt = 3 * (size_t)m->triangle_count;
    assert_int_equal(m->vertex_count, f->vertex_count);
    assert_int_equal(m->triangle_count, f->triangle_count);
    SAME(m->vertices, f->vertices, nv * sizeof(float));
    SAME(m->indices, f->indices, nt * sizeof(uint32_t));
    SAME(m->neighbors, f->neighbors, nt * sizeof(uint32_t));
    SAME(m->triangle_normals, f->triangle_normals, nt * sizeof(float));
    SAME(m->vertex_normals, f->vertex_normals, nv * sizeof(float));
    SAME(m->lo, f->lo, sizeof m->lo);
    SAME(m->hi, f->hi, sizeof m->hi);
    SAME(m->facing, f->facing, sizeof m->facing);
    SAME(&m->mean_edge_length, &f->mean_edge_length, sizeof(float));
    if (m->deformable) assert_edge_lengths(m);
    SAME(&m->max_edge_length, &f->max_edge_length, sizeof(float));
    SAME(&m->reach, &f->reach, sizeof(float));
    rtcd_mass_properties mm = rtcd_mesh_mass_properties(m), fm = rtcd_mesh_mass_properties(f);
    SAME(&mm, &fm, sizeof mm);
    assert_int_equal(m->open_surface, f->open_surface);
    /* clusters: every vertex once, inside its run's ball */
    assert_int_equal(m->cluster_count, f->cluster_count);
    uint8_t* seen = calloc(m->vertex_count, 1);
    for (uint32_t c = 0; c < m->cluster_count; ++c) {
        const rtcd_vertex_cluster* cl = &m->clusters[c];
        for (uint32_t j = cl->first; j < cl->first + cl->count; ++j) {
            uint32_t i = m->cluster_vertices[j];
            assert_true(i < m->vertex_count && !seen[i]);
            seen[i] = 1;
            double d2 = 0.0;
            for (int k = 0; k < 3; ++k) d2 += pow((double)m->vertices[3 * i + k] - cl->centre[k], 2.0);
            assert_true(sqrt(d2) <= cl->radius);
        }
    }
    for (uint32_t i = 0; i < m->vertex_count; ++i) assert_true(seen[i]);
    free(seen);
    /* An open surface's grids are rebuilt at every update (its solid is no
     * closed one's): as fresh, bit for bit. */
    if (m->open_surface) SAME(&m->grid, &f->grid, sizeof m->grid);
    else assert_grids_sound(m, f, 600, 0x5eed + m->version);
    /* the refitted leaf copy holds the new corners */
    for (uint32_t k = 0; k < m->triangle_count; ++k)
        for (int c = 0; c < 3; ++c)
            SAME(m->bvh.tris + 9 * k + 3 * c, m->vertices + 3 * m->indices[3 * m->bvh.tri_ids[k] + c], 12);
}

/* The refitted tree's boxes, bit for bit as the rule has them (an
 * independent scalar refit): a leaf the box of its triangles' corners, taken
 * through the mesh's indices, padded as the build pads (by 1e-5 of the
 * mesh box's longest side, and 1e-6 of each coordinate); an inner node the
 * union of its children's; the 4-wide copy its source nodes' boxes. Only
 * after an update that refitted (a rebuild pads every node). */
static void assert_refit_boxes(const rtcd_mesh* m)
{
    const rtcd_bvh* b = &m->bvh;
    float pad = 1e-5f * fmaxf(fmaxf(m->hi[0] - m->lo[0], m->hi[1] - m->lo[1]), m->hi[2] - m->lo[2]) + 1e-30f;
    float* box = malloc(6 * sizeof(float) * b->node_count);
    for (uint32_t i = b->node_count; i-- > 0;) {
        const rtcd_bvh_node* n = &b->nodes[i];
        float* lo = box + 6 * i;
        float* hi = lo + 3;
        if (n->prims) {
            uint32_t first = n->prims >> RTCD_BVH_LEAF_BITS, count = n->prims & RTCD_BVH_MAX_LEAF_SIZE;
            for (uint32_t k = first; k < first + count; ++k)
                for (int c = 0; c < 3; ++c)
                    for (int a = 0; a < 3; ++a) {
                        float x = m->vertices[3 * m->indices[3 * b->tri_ids[k] + c] + a];
                        lo[a] = k == first && c == 0 ? x : (x < lo[a] ? x : lo[a]);
                        hi[a] = k == first && c == 0 ? x : (x > hi[a] ? x : hi[a]);
                    }
            for (int a = 0; a < 3; ++a) {
                lo[a] = lo[a] - pad - 1e-6f * fabsf(lo[a]);
                hi[a] = hi[a] + pad + 1e-6f * fabsf(hi[a]);
            }
        } else {
            const float* l = box + 6 * (i + 1);
            const float* r = box + 6 * n[1].escape;
            for (int a = 0; a < 3; ++a) {
                lo[a] = r[a] < l[a] ? r[a] : l[a];
                hi[a] = r[3 + a] > l[3 + a] ? r[3 + a] : l[3 + a];
            }
        }
        SAME(n->lo, lo, 3 * sizeof(float));
        SAME(n->hi, hi, 3 * sizeof(float));
    }
    for (uint32_t i = 0; i < b->node4_count; ++i)
        for (uint32_t k = 0; k < b->nodes4[i].count; ++k)
            for (int a = 0; a < 3; ++a) {
                const rtcd_bvh_node* src = &b->nodes[b->nodes4_src[4 * i + k]];
                SAME(&b->nodes4[i].lo[a][k], &src->lo[a], sizeof(float));
                SAME(&b->nodes4[i].hi[a][k], &src->hi[a], sizeof(float));
            }
    free(box);
}

/* Random rays around the mesh, rays aimed at vertices and edge points, and
 * the narrow phase's own (from a vertex along its inward normal). */
static void make_ray(const rtcd_mesh* m, test_rng* rng, long r, rtcd_ray* ray)
{
    const float* v = m->vertices;
    ray->tmin = 0.0f;
    ray->tmax = INFINITY;
    ray->skip_vertex = RTCD_NO_VERTEX;
    int kind = (int)(r % 4);
    if (kind == 3) {
        uint32_t i = (uint32_t)(test_rng_next(rng) % m->vertex_count);
        for (int k = 0; k < 3; ++k) {
            ray->origin[k] = v[3 * i + k];
            ray->direction[k] = -m->vertex_normals[3 * i + k];
        }
        ray->skip_vertex = i;
        return;
    }
    for (int k = 0; k < 3; ++k) {
        float ext = m->hi[k] - m->lo[k];
        ray->origin[k] = (float)test_rng_range(rng, m->lo[k] - 0.5 * ext, m->hi[k] + 0.5 * ext);
    }
    if (kind == 0) {
        test_rng_unit_vector(rng, ray->direction);
        return;
    }
    uint32_t t = (uint32_t)(test_rng_next(rng) % m->triangle_count);
    int e = (int)(test_rng_next(rng) % 3);
    const float* a = v + 3 * m->indices[3 * t + e];
    const float* b = v + 3 * m->indices[3 * t + (e + 1) % 3];
    float s = kind == 1 ? 0.0f : (float)test_rng_uniform(rng);
    for (int k = 0; k < 3; ++k) ray->direction[k] = a[k] + s * (b[k] - a[k]) - ray->origin[k];
}

/* First hits of the updated mesh (4-wide and stackless walks) against the fresh one's. */
static void assert_same_hits(const rtcd_mesh* m, const rtcd_mesh* fresh, long rays, uint64_t seed)
{
    test_rng rng = {seed};
    long hits = 0, ties = 0, bad = 0;
    for (long r = 0; r < rays; ++r) {
        rtcd_ray ray;
        make_ray(fresh, &rng, r, &ray);
        rtcd_hit want, got[2];
        int hw = rtcd_mesh_first_hit(fresh, &ray, RTCD_TRAVERSAL_BVH, &want);
        int hg[2] = {rtcd_mesh_first_hit(m, &ray, RTCD_TRAVERSAL_BVH, &got[0]),
                     rtcd_mesh_first_hit(m, &ray, RTCD_TRAVERSAL_BVH_STACKLESS, &got[1])};
        hits += hw;
        for (int k = 0; k < 2; ++k) {
            /* t must be the same float; another triangle only at the same t */
            int same = hg[k] == hw && (!hw || memcmp(&got[k].t, &want.t, sizeof(float)) == 0);
            if (same && hw && got[k].triangle != want.triangle) ++ties;
            else if (same && hw) same = got[k].u == want.u && got[k].v == want.v && got[k].exits == want.exits;
            if (!same && bad++ < 5)
                fprintf(stderr, "%s ray %ld: fresh (%d, tri %u, t %.9g), updated %s (%d, tri %u, t %.9g)\n",
                        m->name, r, hw, want.triangle, (double)want.t, k ? "stackless" : "bvh", hg[k],
                        got[k].triangle, (double)got[k].t);
        }
    }
    if (rays >= 100000)
        fprintf(stderr, "%s: %ld rays, %ld hits, %ld ties, %ld mismatches\n", m->name, rays, hits, ties, bad);
    assert_int_equal(bad, 0);
    assert_true(hits > rays / 4); /* not vacuous */
}

/* Several smooth steps in sequence (the refit accumulates), each checked
 * against a mesh created from the same vertices; 100 000 rays at the end. */
static void run_sequence(rtcd_mesh* m, float radius, uint32_t flags, int steps, float amplitude, uint64_t seed)
{
    uint32_t nv = m->vertex_count;
    float* rest = malloc(3 * sizeof(float) * nv);
    float* v = malloc(3 * sizeof(float) * nv);
    memcpy(rest, m->vertices, 3 * sizeof(float) * nv);
    double deformation = 0.0;
    for (int s = 1; s <= steps; ++s) {
        const float* before = m->vertices;
        pulse_twist(rest, nv, radius, amplitude, 1.3f * (float)s, v);
        double moved2 = 0.0;
        for (uint32_t i = 0; i < 3 * nv; i += 3) {
            double d2 = 0.0;
            for (int k = 0; k < 3; ++k) d2 += ((double)v[i + k] - before[i + k]) * ((double)v[i + k] - before[i + k]);
            moved2 = fmax(moved2, d2);
        }
        deformation += sqrt(moved2);
        assert_int_equal(rtcd_mesh_update_vertices(m, v, 0), RTCD_OK);
        assert_int_equal(rtcd_mesh_version(m), (uint64_t)s);
        assert_refit_boxes(m); /* smooth steps refit (asserted below) */
        assert_true(fabs(m->deformation - deformation) <= 1e-9 * deformation);
        rtcd_mesh* fresh = create_like(m, v, flags);
        assert_same_derived(m, fresh);
        assert_same_hits(m, fresh, s == steps ? 100000 : 5000, seed + (uint64_t)s);
        rtcd_mesh_release(fresh);
    }
    rtcd_mesh_deform_stats st = rtcd_mesh_get_deform_stats(m);
    fprintf(stderr, "%s: %d steps of +-%.0f %%: %llu refits, %llu rebuilds, SAH ratio %.3f, deformation %.3f\n",
            m->name, steps, 100.0 * amplitude, (unsigned long long)st.refits, (unsigned long long)st.rebuilds,
            st.sah_ratio, st.deformation);
    assert_int_equal(st.version, (uint64_t)steps);
    assert_int_equal(st.refits + st.rebuilds, (uint64_t)steps);
    assert_int_equal(st.rebuilds, 0); /* smooth +-20 % stays below the bound */
    free(rest);
    free(v);
}

static void test_blob_sequence(void** state)
{
    (void)state;
    rtcd_mesh* m = test_make_blob(RTCD_AVALANCHE_BLOB_VERTICES, 1.0f, 3);
    run_sequence(m, 1.0f, 0, 6, 0.2f, 100);
    rtcd_mesh_release(m);
    m = test_make_blob(rtcd_spawner_mesh_vertices(3), 1.0f, 8);
    run_sequence(m, 1.0f, 0, 4, 0.2f, 200);
    rtcd_mesh_release(m);
}

static void test_generated_sequence(void** state)
{
    (void)state;
    rtcd_generated_mesh g;
    assert_int_equal(rtcd_generate_torus(1.0f, 0.35f, 48, 20, &g), RTCD_OK);
    rtcd_mesh* m = test_mesh_from_generated(&g, "torus");
    run_sequence(m, 1.35f, 0, 5, 0.2f, 300);
    rtcd_mesh_release(m);
    m = test_make_box(1.0f, 0.6f, 0.8f, 6);
    run_sequence(m, 1.4f, 0, 4, 0.2f, 400);
    rtcd_mesh_release(m);
}

/* An open surface (a height field, fronts up) deforms too: waves. */
static rtcd_mesh* make_terrain(int n, float* v, uint32_t* idx)
{
    uint32_t nt = 0;
    for (int j = 0; j <= n; ++j)
        for (int i = 0; i <= n; ++i) {
            float* p = v + 3 * (j * (n + 1) + i);
            p[0] = 8.0f * ((float)i / n - 0.5f), p[1] = 8.0f * ((float)j / n - 0.5f);
            p[2] = 0.15f * sinf(0.9f * p[0]) * cosf(0.7f * p[1]);
        }
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
            uint32_t a = (uint32_t)(j * (n + 1) + i), b = a + 1, c = a + (uint32_t)n + 1, d = c + 1;
            uint32_t t[6] = {a, b, d, a, d, c};
            memcpy(idx + 3 * nt, t, sizeof t);
            nt += 2;
        }
    rtcd_mesh_def def = rtcd_default_mesh_def();
    def.vertices = v;
    def.vertex_count = (uint32_t)((n + 1) * (n + 1));
    def.indices = idx;
    def.triangle_count = nt;
    def.flags = RTCD_MESH_OPEN_SURFACE;
    def.name = "terrain";
    rtcd_mesh* m = NULL;
    assert_int_equal(rtcd_mesh_create(&def, &m), RTCD_OK);
    return m;
}

static void test_open_surface(void** state)
{
    (void)state;
    enum { N = 24 };
    float v[3 * (N + 1) * (N + 1)];
    uint32_t idx[6 * N * N];
    rtcd_mesh* m = make_terrain(N, v, idx);
    for (int s = 1; s <= 4; ++s) {
        for (int i = 0; i < (N + 1) * (N + 1); ++i) {
            float* p = v + 3 * i;
            p[2] = 0.8f * sinf(0.6f * p[0] + 0.7f * (float)s) * cosf(0.5f * p[1] - 0.3f * (float)s);
        }
        assert_int_equal(rtcd_mesh_update_vertices(m, v, 0), RTCD_OK);
        rtcd_mesh* fresh = create_like(m, v, RTCD_MESH_OPEN_SURFACE);
        assert_same_derived(m, fresh);
        assert_same_hits(m, fresh, s == 4 ? 100000 : 5000, 500 + (uint64_t)s);
        rtcd_mesh_release(fresh);
    }
    rtcd_mesh_release(m);
}

/* The edge sum in any order only while it is exact: one edge shrunk to a
 * few millionths of its length (its triangles still pass the checks) makes
 * the sum of the other lengths inexact in the shortest one's units, and the
 * update sums again in triangle order; the next, ordinary shape goes the
 * quick way. Either way the definition's bits (assert_edge_lengths). */
static void test_edge_sum_in_order(void** state)
{
    (void)state;
    rtcd_mesh* m = test_make_blob(RTCD_AVALANCHE_BLOB_VERTICES, 1.0f, 3);
    uint32_t nv = m->vertex_count;
    float* rest = malloc(12 * (size_t)nv);
    float* v = malloc(12 * (size_t)nv);
    memcpy(rest, m->vertices, 12 * (size_t)nv);
    memcpy(v, rest, 12 * (size_t)nv);
    uint32_t a = m->indices[0], b = m->indices[1];
    for (int k = 0; k < 3; ++k) v[3 * a + k] = v[3 * b + k] + 4e-6f * (v[3 * a + k] - v[3 * b + k]);
    assert_int_equal(rtcd_mesh_update_vertices(m, v, 0), RTCD_OK);
    assert_int_equal(m->edge_sums_in_order, 1);
    assert_edge_lengths(m);
    rtcd_mesh* fresh = create_like(m, v, 0);
    assert_same_derived(m, fresh);
    rtcd_mesh_release(fresh);
    pulse_twist(rest, nv, 1.0f, 0.1f, 0.3f, v);
    assert_int_equal(rtcd_mesh_update_vertices(m, v, 0), RTCD_OK);
    assert_int_equal(m->edge_sums_in_order, 1);
    assert_edge_lengths(m);
    free(rest);
    free(v);
    rtcd_mesh_release(m);
}

/* A deformation far from the built shape degrades the refitted tree past
 * the bound: the update rebuilds, and still answers as a fresh mesh. */
static void test_rebuild(void** state)
{
    (void)state;
    rtcd_mesh* m = test_make_blob(1000, 1.0f, 5);
    uint32_t nv = m->vertex_count;
    float* rest = malloc(3 * sizeof(float) * nv);
    float* v = malloc(3 * sizeof(float) * nv);
    memcpy(rest, m->vertices, 3 * sizeof(float) * nv);
    degrade(rest, nv, 1, 1.0f, v); /* a twist of 3 radians per unit of height */
    assert_int_equal(rtcd_mesh_update_vertices(m, v, 0), RTCD_OK);
    rtcd_mesh_deform_stats st = rtcd_mesh_get_deform_stats(m);
    assert_int_equal(st.rebuilds, 1);
    assert_int_equal(st.refits, 0);
    assert_true(st.sah_ratio == 1.0);
    assert_int_equal(m->bvh.leaf_size, RTCD_BVH_DEFAULT_LEAF_SIZE);
    rtcd_mesh* fresh = create_like(m, v, 0);
    assert_same_derived(m, fresh);
    assert_same_hits(m, fresh, 100000, 600);
    rtcd_mesh_release(fresh);
    /* Small steps from there refit the rebuilt tree again. */
    memcpy(rest, v, 3 * sizeof(float) * nv);
    pulse_twist(rest, nv, 1.0f, 0.05f, 0.4f, v);
    assert_int_equal(rtcd_mesh_update_vertices(m, v, 0), RTCD_OK);
    st = rtcd_mesh_get_deform_stats(m);
    assert_int_equal(st.refits, 1);
    assert_int_equal(st.rebuilds, 1);
    assert_int_equal(st.version, 2);
    free(rest);
    free(v);
    rtcd_mesh_release(m);
}

/* ---- refusals and failures leave the mesh as it was ---- */

typedef struct snapshot {
    rtcd_mesh m; /* the struct, pointers included */
    float *v, *tn, *vn, *tris;
    rtcd_bvh_node* nodes;
    rtcd_bvh4_node* nodes4;
    uint32_t* cv;
    rtcd_vertex_cluster* cl;
} snapshot;

static void* dup(const void* p, size_t n)
{
    void* q = malloc(n ? n : 1);
    memcpy(q, p, n);
    return q;
}

static snapshot take(const rtcd_mesh* m)
{
    snapshot s;
    memcpy(&s.m, m, sizeof s.m);
    s.v = dup(m->vertices, 12 * (size_t)m->vertex_count);
    s.vn = dup(m->vertex_normals, 12 * (size_t)m->vertex_count);
    s.tn = dup(m->triangle_normals, 12 * (size_t)m->triangle_count);
    s.tris = dup(m->bvh.tris, 36 * (size_t)m->triangle_count);
    s.nodes = dup(m->bvh.nodes, m->bvh.node_count * sizeof *s.nodes);
    s.nodes4 = dup(m->bvh.nodes4, m->bvh.node4_count * sizeof *s.nodes4);
    s.cv = dup(m->cluster_vertices, 4 * (size_t)m->vertex_count);
    s.cl = dup(m->clusters, m->cluster_count * sizeof *s.cl);
    return s;
}

/* The struct, less what an update may make before its checks (its buffers)
 * and the time it spent. */
static void assert_unchanged(const snapshot* s, const rtcd_mesh* m)
{
    rtcd_mesh was = s->m, now = *m;
    now.spare_vertices = was.spare_vertices, now.normal_sums = was.normal_sums, now.keep = was.keep;
    memcpy(now.part_ms, was.part_ms, sizeof now.part_ms);
    SAME(&was, &now, sizeof now);
    SAME(s->v, m->vertices, 12 * (size_t)m->vertex_count);
    SAME(s->vn, m->vertex_normals, 12 * (size_t)m->vertex_count);
    SAME(s->tn, m->triangle_normals, 12 * (size_t)m->triangle_count);
    SAME(s->tris, m->bvh.tris, 36 * (size_t)m->triangle_count);
    SAME(s->nodes, m->bvh.nodes, m->bvh.node_count * sizeof *s->nodes);
    SAME(s->nodes4, m->bvh.nodes4, m->bvh.node4_count * sizeof *s->nodes4);
    SAME(s->cv, m->cluster_vertices, 4 * (size_t)m->vertex_count);
    SAME(s->cl, m->clusters, m->cluster_count * sizeof *s->cl);
}

static void drop(snapshot* s)
{
    free(s->v), free(s->vn), free(s->tn), free(s->tris), free(s->nodes), free(s->nodes4), free(s->cv), free(s->cl);
}

static void expect_refused(rtcd_mesh* m, const float* v, size_t stride, rtcd_error code, const char* words)
{
    snapshot s = take(m);
    assert_int_equal(rtcd_mesh_update_vertices(m, v, stride), code);
    if (words && !strstr(rtcd_last_error_message(), words))
        fail_msg("message \"%s\" does not name \"%s\"", rtcd_last_error_message(), words);
    assert_unchanged(&s, m);
    drop(&s);
}

static void test_refused(void** state)
{
    (void)state;
    rtcd_mesh* m = test_make_blob(200, 1.0f, 2);
    uint32_t nv = m->vertex_count;
    float* ok = malloc(12 * (size_t)nv);
    float* v = malloc(12 * (size_t)nv);
    pulse_twist(m->vertices, nv, 1.0f, 0.1f, 0.5f, ok);
    assert_int_equal(rtcd_mesh_update_vertices(m, ok, 0), RTCD_OK); /* refused from a deformed state too */

    assert_int_equal(rtcd_mesh_update_vertices(NULL, ok, 0), RTCD_ERROR_INVALID_ARGUMENT);
    expect_refused(m, NULL, 0, RTCD_ERROR_INVALID_ARGUMENT, NULL);
    expect_refused(m, ok, 8, RTCD_ERROR_INVALID_ARGUMENT, "stride");
    memcpy(v, ok, 12 * (size_t)nv);
    v[3 * 17 + 1] = NAN;
    expect_refused(m, v, 0, RTCD_ERROR_MESH_NONFINITE_VERTEX, "vertex 17");
    v[3 * 17 + 1] = INFINITY;
    expect_refused(m, v, 0, RTCD_ERROR_MESH_NONFINITE_VERTEX, "vertex 17");
    /* degenerate: triangle 9's first corner moved onto its second */
    memcpy(v, ok, 12 * (size_t)nv);
    const uint32_t* t9 = m->indices + 27;
    memcpy(v + 3 * t9[0], v + 3 * t9[1], 12);
    expect_refused(m, v, 0, RTCD_ERROR_MESH_DEGENERATE_TRIANGLE, "triangle");
    /* inside out: mirrored */
    for (uint32_t i = 0; i < 3 * nv; ++i) v[i] = i % 3 == 0 ? -ok[i] : ok[i];
    expect_refused(m, v, 0, RTCD_ERROR_MESH_INSIDE_OUT, "volume");
    /* out of range: too far, too small */
    for (uint32_t i = 0; i < 3 * nv; ++i) v[i] = ok[i] + (i % 3 == 0 ? 2e5f : 0.0f);
    expect_refused(m, v, 0, RTCD_ERROR_MESH_OUT_OF_RANGE, "vertex");
    for (uint32_t i = 0; i < 3 * nv; ++i) v[i] = ok[i] * 1e-4f;
    expect_refused(m, v, 0, RTCD_ERROR_MESH_OUT_OF_RANGE, "extent");
    assert_int_equal(rtcd_mesh_version(m), 1);
    assert_int_equal(rtcd_mesh_version(NULL), 0);

    /* A strided array gives what the packed one gives. */
    float* wide = malloc(16 * (size_t)nv);
    pulse_twist(m->vertices, nv, 1.0f, 0.1f, 1.5f, v);
    for (uint32_t i = 0; i < nv; ++i) memcpy(wide + 4 * i, v + 3 * i, 12), wide[4 * i + 3] = NAN;
    assert_int_equal(rtcd_mesh_update_vertices(m, wide, 16), RTCD_OK);
    assert_int_equal(rtcd_mesh_version(m), 2);
    rtcd_mesh* fresh = create_like(m, v, 0);
    assert_same_derived(m, fresh);
    rtcd_mesh_release(fresh);
    free(wide);
    free(ok);
    free(v);
    rtcd_mesh_release(m);
}


/* The check finds what the rule says wherever the failure sits: the
 * quick passes (two triangles at a time, one vertex pass) only clear a
 * shape, the scalar code names the failure. Vertex a moved onto vertex b
 * makes the triangles using both of zero area: the first of them (by
 * index, whichever place it has in its pair) is named, by an update and by
 * creation alike; also with the next triangle repeating a vertex of the
 * same pair, and a far or non-finite coordinate at every position of a run
 * of vertices. */
static void test_check_agrees(void** state)
{
    (void)state;
    rtcd_mesh* m = test_make_blob(RTCD_AVALANCHE_BLOB_VERTICES, 1.0f, 8);
    uint32_t nv = m->vertex_count, nt = m->triangle_count;
    float* v = malloc(12 * (size_t)nv);
    char want[160];
    uint32_t picks[6] = {0, 1, 2, 9, nt - 2, nt - 1};
    for (int pi = 0; pi < 6; ++pi) {
        const uint32_t* tri = m->indices + 3 * picks[pi];
        uint32_t a = tri[0], b = tri[1], first = nt;
        for (uint32_t t = 0; t < nt && first == nt; ++t) {
            const uint32_t* q = m->indices + 3 * t;
            int has_a = q[0] == a || q[1] == a || q[2] == a, has_b = q[0] == b || q[1] == b || q[2] == b;
            if (has_a && has_b) first = t;
        }
        memcpy(v, m->vertices, 12 * (size_t)nv);
        memcpy(v + 3 * a, v + 3 * b, 12);
        const uint32_t* f = m->indices + 3 * first;
        snprintf(want, sizeof want, "blob: triangle %u (%u, %u, %u) has zero area", first, f[0], f[1], f[2]);
        expect_refused(m, v, 0, RTCD_ERROR_MESH_DEGENERATE_TRIANGLE, want);
        rtcd_mesh_def def = rtcd_default_mesh_def();
        def.vertices = v, def.vertex_count = nv, def.indices = m->indices, def.triangle_count = nt, def.name = "blob";
        rtcd_mesh* c = NULL;
        assert_int_equal(rtcd_mesh_create(&def, &c), RTCD_ERROR_MESH_DEGENERATE_TRIANGLE);
        assert_non_null(strstr(rtcd_last_error_message(), want));
    }
    /* a triangle that repeats a vertex after one of zero area in its pair,
     * and before one: the first in index order is named */
    uint32_t* idx = malloc(12 * (size_t)nt);
    for (int order = 0; order < 2; ++order) {
        memcpy(idx, m->indices, 12 * (size_t)nt);
        memcpy(v, m->vertices, 12 * (size_t)nv);
        uint32_t zero = order ? 11 : 10, rep = order ? 10 : 11; /* one pair: triangles 10 and 11 */
        idx[3 * rep + 2] = idx[3 * rep];
        const uint32_t* z = idx + 3 * zero;
        for (int k = 0; k < 3; ++k) v[3 * z[2] + k] = 0.5f * (v[3 * z[0] + k] + v[3 * z[1] + k]); /* on its edge */
        rtcd_mesh_def def = rtcd_default_mesh_def();
        def.vertices = v, def.vertex_count = nv, def.indices = idx, def.triangle_count = nt, def.name = "blob";
        rtcd_mesh* c = NULL;
        assert_int_equal(rtcd_mesh_create(&def, &c), RTCD_ERROR_MESH_DEGENERATE_TRIANGLE);
        if (order) snprintf(want, sizeof want, "blob: triangle 10 repeats a vertex");
        else snprintf(want, sizeof want, "blob: triangle 10 (%u, %u, %u) has zero area", z[0], z[1], z[2]);
        assert_non_null(strstr(rtcd_last_error_message(), want));
    }
    /* the vertex pass: each of the first five vertices far out, then non-finite */
    for (uint32_t i = 0; i < 5; ++i)
        for (int k = 0; k < 3; ++k) {
            memcpy(v, m->vertices, 12 * (size_t)nv);
            v[3 * i + k] = k == 1 ? -3e5f : 3e5f;
            snprintf(want, sizeof want, "blob: vertex %u lies 300000 m from the origin", i);
            expect_refused(m, v, 0, RTCD_ERROR_MESH_OUT_OF_RANGE, want);
            v[3 * i + k] = k == 2 ? -INFINITY : NAN;
            snprintf(want, sizeof want, "blob: vertex %u has a non-finite coordinate (%c = ", i, "xyz"[k]);
            expect_refused(m, v, 0, RTCD_ERROR_MESH_NONFINITE_VERTEX, want);
        }
    assert_int_equal(rtcd_mesh_version(m), 0);
    free(idx);
    free(v);
    rtcd_mesh_release(m);
}

/* Every allocation of an update failed in turn, on the refit path and on
 * the rebuild path. The first update makes its buffers before its checks:
 * a failure there is reported and leaves the mesh as it was. Past the
 * checks the update cannot fail: a BVH rebuild or a cluster sort without
 * memory keeps the refitted tree and the runs as they were (documented
 * fallback), and the mesh still answers as a fresh one. */
static void test_out_of_memory(void** state)
{
    (void)state;
    test_failing_allocator_install();
    for (int rebuild = 0; rebuild < 2; ++rebuild) {
        long refusals = 0, fallbacks = 0;
        for (long n = 0;; ++n) {
            rtcd_mesh* m = test_make_blob(300, 1.0f, 6);
            uint32_t nv = m->vertex_count;
            float* v = malloc(12 * (size_t)nv);
            if (rebuild) degrade(m->vertices, nv, 1, 1.0f, v);
            else pulse_twist(m->vertices, nv, 1.0f, 0.2f, 0.7f, v);
            snapshot s = take(m);
            test_fail_after(n);
            rtcd_error err = rtcd_mesh_update_vertices(m, v, 0);
            long failed = test_failed_allocations();
            test_fail_after(-1);
            rtcd_mesh_deform_stats st = rtcd_mesh_get_deform_stats(m);
            if (failed && err != RTCD_OK) {
                assert_int_equal(err, RTCD_ERROR_OUT_OF_MEMORY);
                assert_unchanged(&s, m);
                ++refusals;
            } else {
                assert_int_equal(err, RTCD_OK);
                assert_int_equal(st.version, 1);
                if (failed) ++fallbacks;
                if (!failed) assert_int_equal(st.rebuilds, (uint64_t)rebuild);
                rtcd_mesh* fresh = create_like(m, v, 0);
                assert_same_derived(m, fresh);
                assert_same_hits(m, fresh, 2000, 700);
                rtcd_mesh_release(fresh);
            }
            drop(&s);
            free(v);
            rtcd_mesh_release(m);
            if (!failed) break;
        }
        print_message("%s path: %ld allocation failures refused cleanly, %ld taken by the fallback\n",
                      rebuild ? "rebuild" : "refit", refusals, fallbacks);
        assert_int_equal(refusals, 3); /* spare vertices, normal sums, the grids' keep */
        assert_true(fallbacks >= (rebuild ? 5 : 1));
    }
    rtcd_set_allocator(NULL, NULL, NULL);
}

/* ---- the lazily kept structures against fresh ones, 1000 updates ---- */

/* A random smooth deformation each update: pulse and twist of random
 * amplitude and phase from the rest shape, now and then a jump (a big step
 * that spends the grids' slack at once), now and then the same vertices
 * again (no motion). Every update: the geometry bit for bit, the grids'
 * soundness at 60 points, cluster balls; every 50th: 400 points, first hits
 * and the narrow phase's rays against a box, bit for bit as with the fresh
 * mesh. */
static void test_randomized_updates(void** state)
{
    (void)state;
    rtcd_mesh* m = test_make_blob(RTCD_AVALANCHE_BLOB_VERTICES, 1.0f, 33);
    rtcd_mesh* box = test_make_box(0.6f, 0.5f, 0.7f, 4);
    uint32_t nv = m->vertex_count;
    float* rest = malloc(12 * (size_t)nv);
    float* v = malloc(12 * (size_t)nv);
    memcpy(rest, m->vertices, 12 * (size_t)nv);
    test_rng rng = {4242};
    float phase = 0.0f;
    long looser = 0, points = 0;
    rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
    uint32_t cap = nv + box->vertex_count;
    rtcd_ray_hit* ra = malloc(cap * sizeof *ra);
    rtcd_ray_hit* rb = malloc(cap * sizeof *rb);
    long compared_rays = 0;
    for (int u = 1; u <= 1000; ++u) {
        uint64_t r = test_rng_next(&rng) % 100;
        if (r < 3) {
            memcpy(v, m->vertices, 12 * (size_t)nv); /* the same vertices again */
        } else {
            phase += r < 8 ? (float)test_rng_range(&rng, 1.0, 3.0) : (float)test_rng_range(&rng, 0.0, 0.08);
            float amp = (float)test_rng_range(&rng, 0.05, 0.25);
            pulse_twist(rest, nv, 1.0f, amp, phase, v);
        }
        uint64_t refits = m->bvh_refits;
        assert_int_equal(rtcd_mesh_update_vertices(m, v, 0), RTCD_OK);
        if (m->bvh_refits > refits) assert_refit_boxes(m);
        rtcd_mesh* fresh = create_like(m, v, 0);
        int deep = u % 50 == 0;
        /* geometry exact, clusters hold their vertices, grids sound (600 points) */
        if (deep) assert_same_derived(m, fresh);
        looser += assert_grids_sound(m, fresh, deep ? 400 : 60, 9000 + (uint64_t)u);
        points += deep ? 400 : 60;
        SAME(m->vertex_normals, fresh->vertex_normals, 12 * (size_t)nv);
        SAME(&m->max_edge_length, &fresh->max_edge_length, sizeof(float));
        assert_occupancy_exact(m);
        if (u == 1) assert_occupancy_exact(fresh); /* the reference agrees with creation too */
        if (deep) {
            assert_same_hits(m, fresh, 3000, 77 + (uint64_t)u);
            /* the narrow phase, both directions: the same rays, bit for bit */
            for (int pose = 0; pose < 3; ++pose) {
                rtcd_transform pa = rtcd_transform_identity(), pb = rtcd_transform_identity();
                pb.translation[0] = 0.5f + 0.3f * (float)pose;
                pb.translation[1] = 0.2f * (float)pose;
                uint32_t na = 0, nb = 0;
                assert_int_equal(rtcd_collide_standard(&def, m, &pa, box, &pb, ra, cap, &na, NULL), RTCD_OK);
                assert_int_equal(rtcd_collide_standard(&def, fresh, &pa, box, &pb, rb, cap, &nb, NULL), RTCD_OK);
                assert_int_equal(na, nb);
                SAME(ra, rb, na * sizeof *ra);
                assert_int_equal(rtcd_collide_standard(&def, box, &pb, m, &pa, ra, cap, &na, NULL), RTCD_OK);
                assert_int_equal(rtcd_collide_standard(&def, box, &pb, fresh, &pa, rb, cap, &nb, NULL), RTCD_OK);
                assert_int_equal(na, nb);
                SAME(ra, rb, na * sizeof *ra);
                compared_rays += 2 * (long)na;
            }
        }
        rtcd_mesh_release(fresh);
    }
    rtcd_mesh_deform_stats st = rtcd_mesh_get_deform_stats(m);
    fprintf(stderr, "1000 updates: %llu grid rebuilds, %llu cluster sorts, %llu BVH rebuilds; %ld of %ld points "
                    "culled by a fresh grid and not by the kept one; %ld narrow-phase rays compared\n",
            (unsigned long long)st.grid_rebuilds, (unsigned long long)st.cluster_sorts,
            (unsigned long long)st.rebuilds, looser, points, compared_rays);
    assert_int_equal(st.version, 1000);
    assert_true(st.grid_rebuilds > 10 && st.grid_rebuilds < 900); /* both ways taken */
    assert_true(compared_rays > 100); /* not vacuous */
    free(ra);
    free(rb);
    free(rest);
    free(v);
    rtcd_mesh_release(box);
    rtcd_mesh_release(m);
}

/* Many meshes in one call over rtcd's pool: each as its own update would
 * make it; a repeated or NULL mesh refuses the call, a refused shape fails
 * its own update only. */
static void test_update_many(void** state)
{
    (void)state;
    enum { N = 6 };
    rtcd_mesh* ms[N];
    rtcd_mesh* solo[N];
    float* vs[N];
    for (int k = 0; k < N; ++k) {
        ms[k] = test_make_blob(200 + 40 * (uint32_t)k, 1.0f, 50 + (uint64_t)k);
        solo[k] = test_make_blob(200 + 40 * (uint32_t)k, 1.0f, 50 + (uint64_t)k);
        vs[k] = malloc(12 * (size_t)ms[k]->vertex_count);
    }
    rtcd_thread_pool* pool = NULL;
    assert_int_equal(rtcd_thread_pool_create(3, &pool), RTCD_OK);
    rtcd_task_system ts = rtcd_thread_pool_system(pool);
    for (int step = 1; step <= 4; ++step) {
        for (int k = 0; k < N; ++k) pulse_twist(solo[k]->vertices, solo[k]->vertex_count, 1.0f, 0.04f, (float)(step + k), vs[k]);
        if (step == 3) vs[2][5] = NAN; /* mesh 2 refuses this one */
        rtcd_error errs[N];
        rtcd_error err = rtcd_mesh_update_vertices_many(ms, (const float* const*)vs, NULL, N, step % 2 ? &ts : NULL, errs);
        assert_int_equal(err, step == 3 ? RTCD_ERROR_MESH_NONFINITE_VERTEX : RTCD_OK);
        for (int k = 0; k < N; ++k) {
            rtcd_error want = rtcd_mesh_update_vertices(solo[k], vs[k], 0);
            assert_int_equal(errs[k], want);
            assert_int_equal(ms[k]->version, solo[k]->version);
            SAME(ms[k]->vertices, solo[k]->vertices, 12 * (size_t)ms[k]->vertex_count);
            SAME(ms[k]->vertex_normals, solo[k]->vertex_normals, 12 * (size_t)ms[k]->vertex_count);
            rtcd_mesh_grids_ready(ms[k]);
            rtcd_mesh_grids_ready(solo[k]);
            SAME(&ms[k]->grid, &solo[k]->grid, sizeof ms[k]->grid);
            SAME(ms[k]->bvh.nodes, solo[k]->bvh.nodes, ms[k]->bvh.node_count * sizeof(rtcd_bvh_node));
        }
    }
    rtcd_mesh* twice[2] = {ms[0], ms[0]};
    const float* tv[2] = {vs[0], vs[0]};
    assert_int_equal(rtcd_mesh_update_vertices_many(twice, tv, NULL, 2, &ts, NULL), RTCD_ERROR_INVALID_ARGUMENT);
    assert_int_equal(ms[0]->version, solo[0]->version);
    assert_int_equal(rtcd_mesh_update_vertices_many(NULL, tv, NULL, 2, NULL, NULL), RTCD_ERROR_INVALID_ARGUMENT);
    rtcd_mesh* with_null[2] = {ms[0], NULL};
    assert_int_equal(rtcd_mesh_update_vertices_many(with_null, tv, NULL, 2, &ts, NULL), RTCD_ERROR_INVALID_ARGUMENT);
    assert_true(strstr(rtcd_last_error_message(), "NULL") != NULL);
    assert_int_equal(ms[0]->version, solo[0]->version);
    assert_int_equal(rtcd_mesh_update_vertices_many(NULL, NULL, NULL, 0, NULL, NULL), RTCD_OK);
    rtcd_thread_pool_destroy(pool);
    for (int k = 0; k < N; ++k) {
        rtcd_mesh_release(ms[k]);
        rtcd_mesh_release(solo[k]);
        free(vs[k]);
    }
}

/* The grids an update leaves to the first reader: whenever they are read,
 * they are what reading after every update gives (the same bytes: the
 * fill depends on the updates, not on when it runs), each stale period is
 * filled once however many workers read at once, and a mesh no one reads
 * is not filled at all. */
typedef struct lazy_readers {
    const rtcd_mesh* mesh;
    const rtcd_mesh* every; /* read after every update */
    _Atomic uint32_t bad;
} lazy_readers;

static void read_grids(uint32_t begin, uint32_t end, uint32_t worker, void* p)
{
    (void)worker;
    lazy_readers* r = p;
    for (uint32_t i = begin; i < end; ++i) {
        rtcd_mesh_view v = rtcd_mesh_view_of(r->mesh, RTCD_TRAVERSAL_BVH); /* the narrow phase's reader */
        if (memcmp(v.solid, r->every->grid.solid, RTCD_GRID_BYTES) || memcmp(v.near, r->every->grid.near, RTCD_NEAR_BYTES))
            r->bad++;
    }
}

static void test_lazy_grids(void** state)
{
    (void)state;
    rtcd_mesh* every = test_make_blob(400, 1.0f, 77);
    rtcd_mesh* sometimes = test_make_blob(400, 1.0f, 77);
    rtcd_mesh* never = test_make_blob(400, 1.0f, 77);
    uint32_t nv = every->vertex_count;
    float* rest = malloc(12 * (size_t)nv);
    float* v = malloc(12 * (size_t)nv);
    memcpy(rest, every->vertices, 12 * (size_t)nv);
    rtcd_thread_pool* pool = NULL;
    assert_int_equal(rtcd_thread_pool_create(4, &pool), RTCD_OK);
    rtcd_task_system ts = rtcd_thread_pool_system(pool);
    test_rng rng = {99};
    uint64_t reads = 0;
    for (int u = 1; u <= 120; ++u) {
        float amp = 0.02f + 0.1f * (float)(test_rng_next(&rng) % 1000) / 1000.0f;
        pulse_twist(rest, nv, 1.0f, amp, 0.1f * (float)u, v);
        assert_int_equal(rtcd_mesh_update_vertices(every, v, 0), RTCD_OK);
        assert_int_equal(rtcd_mesh_update_vertices(sometimes, v, 0), RTCD_OK);
        assert_int_equal(rtcd_mesh_update_vertices(never, v, 0), RTCD_OK);
        rtcd_mesh_grids_ready(every);
        if (test_rng_next(&rng) % 5 != 0) continue; /* read now and then */
        uint64_t fills = sometimes->lazy_fills;
        lazy_readers r = {sometimes, every, 0};
        rtcd_parallel_for(&ts, 64, 1, read_grids, &r);
        assert_int_equal(r.bad, 0);
        assert_true(sometimes->lazy_fills - fills <= 1); /* one fill however many readers */
        SAME(&sometimes->grid, &every->grid, sizeof every->grid);
        reads++;
    }
    assert_true(reads > 10);
    assert_int_equal(never->lazy_fills, 0);
    assert_true(every->lazy_fills > 60); /* not vacuous: most updates leave a fill */
    rtcd_mesh_grids_ready(never);
    SAME(&never->grid, &every->grid, sizeof every->grid);
    rtcd_thread_pool_destroy(pool);
    free(rest);
    free(v);
    rtcd_mesh_release(every);
    rtcd_mesh_release(sometimes);
    rtcd_mesh_release(never);
}

/* ---- measurements (not part of the test run) ---- */

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static int cmp_double(const void* a, const void* b)
{
    double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : x > y;
}

static double median(double* x, int n)
{
    qsort(x, (size_t)n, sizeof *x, cmp_double);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

static volatile long g_sink;

static double time_rays(const rtcd_mesh* m, const rtcd_ray* rays, long n)
{
    double t0 = now_us();
    long hits = 0;
    for (long r = 0; r < n; ++r) {
        rtcd_hit h;
        hits += rtcd_mesh_first_hit(m, &rays[r], RTCD_TRAVERSAL_BVH, &h);
    }
    double t = now_us() - t0;
    g_sink += hits; /* keeps the loop */
    return t;
}

/* Box tests plus triangle tests of the ordered binary walk: the work the
 * SAH predicts, free of timing noise. */
static double walk_cost(const rtcd_mesh* m, const rtcd_ray* ray)
{
    rtcd_bvh_view view = rtcd_mesh_bvh_view(m);
    rtcd_v3 org = v3_load(ray->origin), dir = v3_load(ray->direction), inv = safe_reciprocal(dir);
    rtcd_tri_hit best = {RTCD_INVALID, ray->tmax, 0.0f, 0.0f};
    uint32_t stack[RTCD_BVH_STACK_SIZE];
    float stack_t[RTCD_BVH_STACK_SIZE];
    int sp = 0;
    double cost = 1.0;
    float t0;
    const rtcd_bvh_node* nodes = view.nodes;
    if (!ray_aabb(org, inv, v3_load(nodes[0].lo), v3_load(nodes[0].hi), ray->tmin, best.t, &t0)) return cost;
    stack[sp] = 0, stack_t[sp++] = t0;
    while (sp > 0) {
        --sp;
        if (stack_t[sp] > best.t) continue;
        uint32_t i = stack[sp];
        while (nodes[i].prims == 0) {
            uint32_t l = i + 1, r = nodes[l].escape;
            float tl, tr;
            int hl = ray_aabb(org, inv, v3_load(nodes[l].lo), v3_load(nodes[l].hi), ray->tmin, best.t, &tl);
            int hr = ray_aabb(org, inv, v3_load(nodes[r].lo), v3_load(nodes[r].hi), ray->tmin, best.t, &tr);
            cost += 2.0;
            if (hl && hr) {
                if (sp < RTCD_BVH_STACK_SIZE) stack[sp] = tl <= tr ? r : l, stack_t[sp++] = tl <= tr ? tr : tl;
                i = tl <= tr ? l : r;
            } else if (hl || hr) {
                i = hl ? l : r;
            } else {
                break;
            }
        }
        if (nodes[i].prims != 0) {
            cost += nodes[i].prims & RTCD_BVH_MAX_LEAF_SIZE;
            leaf_first_hit(&view, nodes[i].prims, org, dir, ray->tmin, ray->skip_vertex, &best);
        }
    }
    return cost;
}

/* SAH of m's tree over the root's area and over the triangles' box areas. */
static void sah_of(const rtcd_mesh* m, double* by_root, double* by_tris)
{
    double sum = 0.0, root = 0.0, tris = 0.0;
    for (uint32_t i = 0; i < m->bvh.node_count; ++i) {
        const rtcd_bvh_node* n = &m->bvh.nodes[i];
        double d[3];
        for (int k = 0; k < 3; ++k) d[k] = (double)n->hi[k] - n->lo[k];
        double a = d[0] * d[1] + d[1] * d[2] + d[2] * d[0];
        if (i == 0) root = a;
        sum += a * (n->prims ? (double)(n->prims & RTCD_BVH_MAX_LEAF_SIZE) : 1.0);
    }
    for (uint32_t k = 0; k < m->triangle_count; ++k) {
        float lo[3], hi[3];
        for (int a = 0; a < 3; ++a) {
            const float* p = m->bvh.tris + 9 * k;
            lo[a] = fminf(p[a], fminf(p[3 + a], p[6 + a]));
            hi[a] = fmaxf(p[a], fmaxf(p[3 + a], p[6 + a]));
        }
        double d[3] = {(double)hi[0] - lo[0], (double)hi[1] - lo[1], (double)hi[2] - lo[2]};
        tris += d[0] * d[1] + d[1] * d[2] + d[2] * d[0];
    }
    *by_root = sum / root;
    *by_tris = sum / tris;
}

/* Refit from the rest shape to growing deformations (forced: the bound is
 * lifted by hand), then first-hit time on the refitted tree over a fresh
 * build's, against the SAH ratio. */
static int measure_bound(void)
{
    enum { RAYS = 100000, REPS = 3 };
    const uint32_t sizes[2] = {1002, 10002};
    const float amps[] = {0.05f, 0.1f, 0.2f, 0.3f, 0.5f, 0.7f, 1.0f, 1.5f};
    const int namps = (int)(sizeof amps / sizeof amps[0]);
    rtcd_ray* rays = malloc(RAYS * sizeof *rays);
    printf("triangles family amplitude | sah/root: refit/built fresh/built refit/fresh | sah/tris: refit/built "
           "fresh/built | walk refit/fresh | time refit/fresh\n");
    for (int si = 0; si < 2; ++si) {
        rtcd_mesh* rest = test_make_blob(sizes[si], 1.0f, 17);
        uint32_t nv = rest->vertex_count;
        float* v = malloc(12 * (size_t)nv);
        for (int fam = 0; fam < 3; ++fam)
            for (int ai = 0; ai < namps; ++ai) {
                degrade(rest->vertices, nv, fam, amps[ai], v);
                rtcd_mesh* m = create_like(rest, rest->vertices, 0);
                double built = m->bvh.built_sah;
                m->bvh.built_sah = 1e300; /* refit whatever the degradation */
                if (rtcd_mesh_update_vertices(m, v, 0) != RTCD_OK) {
                    rtcd_mesh_release(m);
                    continue;
                }
                m->bvh.built_sah = built;
                rtcd_mesh* fresh = create_like(m, v, 0);
                test_rng rng = {99};
                for (long r = 0; r < RAYS; ++r) make_ray(fresh, &rng, r, &rays[r]);
                double cr = 0.0, cf = 0.0, s0r, s0t, s1r, s1t, s2r, s2t;
                for (long r = 0; r < RAYS; ++r) cr += walk_cost(m, &rays[r]), cf += walk_cost(fresh, &rays[r]);
                sah_of(rest, &s0r, &s0t);
                sah_of(m, &s1r, &s1t);
                sah_of(fresh, &s2r, &s2t);
                double tr[REPS], tf[REPS];
                for (int k = 0; k < REPS; ++k) {
                    tr[k] = time_rays(m, rays, RAYS);
                    tf[k] = time_rays(fresh, rays, RAYS);
                }
                printf("%u %d %.2f | %.3f %.3f %.3f | %.3f %.3f | %.3f | %.3f\n", m->triangle_count, fam,
                       (double)amps[ai], s1r / s0r, s2r / s0r, s1r / s2r, s1t / s0t, s2t / s0t, cr / cf,
                       median(tr, REPS) / median(tf, REPS));
                fflush(stdout);
                rtcd_mesh_release(fresh);
                rtcd_mesh_release(m);
            }
        free(v);
        rtcd_mesh_release(rest);
    }
    free(rays);
    return 0;
}

/* Update cost per mesh size: refit-only updates (the avalanche's motion:
 * a pulse and twist of 12 % at 1 Hz, 60 updates a second) split by part
 * (medians: a time slice lost to another process spoils a mean; the grids'
 * and clusters' rebuilds, one update in ~20, show in the means, not here),
 * and forced rebuilds, median over repeated updates; creation for scale. */
static int bench(void)
{
    const uint32_t sizes[3] = {RTCD_AVALANCHE_BLOB_VERTICES, 5002, 50002}; /* 902, 10k, 100k triangles */
    const int reps[3] = {241, 61, 13};
    printf("{\"benchmark\":\"deform\",\"bound\":\"core/mesh/mesh_deform.c\",\"sizes\":[");
    for (int si = 0; si < 3; ++si) {
        rtcd_mesh* m = test_make_blob(sizes[si], 1.0f, 21);
        uint32_t nv = m->vertex_count, nt = m->triangle_count;
        float* rest = malloc(12 * (size_t)nv);
        float* v = malloc(12 * (size_t)nv);
        memcpy(rest, m->vertices, 12 * (size_t)nv);
        double refit[256], lazy[256], with_lazy[256], rebuild[256], create[256], parts[RTCD_DEFORM_PARTS][256];
        double ratio = 1.0;
        int nb = 0;
        for (int r = 0; r < reps[si]; ++r) {
            double w = 2.0 * 3.14159265358979 * r / 60.0;
            pulse_twist(rest, nv, 1.0f, 0.12f, (float)w, v);
            rtcd_mesh_deform_stats before = rtcd_mesh_get_deform_stats(m);
            double t0 = now_us();
            assert_int_equal(rtcd_mesh_update_vertices(m, v, 0), RTCD_OK);
            refit[r] = now_us() - t0;
            t0 = now_us();
            rtcd_mesh_grids_ready(m); /* what the update left to the step's first reader */
            lazy[r] = now_us() - t0;
            with_lazy[r] = refit[r] + lazy[r];
            rtcd_mesh_deform_stats after = rtcd_mesh_get_deform_stats(m);
            for (int p = 0; p < RTCD_DEFORM_PARTS; ++p) parts[p][r] = (after.part_ms[p] - before.part_ms[p]) * 1000.0;
            ratio = after.sah_ratio;
            if (r % 6 != 5) continue;
            /* every sixth: a forced rebuild (any refit passes the bound) and a creation */
            double built = m->bvh.built_sah;
            m->bvh.built_sah = 0.0;
            t0 = now_us();
            assert_int_equal(rtcd_mesh_update_vertices(m, v, 0), RTCD_OK);
            rebuild[nb] = now_us() - t0;
            (void)built;
            t0 = now_us();
            rtcd_mesh* fresh = create_like(m, v, 0);
            create[nb++] = now_us() - t0;
            rtcd_mesh_release(fresh);
        }
        rtcd_mesh_deform_stats st = rtcd_mesh_get_deform_stats(m);
        double mr = median(refit, reps[si]), mb = median(rebuild, nb), mc = median(create, nb);
        printf("%s{\"lazy_fill_us_median\":%.1f,\"refit_with_lazy_fill_us_median\":%.1f,", si ? "," : "",
               median(lazy, reps[si]), median(with_lazy, reps[si]));
        printf("\"triangles\":%u,\"vertices\":%u,\"updates\":%d,\"refit_us_median\":%.1f,"
               "\"refit_us_per_1k_triangles\":%.2f,\"rebuild_us_median\":%.1f,\"rebuild_us_per_1k_triangles\":%.2f,"
               "\"create_us_median\":%.1f,\"refits\":%llu,\"rebuilds\":%llu,\"grid_rebuilds\":%llu,"
               "\"last_refit_sah_ratio\":%.3f,\"refit_parts_us_median\":{",
               nt, nv, reps[si], mr, mr * 1000.0 / nt, mb, mb * 1000.0 / nt, mc,
               (unsigned long long)st.refits, (unsigned long long)st.rebuilds, (unsigned long long)st.grid_rebuilds,
               ratio);
        for (int p = 0; p < RTCD_DEFORM_PARTS; ++p)
            printf("%s\"%s\":%.2f", p ? "," : "", rtcd_mesh_deform_part_name(p), median(parts[p], reps[si]));
        printf("}}");
        free(rest);
        free(v);
        rtcd_mesh_release(m);
    }
    printf("]}\n");
    return 0;
}

int main(int argc, char** argv)
{
    if (argc > 1 && strcmp(argv[1], "--bench") == 0) return bench();
    if (argc > 1 && strcmp(argv[1], "--bound") == 0) return measure_bound();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blob_sequence), cmocka_unit_test(test_generated_sequence),
        cmocka_unit_test(test_open_surface),  cmocka_unit_test(test_rebuild),
        cmocka_unit_test(test_refused),       cmocka_unit_test(test_out_of_memory),
        cmocka_unit_test(test_randomized_updates), cmocka_unit_test(test_update_many),
        cmocka_unit_test(test_lazy_grids),    cmocka_unit_test(test_edge_sum_in_order),
        cmocka_unit_test(test_check_agrees),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
