/* Several OpenCL devices (ctest runs this with POCL_DEVICES="pthread pthread"):
 * the same results as one device, and no iterative pass leaves the device
 * that holds its pair's kept rays over a 300-step avalanche. Also the
 * world's fallbacks, and sub-devices ("0:0/2": device 0:0 split into two
 * equal sub-devices), which run in a child process whose PoCL devices have
 * two compute units each. */
#define _GNU_SOURCE /* sched_getaffinity */
#include "test_util.h"

#include "cl_backend.h"
#include <rtcd/rtcd_world.h>

#include "scene_util.h"

#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* A pile of n avalanche blobs 1.2 m apart over a plane, on the CPU
 * reference: its steps supply real poses. */
static rtcd_world* pile_world(uint32_t n, uint64_t seed, rtcd_mesh** mesh, rtcd_shape** shape)
{
    rtcd_world_def wd = rtcd_default_world_def();
    wd.narrowphase.backend = RTCD_BACKEND_CPU;
    rtcd_world* world = NULL;
    assert_int_equal(rtcd_world_create(&wd, &world), RTCD_OK);
    *mesh = test_make_blob(RTCD_AVALANCHE_BLOB_VERTICES, 0.5f, 1);
    assert_int_equal(rtcd_shape_create(world, *mesh, shape), RTCD_OK);
    float up[3] = {0, 0, 1};
    assert_int_equal(rtcd_world_add_plane(world, up, 0.0f), RTCD_OK);
    test_rng rng = {seed};
    for (uint32_t b = 0; b < n; ++b) {
        rtcd_transform p = test_random_pose(&rng, 0.0f);
        p.translation[0] = (float)(b % 4) * 1.2f, p.translation[1] = (float)(b / 4 % 4) * 1.2f;
        p.translation[2] = 1.0f + (float)(b / 16) * 1.2f;
        assert_int_equal(rtcd_world_add_body(world, *shape, 1.0f, &p, NULL), RTCD_OK);
    }
    return world;
}

