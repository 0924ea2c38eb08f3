/* Several OpenCL devices (ctest runs this with POCL_DEVICES="pthread pthread"):
 * the same results as one device, and no pair changes device while it
 * persists over a 300-step avalanche. Also the world's fallbacks. */
#include "test_util.h"

#include <rtcd/rtcd_opencl.h>
#include <rtcd/rtcd_world.h>

#include "scene_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rtcd_opencl* open_n(uint32_t n)
{
    rtcd_opencl_def def = rtcd_default_opencl_def();
    def.devices = "all";
    def.max_devices = n;
    rtcd_opencl* cl = NULL;
    rtcd_error err = rtcd_opencl_create(&def, &cl);
    if (err != RTCD_OK) fprintf(stderr, "%s: %s\n", rtcd_error_name(err), rtcd_last_error_message());
    assert_int_equal(err, RTCD_OK);
    return cl;
}

static void test_two_devices_match_one_and_keep_pairs(void** state)
{
    (void)state;
    rtcd_opencl* one = open_n(1);
    rtcd_opencl* two = open_n(2);
    if (rtcd_opencl_device_count(two) < 2) {
        print_message("only %u OpenCL device: run with POCL_DEVICES=\"pthread pthread\"\n", rtcd_opencl_device_count(two));
        fail();
    }
    /* A 64-body avalanche on the CPU reference supplies 300 steps of real poses. */
    rtcd_world_def wd = rtcd_default_world_def();
    wd.backend = RTCD_BACKEND_CPU;
    rtcd_world* world = NULL;
    assert_int_equal(rtcd_world_create(&wd, &world), RTCD_OK);
    rtcd_mesh* mesh = test_make_blob(RTCD_AVALANCHE_BLOB_VERTICES, 0.5f, 1);
    rtcd_shape* shape = NULL;
    assert_int_equal(rtcd_shape_create(world, mesh, &shape), RTCD_OK);
    const rtcd_mesh* body_mesh = rtcd_shape_body_mesh(shape);
    float up[3] = {0, 0, 1};
    assert_int_equal(rtcd_world_add_plane(world, up, 0.0f), RTCD_OK);
    test_rng rng = {5};
    enum { N = 64 };
    for (uint32_t b = 0; b < N; ++b) {
        rtcd_transform p = test_random_pose(&rng, 0.0f);
        p.translation[0] = (float)(b % 4) * 1.2f, p.translation[1] = (float)(b / 4 % 4) * 1.2f;
        p.translation[2] = 1.0f + (float)(b / 16) * 1.2f;
        assert_int_equal(rtcd_world_add_body(world, shape, 1.0f, &p, NULL), RTCD_OK);
    }
    rtcd_transform poses[N];
    rtcd_pair_desc* pairs = calloc(N * N / 2, sizeof *pairs);
    rtcd_pair_result* r1 = calloc(N * N / 2, sizeof *r1);
    rtcd_pair_result* r2 = calloc(N * N / 2, sizeof *r2);
    /* key -> device last step, for keys present then (0xff: absent) */
    uint8_t last_device[N][N];
    memset(last_device, 0xff, sizeof last_device);
    uint32_t changes = 0, persisted = 0, used[2] = {0, 0}, total_contacts = 0;
    for (int step = 0; step < 300; ++step) {
        assert_int_equal(rtcd_world_step(world), RTCD_OK);
        for (uint32_t b = 0; b < N; ++b) assert_int_equal(rtcd_world_get_pose(world, b, &poses[b]), RTCD_OK);
        uint32_t n = scene_overlapping_pairs(body_mesh, poses, N, pairs);
        assert_int_equal(rtcd_opencl_collide(two, pairs, n, r2, NULL), RTCD_OK);
        uint8_t now[N][N];
        memset(now, 0xff, sizeof now);
        for (uint32_t i = 0; i < n; ++i) {
            uint32_t a = (uint32_t)(pairs[i].key >> 32), b = (uint32_t)pairs[i].key;
            if (last_device[a][b] != 0xff) {
                persisted++;
                changes += last_device[a][b] != r2[i].device;
            }
            now[a][b] = (uint8_t)r2[i].device;
            used[r2[i].device & 1]++;
        }
        memcpy(last_device, now, sizeof now);
        if (step % 30 != 29) continue;
        /* Every 30 steps: the same contacts as one device. */
        assert_int_equal(rtcd_opencl_collide(one, pairs, n, r1, NULL), RTCD_OK);
        for (uint32_t i = 0; i < n; ++i) {
            assert_int_equal(r1[i].contact_count, r2[i].contact_count);
            assert_int_equal(r1[i].colliding_rays, r2[i].colliding_rays);
            total_contacts += r1[i].contact_count;
            for (uint32_t c = 0; c < r1[i].contact_count; ++c) {
                assert_int_equal(r1[i].contacts[c].feature, r2[i].contacts[c].feature);
                assert_float_near(r1[i].contacts[c].depth, r2[i].contacts[c].depth, 1e-6);
            }
        }
    }
    print_message("2 devices: %u pair-steps persisted, %u device changes, work split %u/%u, %u contacts compared\n",
                  persisted, changes, used[0], used[1], total_contacts);
    assert_int_equal(changes, 0);
    assert_true(persisted > 1000);
    assert_true(used[0] > 0 && used[1] > 0); /* both devices worked */
    assert_true(total_contacts > 0);
    free(pairs);
    free(r1);
    free(r2);
    rtcd_shape_release(shape);
    rtcd_mesh_release(mesh);
    rtcd_world_destroy(world);
    rtcd_opencl_destroy(one);
    rtcd_opencl_destroy(two);
}

static int g_warnings;
static char g_last_warning[512];
static void count_warnings(rtcd_log_level level, const char* message, void* user)
{
    (void)user;
    if (level != RTCD_LOG_WARNING) return;
    g_warnings++;
    snprintf(g_last_warning, sizeof g_last_warning, "%s", message);
}

/* A kernel that does not build: the world says so in one line and runs on the CPU. */
static void test_world_falls_back_on_broken_kernel(void** state)
{
    (void)state;
    rtcd_set_log(count_warnings, NULL);
    g_warnings = 0;
    rtcd_world_def def = rtcd_default_world_def();
    def.backend = RTCD_BACKEND_OPENCL;
    def.opencl.kernel_source_suffix = "this does not compile";
    rtcd_world* w = NULL;
    assert_int_equal(rtcd_world_create(&def, &w), RTCD_OK);
    rtcd_set_log(NULL, NULL);
    print_message("notice: %s\n", g_last_warning);
    assert_int_equal(g_warnings, 1);
    assert_non_null(strstr(g_last_warning, "CPU reference"));
    assert_non_null(strstr(g_last_warning, "RTCD_ERROR_KERNEL_BUILD"));
    assert_null(strchr(g_last_warning, '\n')); /* one line */
    assert_int_equal(rtcd_world_backend(w), RTCD_BACKEND_CPU);
    assert_int_equal(rtcd_world_step(w), RTCD_OK);
    rtcd_world_destroy(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_devices_match_one_and_keep_pairs),
        cmocka_unit_test(test_world_falls_back_on_broken_kernel),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
