/* BVH first hit (ordered, stackless, and the kernels' portable 4-wide walk)
 * against brute force, and watertightness. */
#include "test_util.h"

#include "mesh/mesh_layout.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef RTCD_TEST_RAYS_PER_MESH
#define RTCD_TEST_RAYS_PER_MESH 100000
#endif

static rtcd_mesh* make_torus(void)
{
    rtcd_generated_mesh g;
    assert_int_equal(rtcd_generate_torus(1.0f, 0.35f, 40, 20, &g), RTCD_OK);
    return test_mesh_from_generated(&g, "torus");
}

/* The 4-wide walk (shared/bvh.h bvh4_first_hit: the CPU's, and the CPU
 * devices' kernels') returns bit for bit what the binary stack walk of the
 * same tree returns (nearest hit, ties to the lower triangle); both are
 * checked against brute force below. */
static int walk4_differs_from_binary(const rtcd_mesh* m, const rtcd_ray* ray)
{
    if (!m->bvh.nodes4) return 0;
    rtcd_bvh_view view = rtcd_mesh_bvh_view(m);
    rtcd_v3 o = v3_load(ray->origin), d = v3_load(ray->direction);
    rtcd_tri_hit a = bvh4_first_hit(m->bvh.nodes4, &view, o, d, ray->tmin, ray->tmax, ray->skip_vertex);
    rtcd_tri_hit b = bvh_first_hit(&view, o, d, ray->tmin, ray->tmax, ray->skip_vertex);
    return a.tri != b.tri || (a.tri != RTCD_INVALID && (memcmp(&a.t, &b.t, sizeof a.t) ||
                                                       memcmp(&a.u, &b.u, sizeof a.u) || memcmp(&a.v, &b.v, sizeof a.v)));
}

static void compare(const rtcd_mesh* m, const rtcd_ray* ray, long* mismatches, long* hits)
{
    rtcd_hit ref, bvh, stackless;
    int h_ref = rtcd_mesh_first_hit(m, ray, RTCD_TRAVERSAL_BRUTE_FORCE, &ref);
    int h_bvh = rtcd_mesh_first_hit(m, ray, RTCD_TRAVERSAL_BVH, &bvh);
    int h_sl = rtcd_mesh_first_hit(m, ray, RTCD_TRAVERSAL_BVH_STACKLESS, &stackless);
    if (walk4_differs_from_binary(m, ray)) {
        if (*mismatches < 5) fprintf(stderr, "the 4-wide walk differs from the binary walk\n");
        ++*mismatches;
    }
    *hits += h_ref;
    const rtcd_hit* got[2] = {&bvh, &stackless};
    int h_got[2] = {h_bvh, h_sl};
    for (int k = 0; k < 2; ++k) {
        int same = h_got[k] == h_ref;
        if (same && h_ref)
            same = got[k]->triangle == ref.triangle && fabsf(got[k]->t - ref.t) <= 1e-5f * fmaxf(1.0f, fabsf(ref.t)) &&
                   got[k]->exits == ref.exits;
        if (!same) {
            if (*mismatches < 5)
                fprintf(stderr, "%s mismatch: ref (%d, tri %u, t %.9g) got (%d, tri %u, t %.9g)\n",
                        k ? "stackless" : "bvh", h_ref, ref.triangle, (double)ref.t, h_got[k], got[k]->triangle,
                        (double)got[k]->t);
            ++*mismatches;
        }
    }
}

/* Interior point used for "rays from inside": every mesh here is star-shaped
 * around `inside` (the torus uses a point on its core circle). */