static rtcd_opencl* open_n(uint32_t n)
{
    rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
    def.devices = "all";
    def.max_devices = n;
    /* The one-device batch runs every 30th step only: speculative contacts
     * (the pair's motion since its last call) and the standard pass that
     * follows crossing contacts depend on the pair's history, so they would
     * differ; the batch tests compare them between backends call by call. */
    def.speculative = def.edge_crossings = def.deep_contacts = 0;
    rtcd_opencl* cl = NULL;
    rtcd_error err = rtcd_opencl_create(&def, NULL, &cl);
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
        /* PoCL gets two devices from the test's environment (POCL_DEVICES):
         * one is a broken setup. A machine with one GPU has nothing to split. */
        int pocl = strstr(rtcd_opencl_device_name(one, 0), "Portable Computing Language") != NULL;
        print_message("only %u OpenCL device (%s)%s\n", rtcd_opencl_device_count(two), rtcd_opencl_device_name(one, 0),
                      pocl ? ": PoCL needs POCL_DEVICES=\"pthread pthread\"" : ": skipped");
        if (pocl) fail();
        rtcd_opencl_destroy(one);
        rtcd_opencl_destroy(two);
        skip();
    }
    /* A 64-body avalanche on the CPU reference supplies 300 steps of real poses. */
    enum { N = 64 };
    rtcd_mesh* mesh = NULL;
    rtcd_shape* shape = NULL;
    rtcd_world* world = pile_world(N, 5, &mesh, &shape);
    const rtcd_mesh* body_mesh = rtcd_shape_body_mesh(shape);
    rtcd_transform poses[N];
    rtcd_pair_desc* pairs = calloc(N * N / 2, sizeof *pairs);
    rtcd_pair_result* r1 = calloc(N * N / 2, sizeof *r1);
    rtcd_pair_result* r2 = calloc(N * N / 2, sizeof *r2);
    /* key -> device last step, for keys present then (0xff: absent) */
    uint8_t last_device[N][N];
    memset(last_device, 0xff, sizeof last_device);
    /* changes: an iterative pass on another device than the pair's last
     * (its kept rays are on that one: never); moves: a standard pass (it
     * reads no kept rays) placed elsewhere to balance the devices. */
    uint32_t changes = 0, moves = 0, persisted = 0, used[2] = {0, 0}, total_contacts = 0;
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
                if (last_device[a][b] != r2[i].device) {
                    if (r2[i].standard_pass)
                        moves++;
                    else
                        changes++;
                }
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
    print_message("2 devices: %u pair-steps persisted, %u iterative passes on another device, %u standard passes moved, "
                  "work split %u/%u, %u contacts compared\n",
                  persisted, changes, moves, used[0], used[1], total_contacts);
    assert_int_equal(changes, 0);
    assert_true(persisted > 1000);
    assert_true(used[0] > 0 && used[1] > 0); /* both devices worked */
    assert_true(total_contacts > 0);
    free(pairs);
    free(r1);
    free(r2);
    rtcd_shape_release(shape);
    rtcd_mesh_release(mesh);
    rtcd_world_release(world);
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
    def.narrowphase.backend = RTCD_BACKEND_OPENCL;
    setenv("RTCD_CL_KERNEL_SUFFIX", "this does not compile", 1); /* the backend's test hook */
    rtcd_world* w = NULL;
    assert_int_equal(rtcd_world_create(&def, &w), RTCD_OK);
    unsetenv("RTCD_CL_KERNEL_SUFFIX");
    rtcd_set_log(NULL, NULL);
    print_message("notice: %s\n", g_last_warning);
    assert_int_equal(g_warnings, 1);
    assert_non_null(strstr(g_last_warning, "CPU reference"));
    assert_non_null(strstr(g_last_warning, "RTCD_ERROR_KERNEL_BUILD"));
    assert_null(strchr(g_last_warning, '\n')); /* one line */
    assert_int_equal(rtcd_world_backend(w), RTCD_BACKEND_CPU);
    assert_int_equal(rtcd_world_step(w), RTCD_OK);
    rtcd_world_release(w);
}

/* ---- sub-devices ---- */

static rtcd_error open_spec(const char* spec, uint32_t max_devices, rtcd_opencl** cl)
{
    rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
    def.devices = spec;
    def.max_devices = max_devices;
    *cl = (rtcd_opencl*)0x1; /* must come back NULL on failure */
    return rtcd_opencl_create(&def, NULL, cl);
}

/* Opens `spec` or skips the test when this machine cannot (no platform, or
 * device 0:0 cannot be split in two: a GPU, or a one-unit CPU device). */
static rtcd_opencl* open_or_skip(const char* spec, uint32_t max_devices)
{
    rtcd_opencl* cl = NULL;
    rtcd_error err = open_spec(spec, max_devices, &cl);
    if (err == RTCD_ERROR_NO_DEVICE) {
        print_message("skipped: '%s': %s\n", spec, rtcd_last_error_message());
        skip();
    }
    if (err != RTCD_OK) fprintf(stderr, "%s: %s\n", rtcd_error_name(err), rtcd_last_error_message());
    assert_int_equal(err, RTCD_OK);
    return cl;
}

static void assert_sub_name(const rtcd_opencl* cl, uint32_t device, const char* tag)
{
    const char* name = rtcd_opencl_device_name(cl, device);
    print_message("device %u: %s\n", device, name);
    assert_non_null(strstr(name, tag));
    assert_non_null(strstr(name, " CU]"));
}

/* A split asks PoCL to pin its workers (one core each: sub-device k runs on
 * worker k only), before the process's first OpenCL call, where PoCL can:
 * it pins worker k to CPU k and aborts the process when a CPU is not ours,
 * so only when CPUs 0 .. workers - 1 all are (this child runs two workers,
 * POCL_MAX_PTHREAD_COUNT=2). A user's own POCL_AFFINITY is never
 * overwritten, and a whole device sets nothing (the parent checks that). */
