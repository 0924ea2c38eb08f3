/* Fast bodies (issue 12, finding 7): what rtcd guarantees at speed.
 *
 * Between meshes, no tunnelling while the relative displacement in one step
 * stays within twice the smaller body's diameter: 120 m/s for 1 m bodies at
 * 60 Hz, 24 m/s for a 20 cm one (docs/validity.md). That holds
 * because the speculative reach covers the whole step's motion (no longer
 * capped at the meshes' size) and because a speculative contact whose foot
 * on the triangle's plane lies off the other body runs along the motion
 * instead (core/shared/pair.h). Bullet's broadphase boxes already include
 * the end of each step (btDispatcherInfo::m_useContinuous).
 *
 * Each case fires a blob at a resting one from 20 offsets across its face,
 * with no gravity, and fails when the fired blob's centre passes the
 * resting one's while their centres are less than the larger radius apart
 * sideways: it went through, not past. Against a plane, a body fired at any
 * speed ends no step beyond it and is not relaunched faster than it came. */
#include "test_util.h"

#include <rtcd/rtcd_world.h>

#include <math.h>
#include <string.h>

#define OFFSETS 20

static rtcd_world* make_world(float gravity_z)
{
    rtcd_world_def d = rtcd_default_world_def();
    d.gravity[2] = gravity_z;
    d.narrowphase.backend = RTCD_BACKEND_CPU;
    d.narrowphase.threads = 1;
    rtcd_world* w = NULL;
    assert_int_equal(rtcd_world_create(&d, &w), RTCD_OK);
    return w;
}

/* Fires a blob of radius `radius` at `speed` (m/s, along +x) at a resting
 * blob of radius 0.5 and mass `target_mass` from OFFSETS offsets and start
 * phases; returns how many went through. */
static int fire_at_blob(float radius, float speed, float target_mass)
{
    const float target_radius = 0.5f, dt = 1.0f / 60.0f;
    int through = 0;
    for (int k = 0; k < OFFSETS; ++k) {
        rtcd_world* w = make_world(0.0f);
        rtcd_mesh* target_mesh = test_make_blob(RTCD_AVALANCHE_BLOB_VERTICES, target_radius, 3);
        rtcd_mesh* fired_mesh = test_make_blob(RTCD_AVALANCHE_BLOB_VERTICES, radius, 5);
        rtcd_shape *target_shape = NULL, *fired_shape = NULL;
        assert_int_equal(rtcd_shape_create(w, target_mesh, &target_shape), RTCD_OK);
        assert_int_equal(rtcd_shape_create(w, fired_mesh, &fired_shape), RTCD_OK);
        rtcd_transform pose = rtcd_transform_identity();
        uint32_t target, fired;
        assert_int_equal(rtcd_world_add_body(w, target_shape, target_mass, &pose, &target), RTCD_OK);
        /* Offsets over a 5 x 4 grid across 60 % of the target's face; start
         * phases spread over a step, so the gap when the pair first shows
         * up varies from case to case. */
        pose.translation[0] = -(1.5f + (3.0f + 0.137f * (float)k) * speed * dt);
        pose.translation[1] = 0.6f * ((float)(k % 5) / 4.0f - 0.5f);
        pose.translation[2] = 0.6f * ((float)(k / 5) / 3.0f - 0.5f);
        assert_int_equal(rtcd_world_add_body(w, fired_shape, 1.0f, &pose, &fired), RTCD_OK);
        const float velocity[3] = {speed, 0.0f, 0.0f};
        assert_int_equal(rtcd_world_set_velocity(w, fired, velocity, NULL), RTCD_OK);
        int crossed = 0;
        for (int i = 0; i < 60 && !crossed; ++i) {
            assert_int_equal(rtcd_world_step(w), RTCD_OK);
            rtcd_transform pt, pf;
            assert_int_equal(rtcd_world_get_pose(w, target, &pt), RTCD_OK);
            assert_int_equal(rtcd_world_get_pose(w, fired, &pf), RTCD_OK);
            float dy = pt.translation[1] - pf.translation[1], dz = pt.translation[2] - pf.translation[2];
            crossed = pf.translation[0] > pt.translation[0] && sqrtf(dy * dy + dz * dz) < target_radius;
        }
        through += crossed;
        rtcd_shape_release(target_shape);
        rtcd_shape_release(fired_shape);
        rtcd_mesh_release(target_mesh);
        rtcd_mesh_release(fired_mesh);
        rtcd_world_release(w);
    }
    print_message("blob of radius %.2f at %.0f m/s (%.2f m a step) into a blob of radius 0.5 and mass %g: %d of %d "
                  "through\n",
                  (double)radius, (double)speed, (double)(speed * dt), (double)target_mass, through, OFFSETS);
    return through;
}

