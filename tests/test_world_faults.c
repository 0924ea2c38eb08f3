/* The C API over Bullet against hostile and careless input (issue 12):
 * every float of the world API is checked and the error names it; poses
 * must be rotations within the range of validity; out of memory in a step
 * is reported, the pairs keep their contacts, and the world goes on once
 * memory is back. */
#include "test_util.h"

#include <rtcd/rtcd_world.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void expect_invalid(rtcd_error err, const char* must_mention)
{
    if (err != RTCD_ERROR_INVALID_ARGUMENT || !strstr(rtcd_last_error_message(), must_mention))
        fail_msg("got %s '%s', want RTCD_ERROR_INVALID_ARGUMENT naming '%s'", rtcd_error_name(err),
                 rtcd_last_error_message(), must_mention);
}

static rtcd_error create_with(rtcd_world_def def)
{
    rtcd_world* w = (rtcd_world*)0x1;
    rtcd_error err = rtcd_world_create(&def, &w);
    if (err == RTCD_OK) rtcd_world_release(w);
    else assert_null(w);
    return err;
}

static void test_world_def_fields(void** state)
{
    (void)state;
    const float nan = NAN, inf = INFINITY;
    rtcd_world_def d = rtcd_default_world_def();
    d.gravity[2] = nan;
    expect_invalid(create_with(d), "gravity[2]");
    d = rtcd_default_world_def();
    d.gravity[0] = inf;
    expect_invalid(create_with(d), "gravity[0]");
    float steps[] = {inf, nan, 1e-30f, 0.0f, -1.0f, 10.0f};
    for (size_t i = 0; i < sizeof steps / sizeof *steps; ++i) {
        d = rtcd_default_world_def();
        d.time_step = steps[i];
        expect_invalid(create_with(d), "time_step");
    }
    d = rtcd_default_world_def();
    d.solver_iterations = 0;
    expect_invalid(create_with(d), "solver_iterations");
    int kinds[] = {7, -1, 3};
    for (size_t i = 0; i < 3; ++i) {
        d = rtcd_default_world_def();
        memcpy(&d.narrowphase_kind, &kinds[i], sizeof kinds[i]); /* what a careless caller can store */
        expect_invalid(create_with(d), "narrowphase_kind");
    }
    d = rtcd_default_world_def();
    d.linear_damping = nan;
    expect_invalid(create_with(d), "linear_damping");
    d = rtcd_default_world_def();
    d.friction = -1.0f;
    expect_invalid(create_with(d), "friction");
    d = rtcd_default_world_def();
    d.restitution = nan;
    expect_invalid(create_with(d), "restitution");
    d = rtcd_default_world_def();
    d.rolling_friction = inf;
    expect_invalid(create_with(d), "rolling_friction");
    assert_int_equal(create_with(rtcd_default_world_def()), RTCD_OK);
}

typedef struct scene {
    rtcd_world* world;
    rtcd_mesh* mesh;
    rtcd_shape* shape;
} scene;

static scene make_scene(void)
{
    scene s;
    rtcd_world_def d = rtcd_default_world_def();
    d.narrowphase.backend = RTCD_BACKEND_CPU;
    d.narrowphase.threads = 1;
    assert_int_equal(rtcd_world_create(&d, &s.world), RTCD_OK);
    const float up[3] = {0, 0, 1};
    assert_int_equal(rtcd_world_add_plane(s.world, up, 0.0f), RTCD_OK);
    s.mesh = test_make_blob(RTCD_AVALANCHE_BLOB_VERTICES, 0.5f, 3);
    assert_int_equal(rtcd_shape_create(s.world, s.mesh, &s.shape), RTCD_OK);
    return s;
}

static void free_scene(scene* s)
{
    rtcd_shape_release(s->shape);
    rtcd_mesh_release(s->mesh);
    rtcd_world_release(s->world);
}

