/* The iterative algorithms on the avalanche scene (the demos' own scene code),
 * each run checked step by step against the standard algorithm on the same
 * poses (rtcd_world_def.check): prediction against plain iteration, and
 * re-projection against raw ray contacts. Plain iteration is the paper's
 * (JVRC 2013 Algorithm 1): the iterative algorithm without speculative
 * contacts, with which it keeps predictions within the margin too (and
 * its rays then agreed with the standard algorithm's on every step:
 * docs/contacts.md). */
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

static run_totals run(rtcd_algorithm algorithm, rtcd_contact_normal normal, int speculative)
{
    demo_options o;
    demo_default_options(DEMO_AVALANCHE, &o);
    o.objects = AVALANCHE_OBJECTS;
    o.steps = AVALANCHE_STEPS;
    o.backend = RTCD_BACKEND_CPU;
    o.algorithm = algorithm;
    o.contact_normal = normal;
    o.speculative = speculative;
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

/* The three runs: each may run in a process of its own (CTest runs them
 * side by side and the comparison after them; tests/CMakeLists.txt). */
typedef struct run_kind {
    const char* name;
    rtcd_algorithm algorithm;
    rtcd_contact_normal normal;
    int speculative;
} run_kind;
static const run_kind k_runs[3] = {{"iterative", RTCD_ALGORITHM_ITERATIVE, RTCD_CONTACT_REPROJECTED, 0},
                                   {"predictive", RTCD_ALGORITHM_PREDICTIVE, RTCD_CONTACT_REPROJECTED, 1},
                                   {"raw", RTCD_ALGORITHM_PREDICTIVE, RTCD_CONTACT_RAY, 1}};

static run_totals g_totals[3];
static const char* g_dir; /* where the runs' totals are (NULL: run them here) */

static int write_totals(const char* path, const run_totals* t)
{
    FILE* f = fopen(path, "w");
    if (!f) return 0;
    int ok = fprintf(f, "%llu %llu %.17g %llu %llu\n", (unsigned long long)t->checked,
                     (unsigned long long)t->incorrect, t->ray_length, (unsigned long long)t->standard_pairs,
                     (unsigned long long)t->iterative_pairs) > 0;
    return fclose(f) == 0 && ok;
}

static int read_totals(const char* path, run_totals* t)
{
    FILE* f = fopen(path, "r");
    if (!f) return 0;
    unsigned long long c, i, s, it;
    int ok = fscanf(f, "%llu %llu %lg %llu %llu", &c, &i, &t->ray_length, &s, &it) == 5;
    fclose(f);
    t->checked = c, t->incorrect = i, t->standard_pairs = s, t->iterative_pairs = it;
    return ok;
}

static void test_avalanche_prediction_and_reprojection(void** state)
{
    (void)state;
    for (int k = 0; k < 3; ++k) {
        if (!g_dir) {
            g_totals[k] = run(k_runs[k].algorithm, k_runs[k].normal, k_runs[k].speculative);
            continue;
        }
        char path[1024];
        snprintf(path, sizeof path, "%s/%s.txt", g_dir, k_runs[k].name);
        if (!read_totals(path, &g_totals[k])) fail_msg("no totals in %s (its run failed?)", path);
    }
    run_totals iterative = g_totals[0], predictive = g_totals[1], raw = g_totals[2];
    double inc_it = pct(iterative.incorrect, iterative.checked), inc_pr = pct(predictive.incorrect, predictive.checked);
    printf("avalanche %u blobs, %u steps, CPU reference, checked against the standard algorithm every step:\n",
           AVALANCHE_OBJECTS, AVALANCHE_STEPS);
    printf("  iterative (plain, no speculative contacts):  incorrect rays %.4f %% of %llu, cumulative ray length %.2f m, pair-steps %llu standard / "
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

/* No argument: the three runs here, then the comparison. `run NAME FILE`:
 * one run, its totals into FILE. `compare DIR`: the comparison of the
 * totals in DIR/NAME.txt. */
int main(int argc, char** argv)
{
    if (argc == 4 && !strcmp(argv[1], "run")) {
        for (int k = 0; k < 3; ++k) {
            if (strcmp(argv[2], k_runs[k].name)) continue;
            run_totals t = run(k_runs[k].algorithm, k_runs[k].normal, k_runs[k].speculative);
            if (!write_totals(argv[3], &t)) {
                fprintf(stderr, "cannot write %s\n", argv[3]);
                return 1;
            }
            printf("%s: %llu rays checked, %llu incorrect\n", argv[2], (unsigned long long)t.checked,
                   (unsigned long long)t.incorrect);
            return 0;
        }
        fprintf(stderr, "unknown run '%s' (iterative, predictive, raw)\n", argv[2]);
        return 1;
    }
    if (argc == 3 && !strcmp(argv[1], "compare")) g_dir = argv[2];
    else if (argc != 1) {
        fprintf(stderr, "usage: %s [run iterative|predictive|raw FILE | compare DIR]\n", argv[0]);
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_avalanche_prediction_and_reprojection),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