/* 1 m blobs at 120 m/s: 2 m a step, twice the diameter. (With the reach
 * capped at the meshes' size, 4 of 20 went through.) */
static void test_equal_blobs_at_twice_the_diameter_a_step(void** state)
{
    (void)state;
    assert_int_equal(fire_at_blob(0.5f, 120.0f, 1.0f), 0);
    assert_int_equal(fire_at_blob(0.5f, 120.0f, 1e4f), 0);
}

/* A 20 cm blob at 24 m/s (0.4 m a step) into a 1 m one. */
static void test_small_blob_at_twice_its_diameter_a_step(void** state)
{
    (void)state;
    assert_int_equal(fire_at_blob(0.1f, 24.0f, 1.0f), 0);
    assert_int_equal(fire_at_blob(0.1f, 24.0f, 1e4f), 0);
}

/* A 1 m blob fired down at the plane at up to 1e4 m/s (167 m a step):
 * no step ends with its centre beyond the plane's far side, and it never
 * leaves faster than it came. */
static void test_plane_at_absurd_speed(void** state)
{
    (void)state;
    const float speeds[] = {50.0f, 1e3f, 1e4f};
    for (size_t s = 0; s < sizeof speeds / sizeof *speeds; ++s) {
        rtcd_world* w = make_world(-9.81f);
        const float up[3] = {0.0f, 0.0f, 1.0f};
        assert_int_equal(rtcd_world_add_plane(w, up, 0.0f), RTCD_OK);
        rtcd_mesh* mesh = test_make_blob(RTCD_AVALANCHE_BLOB_VERTICES, 0.5f, 3);
        rtcd_shape* shape = NULL;
        assert_int_equal(rtcd_shape_create(w, mesh, &shape), RTCD_OK);
        rtcd_transform pose = rtcd_transform_identity();
        pose.translation[2] = 2.0f + speeds[s] / 60.0f * 2.37f;
        uint32_t body;
        assert_int_equal(rtcd_world_add_body(w, shape, 1.0f, &pose, &body), RTCD_OK);
        const float down[3] = {0.0f, 0.0f, -speeds[s]};
        assert_int_equal(rtcd_world_set_velocity(w, body, down, NULL), RTCD_OK);
        float lowest = INFINITY, fastest_up = 0.0f;
        for (int i = 0; i < 120; ++i) {
            assert_int_equal(rtcd_world_step(w), RTCD_OK);
            rtcd_transform p;
            float lin[3], ang[3];
            assert_int_equal(rtcd_world_get_pose(w, body, &p), RTCD_OK);
            assert_int_equal(rtcd_world_get_velocity(w, body, lin, ang), RTCD_OK);
            lowest = fminf(lowest, p.translation[2]);
            fastest_up = fmaxf(fastest_up, lin[2]);
        }
        print_message("fired at the plane at %.0f m/s: lowest centre %.3f m, fastest upward %.3f m/s\n",
                      (double)speeds[s], (double)lowest, (double)fastest_up);
        assert_true(lowest > 0.0f);            /* not through the plane, not even half */
        assert_true(fastest_up < speeds[s]);   /* not relaunched faster than it came */
        assert_true(fastest_up < 10.0f);       /* nor bounced hard: restitution is 0 */
        rtcd_shape_release(shape);
        rtcd_mesh_release(mesh);
        rtcd_world_release(w);
    }
}

/* test_fast_bodies --sweep: the measurements behind the figures in docs/validity.md
 * (how many of 20 go through, over speeds, sizes and mass ratios). */
static int sweep(void)
{
    const float radii[] = {0.5f, 0.1f}, masses[] = {1.0f, 1e4f};
    const float speeds[] = {30.0f, 60.0f, 120.0f, 240.0f, 500.0f, 1000.0f};
    for (size_t r = 0; r < 2; ++r)
        for (size_t m = 0; m < 2; ++m)
            for (size_t v = 0; v < sizeof speeds / sizeof *speeds; ++v) fire_at_blob(radii[r], speeds[v], masses[m]);
    return 0;
}

int main(int argc, char** argv)
{
    if (argc > 1 && !strcmp(argv[1], "--sweep")) return sweep();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_equal_blobs_at_twice_the_diameter_a_step),
        cmocka_unit_test(test_small_blob_at_twice_its_diameter_a_step),
        cmocka_unit_test(test_plane_at_absurd_speed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