static void test_split_pins_pocl_workers(void** state)
{
    (void)state;
    if (getenv("POCL_AFFINITY")) {
        print_message("POCL_AFFINITY is set outside the test: not run\n");
        skip();
    }
    cpu_set_t mask;
    CPU_ZERO(&mask);
    assert_int_equal(sched_getaffinity(0, sizeof mask, &mask), 0);
    int pinnable = CPU_ISSET(0, &mask) && CPU_ISSET(1, &mask);
    rtcd_opencl* sub = open_or_skip("0:0/2", 0);
    if (pinnable)
        assert_string_equal(getenv("POCL_AFFINITY"), "1");
    else
        assert_null(getenv("POCL_AFFINITY"));
    print_message("CPUs 0 and 1 %s this process's: POCL_AFFINITY %s\n", pinnable ? "are" : "are not all",
                  pinnable ? "set" : "left unset");
    rtcd_opencl_destroy(sub);
    /* More workers than CPUs of ours (PoCL read its count at the first
     * call: this only changes what the check sees): never pinned. */
    unsetenv("POCL_AFFINITY");
    char more[16];
    snprintf(more, sizeof more, "%d", CPU_COUNT(&mask) + 1);
    setenv("POCL_MAX_PTHREAD_COUNT", more, 1);
    sub = open_or_skip("0:0/2", 0);
    assert_null(getenv("POCL_AFFINITY"));
    rtcd_opencl_destroy(sub);
    setenv("POCL_MAX_PTHREAD_COUNT", "2", 1);
    /* The user's own value stays. */
    setenv("POCL_AFFINITY", "0", 1);
    sub = open_or_skip("0:0/2", 0);
    assert_string_equal(getenv("POCL_AFFINITY"), "0");
    rtcd_opencl_destroy(sub);
    unsetenv("POCL_AFFINITY");
}

/* "0:0/2" opens two sub-devices, each with its own context and queue, and
 * over an avalanche gives bit for bit what the whole device 0:0 gives, as
 * does the mixed list "0:0/2,0:1" when there is a device 0:1. */
