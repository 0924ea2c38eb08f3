/* The iterative algorithms on the avalanche scene (the demos' own scene code),
 * each run checked step by step against the standard algorithm on the same
 * poses (rtcd_world_def.check): prediction against plain iteration, and
 * re-projection against raw ray contacts. */
#include "test_util.h"

#include <rtcd/rtcd_world.h>

#include "scenes/demo_common.h"

#include <stdio.h>
#include <string.h>

/* The demos' default avalanche (a smaller pile spends most of its steps
 * falling, with few pairs at rest for the iterative passes). */
#define AVALANCHE_OBJECTS 512u
#define AVALANCHE_STEPS 600u

typedef struct run_totals {
    uint64_t checked, incorrect;
    double ray_length;      /* the standard algorithm's colliding rays, summed over the run */
    uint64_t standard_pairs, iterative_pairs;
} run_totals;

static run_totals run(rtcd_algorithm algorithm, rtcd_contact_normal normal)
{
    demo_options o;
    demo_default_options(DEMO_AVALANCHE, &o);
    o.objects = AVALANCHE_OBJECTS;
    o.steps = AVALANCHE_STEPS;
    o.backend = RTCD_BACKEND_CPU;
    o.algorithm = algorithm;
    o.contact_normal = normal;
    o.check = 1;
    o.quiet = 1;
    o.penetration_every = 0;
    demo_scene scene;
    assert_int_equal(demo_scene_create(&o, &scene), RTCD_OK);
    run_totals t;
    memset(&t, 0, sizeof t);
    for (uint32_t step = 0; step < o.steps; ++step) {
        assert_int_equal(demo_scene_update(&scene, step), RTCD_OK);
        assert_int_equal(rtcd_world_step(scene.world), RTCD_OK);
        rtcd_step_stats st = rtcd_world_last_step_stats(scene.world);
        t.checked += st.check_rays;
        t.incorrect += st.check_incorrect;
        t.ray_length += st.check_ray_length;
        t.standard_pairs += st.standard_pairs;
        t.iterative_pairs += st.iterative_pairs;
    }
    demo_scene_destroy(&scene);
    return t;
}

static double pct(uint64_t part, uint64_t whole) { return whole ? 100.0 * (double)part / (double)whole : 0.0; }

static void test_avalanche_prediction_and_reprojection(void** state)
{
    (void)state;
    run_totals iterative = run(RTCD_ALGORITHM_ITERATIVE, RTCD_CONTACT_REPROJECTED);
    run_totals predictive = run(RTCD_ALGORITHM_PREDICTIVE, RTCD_CONTACT_REPROJECTED);
    run_totals raw = run(RTCD_ALGORITHM_PREDICTIVE, RTCD_CONTACT_RAY);
    double inc_it = pct(iterative.incorrect, iterative.checked), inc_pr = pct(predictive.incorrect, predictive.checked);
    printf("avalanche %u blobs, %u steps, CPU reference, checked against the standard algorithm every step:\n",
           AVALANCHE_OBJECTS, AVALANCHE_STEPS);
    printf("  iterative:  incorrect rays %.4f %% of %llu, cumulative ray length %.2f m, pair-steps %llu standard / "
           "%llu iterative\n",
           inc_it, (unsigned long long)iterative.checked, iterative.ray_length,
           (unsigned long long)iterative.standard_pairs, (unsigned long long)iterative.iterative_pairs);
    printf("  predictive: incorrect rays %.4f %% of %llu, cumulative ray length %.2f m, pair-steps %llu standard / "
           "%llu iterative\n",
           inc_pr, (unsigned long long)predictive.checked, predictive.ray_length,
           (unsigned long long)predictive.standard_pairs, (unsigned long long)predictive.iterative_pairs);
    double cut_incorrect = inc_it > 0.0 ? 100.0 * (1.0 - inc_pr / inc_it) : 0.0;
    double cut_length = 100.0 * (1.0 - predictive.ray_length / iterative.ray_length);
    printf("  prediction cuts incorrect rays by %.1f %% and cumulative ray length by %.1f %%\n", cut_incorrect,
           cut_length);
    printf("  re-projection (predictive): cumulative ray length %.2f m raw rays, %.2f m re-projected: %+.1f %%\n",
           raw.ray_length, predictive.ray_length, 100.0 * (predictive.ray_length / raw.ray_length - 1.0));
    /* Both algorithms did iterate, and the check compared real rays. */
    assert_true(iterative.iterative_pairs > iterative.standard_pairs);
    assert_true(predictive.iterative_pairs > predictive.standard_pairs);
    assert_true(iterative.checked > 10000 && predictive.checked > 10000);
    assert_true(iterative.incorrect > 0);
    /* Acceptance: prediction cuts incorrect rays by >= 80 % and cumulative ray length by >= 40 %. */
    assert_true(cut_incorrect >= 80.0);
    assert_true(cut_length >= 40.0);
    assert_true(raw.checked > 10000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_avalanche_prediction_and_reprojection),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
