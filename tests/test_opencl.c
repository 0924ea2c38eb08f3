/* The OpenCL backend against the CPU reference, on whatever OpenCL devices
 * are present (PoCL in CI): same colliding rays, same reduced contacts. */
#include "test_util.h"

#include <rtcd/rtcd_opencl.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rtcd_opencl* open_backend(rtcd_traversal traversal, uint32_t max_devices)
{
    rtcd_opencl_def def = rtcd_default_opencl_def();
    def.traversal = traversal;
    def.max_devices = max_devices;
    rtcd_opencl* cl = NULL;
    rtcd_error err = rtcd_opencl_create(&def, &cl);
    if (err != RTCD_OK) fprintf(stderr, "%s: %s\n", rtcd_error_name(err), rtcd_last_error_message());
    assert_int_equal(err, RTCD_OK); /* CI installs PoCL: a missing device is a failure here */
    return cl;
}

static int by_ray(const void* a, const void* b)
{
    const rtcd_ray_hit* x = a;
    const rtcd_ray_hit* y = b;
    if (x->direction != y->direction) return (int)x->direction - (int)y->direction;
    return x->vertex < y->vertex ? -1 : (x->vertex > y->vertex);
}

static void compare_batch(rtcd_traversal traversal, uint32_t max_devices)
{
    rtcd_mesh* meshes[3] = {test_make_blob(RTCD_AVALANCHE_BLOB_VERTICES, 1.0f, 1),
                            test_make_blob(rtcd_spawner_mesh_vertices(1), 1.0f, 2),
                            test_make_blob(rtcd_spawner_mesh_vertices(3), 1.0f, 3)};
    enum { PAIRS = 120 };
    rtcd_pair_desc pairs[PAIRS];
    test_rng rng = {42};
    size_t total = 0;
    for (int i = 0; i < PAIRS; ++i) {
        pairs[i].a = meshes[test_rng_next(&rng) % 3];
        pairs[i].b = meshes[test_rng_next(&rng) % 3];
        pairs[i].pose_a = test_random_pose(&rng, 1.3f);
        pairs[i].pose_b = test_random_pose(&rng, 1.3f);
        pairs[i].key = (uint64_t)i;
        total += rtcd_mesh_vertex_count(pairs[i].a) + rtcd_mesh_vertex_count(pairs[i].b);
    }
    rtcd_opencl* cl = open_backend(traversal, max_devices);
    rtcd_pair_result* res = calloc(PAIRS, sizeof *res);
    rtcd_ray_hit* rays = calloc(total, sizeof *rays);
    assert_int_equal(rtcd_opencl_collide(cl, pairs, PAIRS, res, rays), RTCD_OK);
    /* Every pair really ran on the device (none past the on-chip ray store). */
    assert_int_equal(rtcd_opencl_last_stats(cl).cpu_fallback_pairs, 0);
    rtcd_narrowphase_def nd = rtcd_default_narrowphase_def();
    nd.traversal = traversal;
    size_t offset = 0;
    uint32_t colliding = 0, touching = 0;
    for (int i = 0; i < PAIRS; ++i) {
        uint32_t cap = rtcd_mesh_vertex_count(pairs[i].a) + rtcd_mesh_vertex_count(pairs[i].b), n = 0;
        rtcd_ray_hit* ref = calloc(cap, sizeof *ref);
        rtcd_contact* contacts = calloc(cap, sizeof *contacts);
        assert_int_equal(rtcd_collide_standard(&nd, pairs[i].a, &pairs[i].pose_a, pairs[i].b, &pairs[i].pose_b, ref,
                                               cap, &n, NULL),
                         RTCD_OK);
        /* The same colliding rays (the device writes them in any order). */
        assert_int_equal(res[i].colliding_rays, n);
        rtcd_ray_hit* got = rays + offset;
        qsort(got, n, sizeof *got, by_ray);
        for (uint32_t r = 0; r < n; ++r) {
            assert_int_equal(got[r].direction, ref[r].direction);
            assert_int_equal(got[r].vertex, ref[r].vertex);
            assert_int_equal(got[r].triangle, ref[r].triangle);
            assert_float_near(got[r].length, ref[r].length, 1e-4);
            for (int k = 0; k < 3; ++k) assert_float_near(got[r].normal[k], ref[r].normal[k], 1e-4);
        }
        /* The same reduced contacts. */
        for (uint32_t r = 0; r < n; ++r) contacts[r] = rtcd_contact_from_ray(&ref[r], nd.contact_normal);
        rtcd_contact reduced[4];
        uint32_t m = rtcd_reduce_contacts(contacts, n, reduced);
        assert_int_equal(res[i].contact_count, m);
        for (uint32_t c = 0; c < m; ++c) {
            assert_int_equal(res[i].contacts[c].feature, reduced[c].feature);
            assert_float_near(res[i].contacts[c].depth, reduced[c].depth, 1e-4);
            for (int k = 0; k < 3; ++k) {
                assert_float_near(res[i].contacts[c].normal_on_b[k], reduced[c].normal_on_b[k], 1e-4);
                assert_float_near(res[i].contacts[c].point_on_b[k], reduced[c].point_on_b[k], 1e-4);
            }
        }
        colliding += n;
        touching += n > 0;
        offset += cap;
        free(ref);
        free(contacts);
    }
    print_message("%s, %u device(s) [%s]: %u pairs touching, %u colliding rays, all equal to the CPU reference\n",
                  traversal == RTCD_TRAVERSAL_BVH ? "stackless BVH" : "brute force", rtcd_opencl_device_count(cl),
                  rtcd_opencl_device_name(cl, 0), touching, colliding);
    assert_true(touching > 20 && touching < PAIRS && colliding > 1000); /* not vacuous */
    free(res);
    free(rays);
    rtcd_opencl_destroy(cl);
    for (int k = 0; k < 3; ++k) rtcd_mesh_release(meshes[k]);
}