static void test_body_inputs(void** state)
{
    (void)state;
    scene s = make_scene();
    rtcd_transform pose = rtcd_transform_identity();
    pose.translation[2] = 1.0f;
    const float masses[] = {1e30f, NAN, 0.0f, -1.0f, INFINITY};
    for (size_t i = 0; i < sizeof masses / sizeof *masses; ++i)
        expect_invalid(rtcd_world_add_body(s.world, s.shape, masses[i], &pose, NULL), "mass");
    rtcd_transform bad = pose;
    bad.rotation[0] = 2.0f; /* a scale, not a rotation */
    expect_invalid(rtcd_world_add_body(s.world, s.shape, 1.0f, &bad, NULL), "rotation");
    bad = pose;
    bad.rotation[8] = -1.0f; /* a mirror */
    expect_invalid(rtcd_world_add_body(s.world, s.shape, 1.0f, &bad, NULL), "rotation");
    bad = pose;
    bad.translation[0] = 1e6f; /* beyond the range of validity */
    expect_invalid(rtcd_world_add_body(s.world, s.shape, 1.0f, &bad, NULL), "translation");
    bad = pose;
    bad.translation[1] = NAN;
    expect_invalid(rtcd_world_add_body(s.world, s.shape, 1.0f, &bad, NULL), "not finite");
    uint32_t body;
    assert_int_equal(rtcd_world_add_body(s.world, s.shape, 1.0f, &pose, &body), RTCD_OK);
    const float nan3[3] = {0, NAN, 0}, huge3[3] = {1e30f, 0, 0}, ok3[3] = {0, 0, -1};
    expect_invalid(rtcd_world_set_velocity(s.world, body, nan3, NULL), "linear velocity");
    expect_invalid(rtcd_world_set_velocity(s.world, body, huge3, NULL), "linear velocity");
    expect_invalid(rtcd_world_set_velocity(s.world, body, NULL, nan3), "angular velocity");
    assert_int_equal(rtcd_world_set_velocity(s.world, body, ok3, NULL), RTCD_OK);
    const float up[3] = {0, 0, 1};
    expect_invalid(rtcd_world_add_plane(s.world, up, NAN), "offset");
    rtcd_shape_center_of_mass(s.shape, NULL); /* no output: nothing happens */
    for (int i = 0; i < 30; ++i) assert_int_equal(rtcd_world_step(s.world), RTCD_OK);
    rtcd_transform p;
    assert_int_equal(rtcd_world_get_pose(s.world, body, &p), RTCD_OK);
    assert_true(isfinite(p.translation[2]));
    free_scene(&s);
}


/* A blob resting on the plane with its contacts, then a second blob of a
 * new shape dropped onto it while allocations fail from the n-th on: the
 * step reports RTCD_ERROR_OUT_OF_MEMORY (or, where nothing failed, OK), the
 * resting blob keeps its contacts, and once memory is back the world steps
 * on and the new pair collides. n runs over every allocation of that step. */
static void test_out_of_memory_in_step(void** state)
{
    (void)state;
    uint32_t failures_seen = 0;
    for (long n = 0;; ++n) {
        test_failing_allocator_install();
        scene s = make_scene();
        rtcd_transform pose = rtcd_transform_identity();
        pose.translation[2] = 0.45f;
        uint32_t resting, dropped;
        assert_int_equal(rtcd_world_add_body(s.world, s.shape, 1.0f, &pose, &resting), RTCD_OK);
        for (int i = 0; i < 60; ++i) assert_int_equal(rtcd_world_step(s.world), RTCD_OK);
        uint32_t contacts_before = rtcd_world_last_step_stats(s.world).contacts;
        assert_true(contacts_before >= 1);
        rtcd_mesh* other_mesh = test_make_blob(RTCD_AVALANCHE_BLOB_VERTICES, 0.4f, 9);
        rtcd_shape* other = NULL;
        assert_int_equal(rtcd_shape_create(s.world, other_mesh, &other), RTCD_OK);
        pose.translation[2] = 1.2f;
        assert_int_equal(rtcd_world_add_body(s.world, other, 1.0f, &pose, &dropped), RTCD_OK);
        test_fail_after(n);
        rtcd_error err = rtcd_world_step(s.world);
        long failed = test_failed_allocations();
        test_fail_after(-1);
        rtcd_step_stats st = rtcd_world_last_step_stats(s.world);
        if (failed) {
            if (err != RTCD_ERROR_OUT_OF_MEMORY)
                fail_msg("allocation %ld failed, the step returned %s", n, rtcd_error_name(err));
            assert_true(st.out_of_memory >= 1);
            assert_true(st.contacts >= 1); /* the resting pair kept its contacts */
            failures_seen++;
        } else {
            assert_int_equal(err, RTCD_OK);
        }
        /* Memory is back: the world goes on and the dropped blob lands on the other. */
        uint32_t owned = 0;
        for (int i = 0; i < 90; ++i) {
            assert_int_equal(rtcd_world_step(s.world), RTCD_OK);
            st = rtcd_world_last_step_stats(s.world);
            if (st.pairs_owned > owned) owned = st.pairs_owned;
        }
        rtcd_transform p;
        assert_int_equal(rtcd_world_get_pose(s.world, dropped, &p), RTCD_OK);
        assert_true(owned >= 2);
        assert_true(p.translation[2] > 0.6f); /* on the resting blob, not through it */
        rtcd_shape_release(other);
        rtcd_mesh_release(other_mesh);
        free_scene(&s);
        rtcd_set_allocator(NULL, NULL, NULL);
        if (!failed) break; /* n passed the step's last allocation */
    }
    print_message("%u allocation failures in a step, each reported and recovered from\n", failures_seen);
    assert_true(failures_seen >= 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_world_def_fields),
        cmocka_unit_test(test_body_inputs),
        cmocka_unit_test(test_out_of_memory_in_step),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