static void check_mesh(rtcd_mesh* m, const float inside[3], uint64_t seed)
{
    test_rng rng = {seed};
    uint32_t nv = rtcd_mesh_vertex_count(m);
    const float* v = rtcd_mesh_vertices(m);
    const float* vn = rtcd_mesh_vertex_normals(m);
    const uint32_t* idx = rtcd_mesh_indices(m);
    uint32_t nt = rtcd_mesh_triangle_count(m);
    float lo[3], hi[3];
    rtcd_mesh_bounds(m, lo, hi);
    long mismatches = 0, hits = 0;
    for (long r = 0; r < RTCD_TEST_RAYS_PER_MESH; ++r) {
        rtcd_ray ray = {{0, 0, 0}, {0, 0, 0}, 0.0f, INFINITY, RTCD_NO_VERTEX};
        int kind = (int)(r % 5);
        if (kind == 0) { /* anywhere around the mesh, any direction */
            for (int k = 0; k < 3; ++k) {
                float ext = hi[k] - lo[k];
                ray.origin[k] = (float)test_rng_range(&rng, lo[k] - 0.5 * ext, hi[k] + 0.5 * ext);
            }
            test_rng_unit_vector(&rng, ray.direction);
        } else if (kind == 1) { /* from inside */
            float s = (float)test_rng_range(&rng, 0.0, 0.9);
            const float* p = v + 3 * (test_rng_next(&rng) % nv);
            for (int k = 0; k < 3; ++k) ray.origin[k] = inside[k] + s * (p[k] - inside[k]);
            test_rng_unit_vector(&rng, ray.direction);
        } else if (kind == 2 || kind == 3) { /* exactly at a vertex, or a point of an edge */
            for (int k = 0; k < 3; ++k) {
                float ext = hi[k] - lo[k];
                ray.origin[k] = (float)test_rng_range(&rng, lo[k] - ext, hi[k] + ext);
            }
            uint32_t t = (uint32_t)(test_rng_next(&rng) % nt);
            int e = (int)(test_rng_next(&rng) % 3);
            const float* a = v + 3 * idx[3 * t + e];
            const float* b = v + 3 * idx[3 * t + (e + 1) % 3];
            float s = kind == 2 ? 0.0f : (float)test_rng_uniform(&rng);
            for (int k = 0; k < 3; ++k) ray.direction[k] = a[k] + s * (b[k] - a[k]) - ray.origin[k];
        } else { /* the narrow phase's own ray: from a vertex along its inward normal */
            uint32_t i = (uint32_t)(test_rng_next(&rng) % nv);
            for (int k = 0; k < 3; ++k) {
                ray.origin[k] = v[3 * i + k];
                ray.direction[k] = -vn[3 * i + k];
            }
            ray.skip_vertex = i;
        }
        compare(m, &ray, &mismatches, &hits);
    }
    fprintf(stderr, "%s: %d rays, %ld hits, %ld mismatches\n", rtcd_mesh_name(m), RTCD_TEST_RAYS_PER_MESH, hits,
            mismatches);
    assert_int_equal(mismatches, 0);
    assert_true(hits > RTCD_TEST_RAYS_PER_MESH / 4); /* the comparison is not vacuous */
}

/* A closed surface has no gaps: every ray from inside aimed exactly at a
 * vertex or a shared edge hits, and the hit is an exit. */
static void check_watertight(rtcd_mesh* m, const float inside[3])
{
    const float* v = rtcd_mesh_vertices(m);
    const uint32_t* idx = rtcd_mesh_indices(m);
    uint32_t nt = rtcd_mesh_triangle_count(m);
    long misses = 0, aimed = 0;
    for (uint32_t t = 0; t < nt; ++t) {
        for (int e = 0; e < 3; ++e) {
            const float* a = v + 3 * idx[3 * t + e];
            const float* b = v + 3 * idx[3 * t + (e + 1) % 3];
            for (int s = 0; s < 3; ++s) { /* the vertex, the midpoint, a third of the way */
                float f = s == 0 ? 0.0f : (s == 1 ? 0.5f : 1.0f / 3.0f);
                rtcd_ray ray = {{inside[0], inside[1], inside[2]}, {0, 0, 0}, 0.0f, INFINITY, RTCD_NO_VERTEX};
                for (int k = 0; k < 3; ++k) ray.direction[k] = a[k] + f * (b[k] - a[k]) - inside[k];
                for (int trav = 0; trav < 3; ++trav) {
                    rtcd_hit h;
                    int hit = rtcd_mesh_first_hit(m, &ray, (rtcd_traversal)trav, &h);
                    misses += !hit || !h.exits;
                    ++aimed;
                }
            }
        }
    }
    fprintf(stderr, "%s watertight: %ld aimed rays, %ld misses\n", rtcd_mesh_name(m), aimed, misses);
    assert_int_equal(misses, 0);
}

