/* JVRC 2013 Table 1: re-projection removes the tangential part of the net
 * force; raw rays deviate most, Hermann's weighting sits in between. */
#include "test_util.h"

#include "deviation.h"

static void run_mesh(int which)
{
    const char* name;
    rtcd_mesh* mesh = scene_deviation_mesh(which, &name);
    assert_non_null(mesh);
    scene_deviation_def def = scene_default_deviation_def(); /* the full 400 x 20 */
    scene_deviation_result r;
    assert_int_equal(scene_run_deviation(mesh, &def, &r), RTCD_OK);
    double raw = r.deviation_pct[RTCD_CONTACT_RAY], weighted = r.deviation_pct[RTCD_CONTACT_RAY_WEIGHTED],
           reproj = r.deviation_pct[RTCD_CONTACT_REPROJECTED];
    print_message("%s: %u configurations, raw %.3f %%, weighted %.3f %%, re-projected %.6f %%\n", name,
                  r.configurations, raw, weighted, reproj);
    assert_true(r.configurations >= def.orientations * def.depths * 9 / 10); /* nearly all touch */
    assert_true(reproj < 0.01);
    assert_true(raw > weighted);
    assert_true(weighted > reproj);
    rtcd_mesh_release(mesh);
}

static void test_sphere(void** state) { (void)state; run_mesh(0); }
static void test_avalanche_blob(void** state) { (void)state; run_mesh(1); }
static void test_largest_spawner_mesh(void** state) { (void)state; run_mesh(2); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sphere),
        cmocka_unit_test(test_avalanche_blob),
        cmocka_unit_test(test_largest_spawner_mesh),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