static void test_subdevices_match_one_device(void** state)
{
    (void)state;
    rtcd_opencl* sub = open_or_skip("0:0/2", 0);
    rtcd_opencl* whole = open_or_skip("0:0", 1);
    assert_int_equal(rtcd_opencl_device_count(sub), 2);
    assert_sub_name(sub, 0, " [sub 1/2, ");
    assert_sub_name(sub, 1, " [sub 2/2, ");
    assert_null(strstr(rtcd_opencl_device_name(whole, 0), "[sub"));
    rtcd_opencl* mixed = NULL;
    rtcd_opencl* probe = NULL;
    if (open_spec("0:1", 1, &probe) == RTCD_OK) {
        rtcd_opencl_destroy(probe);
        mixed = open_or_skip("0:0/2,0:1", 0);
        assert_int_equal(rtcd_opencl_device_count(mixed), 3);
        assert_sub_name(mixed, 0, " [sub 1/2, ");
        assert_sub_name(mixed, 1, " [sub 2/2, ");
        assert_null(strstr(rtcd_opencl_device_name(mixed, 2), "[sub"));
    }
    else {
        assert_null(probe);
        print_message("no device 0:1: the mixed list is not run\n");
    }

    enum { N = 32 };
    rtcd_mesh* mesh = NULL;
    rtcd_shape* shape = NULL;
    rtcd_world* world = pile_world(N, 11, &mesh, &shape);
    const rtcd_mesh* body_mesh = rtcd_shape_body_mesh(shape);
    rtcd_transform poses[N];
    rtcd_pair_desc* pairs = calloc(N * N / 2, sizeof *pairs);
    rtcd_pair_result* r_whole = calloc(N * N / 2, sizeof *r_whole);
    rtcd_pair_result* r_sub = calloc(N * N / 2, sizeof *r_sub);
    uint32_t pair_steps = 0, contacts = 0, used[3] = {0, 0, 0};
    for (int step = 0; step < 150; ++step) {
        assert_int_equal(rtcd_world_step(world), RTCD_OK);
        if (step < 40) continue; /* still falling: few pairs */
        for (uint32_t b = 0; b < N; ++b) assert_int_equal(rtcd_world_get_pose(world, b, &poses[b]), RTCD_OK);
        uint32_t n = scene_overlapping_pairs(body_mesh, poses, N, pairs);
        assert_int_equal(rtcd_opencl_collide(whole, pairs, n, r_whole, NULL), RTCD_OK);
        for (int m = 0; m < 2; ++m) {
            rtcd_opencl* cl = m ? mixed : sub;
            if (!cl) continue;
            assert_int_equal(rtcd_opencl_collide(cl, pairs, n, r_sub, NULL), RTCD_OK);
            for (uint32_t i = 0; i < n; ++i) {
                assert_int_equal(r_whole[i].contact_count, r_sub[i].contact_count);
                assert_int_equal(r_whole[i].colliding_rays, r_sub[i].colliding_rays);
                assert_int_equal(memcmp(r_whole[i].contacts, r_sub[i].contacts,
                                        r_whole[i].contact_count * sizeof r_whole[i].contacts[0]),
                                 0);
                assert_true(r_sub[i].device < rtcd_opencl_device_count(cl));
                if (!m) used[r_sub[i].device]++;
                if (m) used[2] += r_sub[i].device == 2;
            }
        }
        pair_steps += n;
        for (uint32_t i = 0; i < n; ++i) contacts += r_whole[i].contact_count;
    }
    print_message("sub-devices: %u pair-steps, %u contacts, split %u/%u (mixed list: %u on 0:1)\n", pair_steps,
                  contacts, used[0], used[1], used[2]);
    assert_true(pair_steps > 100 && contacts > 0);
    assert_true(used[0] > 0 && used[1] > 0); /* both sub-devices worked */
    if (mixed) assert_true(used[2] > 0);
    free(pairs);
    free(r_whole);
    free(r_sub);
    rtcd_shape_release(shape);
    rtcd_mesh_release(mesh);
    rtcd_world_release(world);
    rtcd_opencl_destroy(mixed);
    rtcd_opencl_destroy(sub);
    rtcd_opencl_destroy(whole);
}

/* max_devices takes the first sub-devices. */
static void test_subdevices_max_devices(void** state)
{
    (void)state;
    rtcd_opencl* cl = open_or_skip("0:0/2", 1);
    assert_int_equal(rtcd_opencl_device_count(cl), 1);
    assert_sub_name(cl, 0, " [sub 1/2, ");
    rtcd_opencl_destroy(cl);
    cl = open_or_skip("0:0/2,0:1", 2);
    assert_int_equal(rtcd_opencl_device_count(cl), 2);
    assert_sub_name(cl, 1, " [sub 2/2, ");
    rtcd_opencl_destroy(cl);
}

static void expect_failure(const char* spec, rtcd_error code)
{
    rtcd_opencl* cl = NULL;
    rtcd_error err = open_spec(spec, 0, &cl);
    const char* message = rtcd_last_error_message();
    print_message("'%s': %s: %s\n", spec, rtcd_error_name(err), message);
    assert_null(cl);
    if (err == RTCD_ERROR_NO_DEVICE && code == RTCD_ERROR_NO_DEVICE && strstr(message, "no platform")) return;
    assert_int_equal(err, code);
    char quoted[64];
    snprintf(quoted, sizeof quoted, "'%s'", spec);
    assert_non_null(strstr(message, quoted));
}