static void test_blob(void** state)
{
    (void)state;
    rtcd_mesh* m = test_make_blob(RTCD_AVALANCHE_BLOB_VERTICES, 1.0f, 1);
    float o[3] = {0, 0, 0};
    check_mesh(m, o, 11);
    check_watertight(m, o);
    rtcd_mesh_release(m);
}

static void test_largest_spawner_mesh(void** state)
{
    (void)state;
    rtcd_mesh* m = test_make_blob(rtcd_spawner_mesh_vertices(3), 1.0f, 4);
    float o[3] = {0, 0, 0};
    check_mesh(m, o, 12);
    check_watertight(m, o);
    rtcd_mesh_release(m);
}

static void test_box(void** state)
{
    (void)state;
    rtcd_mesh* m = test_make_box(1.0f, 0.5f, 2.0f, 4);
    float o[3] = {0.1f, -0.05f, 0.2f};
    check_mesh(m, o, 13);
    check_watertight(m, o);
    rtcd_mesh_release(m);
}

static void test_torus(void** state)
{
    (void)state;
    rtcd_mesh* m = make_torus();
    float o[3] = {1.0f, 0.0f, 0.0f}; /* on the core circle */
    check_mesh(m, o, 14);
    rtcd_mesh_release(m);
}

static void test_sphere(void** state)
{
    (void)state;
    rtcd_mesh* m = test_make_uv_sphere(4, 17, 1.0f);
    float o[3] = {0, 0, 0};
    check_mesh(m, o, 15);
    check_watertight(m, o);
    rtcd_mesh_release(m);
}

/* Leaf-size extremes build valid trees that agree with brute force. */
static void test_leaf_sizes(void** state)
{
    (void)state;
    for (uint32_t leaf = 1; leaf <= 15; leaf += 14) {
        rtcd_generated_mesh g;
        assert_int_equal(rtcd_generate_blob(200, 1.0f, 9, &g), RTCD_OK);
        rtcd_mesh_def def = rtcd_default_mesh_def();
        def.vertices = g.vertices;
        def.vertex_count = g.vertex_count;
        def.indices = g.indices;
        def.triangle_count = g.triangle_count;
        def.bvh_leaf_size = leaf;
        def.name = "leaf";
        rtcd_mesh* m = NULL;
        assert_int_equal(rtcd_mesh_create(&def, &m), RTCD_OK);
        rtcd_generated_free(&g);
        test_rng rng = {leaf};
        long mismatches = 0, hits = 0;
        for (int r = 0; r < 5000; ++r) {
            rtcd_ray ray = {{0, 0, 0}, {0, 0, 0}, 0.0f, INFINITY, RTCD_NO_VERTEX};
            for (int k = 0; k < 3; ++k) ray.origin[k] = (float)test_rng_range(&rng, -2, 2);
            test_rng_unit_vector(&rng, ray.direction);
            compare(m, &ray, &mismatches, &hits);
        }
        assert_int_equal(mismatches, 0);
        rtcd_mesh_release(m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blob),  cmocka_unit_test(test_largest_spawner_mesh), cmocka_unit_test(test_box),
        cmocka_unit_test(test_torus), cmocka_unit_test(test_sphere),                cmocka_unit_test(test_leaf_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