static void test_bvh_matches_cpu(void** state)
{
    (void)state;
    compare_batch(RTCD_TRAVERSAL_BVH, 0);
}

static void test_brute_force_matches_cpu(void** state)
{
    (void)state;
    compare_batch(RTCD_TRAVERSAL_BRUTE_FORCE, 1);
}

/* A kernel source broken on purpose: the error carries the build log. */
static void test_broken_kernel_reports_build_log(void** state)
{
    (void)state;
    rtcd_opencl_def def = rtcd_default_opencl_def();
    def.kernel_source_suffix = "__kernel void broken(void) { this is not OpenCL; }";
    rtcd_opencl* cl = (rtcd_opencl*)0x1;
    assert_int_equal(rtcd_opencl_create(&def, &cl), RTCD_ERROR_KERNEL_BUILD);
    assert_null(cl);
    const char* msg = rtcd_last_error_message();
    print_message("build failure reported as: %.160s...\n", msg);
    assert_non_null(strstr(msg, "build log"));
    assert_non_null(strstr(msg, "error")); /* the compiler's own words */
}

static void test_selection(void** state)
{
    (void)state;
    rtcd_opencl_def def = rtcd_default_opencl_def();
    rtcd_opencl* cl = NULL;
    def.devices = "cpu";
    assert_int_equal(rtcd_opencl_create(&def, &cl), RTCD_ERROR_UNSUPPORTED);
    def.devices = "9:9";
    assert_int_equal(rtcd_opencl_create(&def, &cl), RTCD_ERROR_NO_DEVICE);
    assert_non_null(strstr(rtcd_last_error_message(), "9:9"));
    def.devices = "0:0";
    assert_int_equal(rtcd_opencl_create(&def, &cl), RTCD_OK);
    assert_int_equal(rtcd_opencl_device_count(cl), 1);
    rtcd_opencl_destroy(cl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bvh_matches_cpu),
        cmocka_unit_test(test_brute_force_matches_cpu),
        cmocka_unit_test(test_broken_kernel_reports_build_log),
        cmocka_unit_test(test_selection),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