/* Bad specs fail with a message naming them, *out NULL, nothing leaked. */
static void test_subdevice_bad_specs(void** state)
{
    (void)state;
    expect_failure("0:0/0", RTCD_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(rtcd_last_error_message(), "at least 1"));
    expect_failure("0:0/x", RTCD_ERROR_INVALID_ARGUMENT);
    expect_failure("0:0/", RTCD_ERROR_INVALID_ARGUMENT);
    expect_failure("0:0//2", RTCD_ERROR_INVALID_ARGUMENT);
    expect_failure("0:0/-1", RTCD_ERROR_INVALID_ARGUMENT);
    expect_failure("0:0/2,", RTCD_ERROR_INVALID_ARGUMENT);
    expect_failure("0:0/2x", RTCD_ERROR_INVALID_ARGUMENT);
    expect_failure("0:/2", RTCD_ERROR_INVALID_ARGUMENT);
    expect_failure("0:0/2,0:0", RTCD_ERROR_INVALID_ARGUMENT);
    expect_failure("0:0/99999999999", RTCD_ERROR_INVALID_ARGUMENT);
    /* Issue 12: the values once taken as 0:0. (An empty value is the default
     * selection, as an unset variable.) */
    expect_failure("0:", RTCD_ERROR_INVALID_ARGUMENT);
    expect_failure(" 0:0", RTCD_ERROR_INVALID_ARGUMENT);
    expect_failure("0:0,", RTCD_ERROR_INVALID_ARGUMENT);
    expect_failure("0:0 ", RTCD_ERROR_INVALID_ARGUMENT);
    expect_failure("0:0/999", RTCD_ERROR_NO_DEVICE);
    expect_failure("9:9/2", RTCD_ERROR_NO_DEVICE);
    /* A kernel that does not build on the first sub-device: both are released (LeakSanitizer). */
    rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
    def.devices = "0:0/2";
    rtcd_opencl* cl = (rtcd_opencl*)0x1;
    rtcd_error err = rtcd_opencl_create(&def, "this does not compile", &cl);
    assert_null(cl);
    assert_true(err == RTCD_ERROR_KERNEL_BUILD || err == RTCD_ERROR_NO_DEVICE);
    if (err == RTCD_ERROR_KERNEL_BUILD) assert_non_null(strstr(rtcd_last_error_message(), "[sub 1/2, "));
}

int main(void)
{
    /* Sub-devices need a device with two compute units; ctest gives this
     * process one-thread PoCL devices (POCL_MAX_PTHREAD_COUNT=1), read once
     * per process at the first OpenCL call. So a child, forked before any
     * OpenCL call, runs the sub-device tests with two threads per device. */
    int user_pinned = getenv("POCL_AFFINITY") != NULL;
    fflush(NULL);
    pid_t child = fork();
    if (child == 0) {
        setenv("POCL_MAX_PTHREAD_COUNT", "2", 1);
        const struct CMUnitTest sub_tests[] = {
            cmocka_unit_test(test_split_pins_pocl_workers), /* first: before any OpenCL call */
            cmocka_unit_test(test_subdevices_match_one_device),
            cmocka_unit_test(test_subdevices_max_devices),
            cmocka_unit_test(test_subdevice_bad_specs),
        };
        exit(cmocka_run_group_tests_name("subdevices", sub_tests, NULL, NULL));
    }
    int child_failed = 1;
    if (child > 0) {
        int status = 0;
        if (waitpid(child, &status, 0) == child && WIFEXITED(status)) child_failed = WEXITSTATUS(status);
    }
    else {
        perror("fork");
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_devices_match_one_and_keep_pairs),
        cmocka_unit_test(test_world_falls_back_on_broken_kernel),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    /* No split in this process: PoCL's workers were left as the user set them. */
    int pinned = !user_pinned && getenv("POCL_AFFINITY") != NULL;
    if (pinned) fprintf(stderr, "POCL_AFFINITY was set without a split device\n");
    return failed || child_failed || pinned;
}
