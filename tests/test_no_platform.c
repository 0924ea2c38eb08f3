/* No OpenCL platform at all (the ICD loader pointed at an empty vendor
 * folder): OpenCL reports RTCD_ERROR_NO_DEVICE; a world that asked for
 * OpenCL uses the CPU reference after a one-line warning, and AUTO takes the
 * CPU reference and says so in one INFO line. */
#include "test_util.h"

#include "cl_backend.h"
#include <rtcd/rtcd_world.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int g_warnings, g_infos;
static char g_last[1024], g_info[1024];
static void on_log(rtcd_log_level level, const char* message, void* user)
{
    (void)user;
    if (level == RTCD_LOG_INFO) {
        g_infos++;
        snprintf(g_info, sizeof g_info, "%s", message);
    }
    if (level != RTCD_LOG_WARNING) return;
    g_warnings++;
    snprintf(g_last, sizeof g_last, "%s", message);
}

static void test_no_platform(void** state)
{
    (void)state;
    rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
    rtcd_opencl* cl = NULL;
    assert_int_equal(rtcd_opencl_create(&def, NULL, &cl), RTCD_ERROR_NO_DEVICE);
    assert_null(cl);
    print_message("rtcd_opencl_create: %s\n", rtcd_last_error_message());
    def.backend = RTCD_BACKEND_OPENCL;
    rtcd_batch* batch = NULL;
    assert_int_equal(rtcd_batch_create(&def, &batch), RTCD_ERROR_NO_DEVICE);
    assert_null(batch);

    /* Asked for OpenCL: a warning, then the CPU reference. */
    rtcd_set_log(on_log, NULL);
    rtcd_world_def wd = rtcd_default_world_def();
    wd.narrowphase.backend = RTCD_BACKEND_OPENCL;
    rtcd_world* w = NULL;
    assert_int_equal(rtcd_world_create(&wd, &w), RTCD_OK);
    print_message("notice: %s\n", g_last);
    assert_int_equal(g_warnings, 1);
    assert_non_null(strstr(g_last, "CPU reference"));
    assert_non_null(strstr(g_last, "RTCD_ERROR_NO_DEVICE"));
    assert_int_equal(rtcd_world_backend(w), RTCD_BACKEND_CPU);
    rtcd_world_release(w);

    /* AUTO: no warning, one INFO line naming the choice. */
    g_warnings = g_infos = 0;
    wd.narrowphase.backend = RTCD_BACKEND_AUTO;
    wd.narrowphase.threads = 2;
    assert_int_equal(rtcd_world_create(&wd, &w), RTCD_OK);
    rtcd_set_log(NULL, NULL);
    print_message("AUTO: %s\n", g_info);
    assert_int_equal(g_warnings, 0);
    assert_int_equal(g_infos, 1);
    assert_non_null(strstr(g_info, "backend cpu, 2 thread(s)"));
    assert_int_equal(rtcd_world_thread_count(w), 2);
    assert_int_equal(rtcd_world_backend(w), RTCD_BACKEND_CPU);
    assert_int_equal(rtcd_world_device_count(w), 0);
    rtcd_mesh* mesh = test_make_blob(RTCD_AVALANCHE_BLOB_VERTICES, 0.5f, 1);
    rtcd_shape* shape = NULL;
    assert_int_equal(rtcd_shape_create(w, mesh, &shape), RTCD_OK);
    rtcd_transform p = rtcd_transform_identity();
    float up[3] = {0, 0, 1};
    assert_int_equal(rtcd_world_add_plane(w, up, 0.0f), RTCD_OK);
    p.translation[2] = 0.6f;
    assert_int_equal(rtcd_world_add_body(w, shape, 1.0f, &p, NULL), RTCD_OK);
    for (int i = 0; i < 30; ++i) assert_int_equal(rtcd_world_step(w), RTCD_OK);
    assert_true(rtcd_world_last_step_stats(w).pairs_owned >= 1); /* rtcd, on the CPU */
    rtcd_shape_release(shape);
    rtcd_mesh_release(mesh);
    rtcd_world_release(w);
}

int main(void)
{
    /* Before any OpenCL call: the loader reads its vendor folder once. */
    char dir[] = "/tmp/rtcd_no_icd_XXXXXX";
    if (!mkdtemp(dir)) return 1;
    setenv("OCL_ICD_VENDORS", dir, 1);
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_no_platform)};
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    rmdir(dir);
    return rc;
}
