/* Piles that rest on their surfaces (issue 23): a stack of 5 blobs and a
 * 27-blob pile (the avalanche's own blobs and scene code) come to rest with
 * every vertex within 2 mm of the surfaces, measured with the exact ruler
 * (rtcd_world_measure_penetration: point-in-mesh and closest-point
 * distance, independent of the narrow phase) every 10 steps over the last
 * 5 s of 10 s, on the CPU reference and on OpenCL (PoCL here). */
#include "test_util.h"

#include <rtcd/rtcd_world.h>

#include "scenes/demo_common.h"
#include "scenes/scene_util.h"

#include <stdio.h>
#include <string.h>

#define REST_STEPS 600u
#define REST_FROM 300u
#define REST_EVERY 10u
#define REST_MAX_DEPTH 0.002f

/* The deepest vertex of any sample from REST_FROM on; the stack: `stack`
 * blobs dropped in a column instead of the avalanche's cube. */
static float resting_depth(rtcd_backend backend, uint32_t pile, uint32_t stack, const char* what)
{
    demo_options o;
    demo_default_options(DEMO_AVALANCHE, &o);
    o.objects = pile;
    o.steps = REST_STEPS;
    o.backend = backend;
    o.quiet = 1;
    o.penetration_every = 0;
    demo_scene s;
    assert_int_equal(demo_scene_create(&o, &s), RTCD_OK);
    /* The stack stands in a chimney of four walls (planes) a blob's
     * bounding diameter plus 2 cm wide: round blobs on each other topple. */
    float half = s.bounding_radius + 0.01f;
    for (int wall = 0; wall < (stack ? 4 : 0); ++wall) {
        float n[3] = {0.0f, 0.0f, 0.0f};
        n[wall / 2] = wall % 2 ? -1.0f : 1.0f;
        assert_int_equal(rtcd_world_add_plane(s.world, n, -half), RTCD_OK);
    }
    for (uint32_t k = 0; k < stack; ++k) {
        /* one above the other, a bounding diameter plus 1 cm apart, unturned */
        rtcd_transform pose = rtcd_transform_identity();
        pose.translation[2] = s.bounding_radius + 0.01f + (float)k * (2.0f * s.bounding_radius + 0.01f);
        assert_int_equal(rtcd_world_add_body(s.world, s.shapes[0], 1.0f, &pose, NULL), RTCD_OK);
    }
    float deepest = 0.0f;
    double sum = 0.0;
    uint32_t samples = 0;
    for (uint32_t step = 0; step < o.steps; ++step) {
        assert_int_equal(demo_scene_update(&s, step), RTCD_OK);
        assert_int_equal(rtcd_world_step(s.world), RTCD_OK);
        if (step + 1 <= REST_FROM || (step + 1) % REST_EVERY) continue;
        rtcd_penetration p;
        assert_int_equal(rtcd_world_measure_penetration(s.world, &p), RTCD_OK);
        deepest = p.max > deepest ? p.max : deepest;
        sum += p.sum;
        samples++;
    }
    /* the highest body: a stack that stays a stack rests on the blobs below */
    float top = 0.0f;
    for (uint32_t b = 0; b < rtcd_world_body_count(s.world); ++b) {
        rtcd_transform t;
        assert_int_equal(rtcd_world_get_pose(s.world, b, &t), RTCD_OK);
        top = t.translation[2] > top ? t.translation[2] : top;
    }
    printf("  %s on %s: deepest %.5f m, mean sum %.5f m over %u samples; highest body at %.2f m (blob radius %.2f m)\n",
           what, rtcd_backend_name(rtcd_world_backend(s.world)), (double)deepest, samples ? sum / samples : 0.0, samples,
           (double)top, (double)s.bounding_radius);
    if (stack) assert_true(top > (float)(stack - 2) * s.bounding_radius); /* not toppled flat */
    demo_scene_destroy(&s);
    return deepest;
}

static void check_backend(rtcd_backend backend)
{
    float stack = resting_depth(backend, 0, 5, "stack of 5");
    float pile = resting_depth(backend, 27, 0, "pile of 27");
    assert_true(stack <= REST_MAX_DEPTH);
    assert_true(pile <= REST_MAX_DEPTH);
}

static void test_rest_cpu(void** state)
{
    (void)state;
    check_backend(RTCD_BACKEND_CPU);
}

static void test_rest_opencl(void** state)
{
    (void)state;
    if (!test_opencl_available()) skip();
    check_backend(RTCD_BACKEND_OPENCL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rest_cpu),
        cmocka_unit_test(test_rest_opencl),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
