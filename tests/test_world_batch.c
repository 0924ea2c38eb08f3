/* The world's batch getters (rtcd_world_get_transforms, _poses,
 * _velocities) against the per-body getters, the poses' quaternions against
 * the rotations they were made from, and their argument checks. */
#include "test_util.h"

#include <rtcd/rtcd_world.h>

#include <math.h>
#include <string.h>

#define BODIES 12u

typedef struct scene {
    rtcd_world* world;
    rtcd_shape* blob;
    rtcd_shape* box;
    float quats[BODIES][4]; /* the orientations the bodies were created with */
} scene;

/* Blobs and boxes at seeded orientations above a plane, spinning. */
static void make_scene(scene* s)
{
    rtcd_world_def def = rtcd_default_world_def();
    def.narrowphase.backend = RTCD_BACKEND_CPU;
    assert_int_equal(rtcd_world_create(&def, &s->world), RTCD_OK);
    float up[3] = {0, 0, 1};
    assert_int_equal(rtcd_world_add_plane(s->world, up, 0.0f), RTCD_OK);
    rtcd_mesh* mesh = test_make_blob(RTCD_AVALANCHE_BLOB_VERTICES, 0.5f, 3);
    assert_int_equal(rtcd_shape_create(s->world, mesh, &s->blob), RTCD_OK);
    rtcd_mesh_release(mesh);
    rtcd_convex_def cd = rtcd_default_convex_def();
    assert_int_equal(rtcd_shape_create_convex(s->world, &cd, &s->box), RTCD_OK);
    test_rng rng = {42};
    for (uint32_t b = 0; b < BODIES; ++b) {
        float q[4], t[3] = {(float)(b % 4) * 1.5f, (float)(b / 4) * 1.5f, 1.0f + 0.1f * (float)b};
        double n = 0;
        for (int k = 0; k < 4; ++k) {
            q[k] = (float)test_rng_range(&rng, -1, 1);
            n += (double)q[k] * q[k];
        }
        for (int k = 0; k < 4; ++k) s->quats[b][k] = (float)(q[k] / sqrt(n));
        rtcd_transform pose = rtcd_transform_from_quat(s->quats[b], t);
        uint32_t id;
        assert_int_equal(rtcd_world_add_body(s->world, b % 3 ? s->blob : s->box, 1.0f, &pose, &id), RTCD_OK);
        assert_int_equal(id, b);
        float v[3] = {(float)b * 0.1f, 0.0f, -1.0f}, w[3] = {0.0f, 2.0f, (float)b * 0.3f};
        assert_int_equal(rtcd_world_set_velocity(s->world, b, v, w), RTCD_OK);
    }
}

static void free_scene(scene* s)
{
    rtcd_shape_release(s->blob);
    rtcd_shape_release(s->box);
    rtcd_world_release(s->world);
}

/* The rotation matrix of a unit quaternion (x, y, z, w), row-major: the
 * textbook formula, independent of rtcd and Bullet. */
static void quat_matrix(const float q[4], double m[9])
{
    double x = q[0], y = q[1], z = q[2], w = q[3];
    m[0] = 1 - 2 * (y * y + z * z), m[1] = 2 * (x * y - z * w), m[2] = 2 * (x * z + y * w);
    m[3] = 2 * (x * y + z * w), m[4] = 1 - 2 * (x * x + z * z), m[5] = 2 * (y * z - x * w);
    m[6] = 2 * (x * z - y * w), m[7] = 2 * (y * z + x * w), m[8] = 1 - 2 * (x * x + y * y);
}

/* Every batch entry against the per-body getters, over the whole world and
 * a range inside it. */
static void check_against_per_body(const rtcd_world* w, uint32_t first, uint32_t count)
{
    rtcd_transform transforms[BODIES];
    float poses[BODIES][7], velocities[BODIES][6];
    assert_int_equal(rtcd_world_get_transforms(w, first, count, transforms), RTCD_OK);
    assert_int_equal(rtcd_world_get_poses(w, first, count, &poses[0][0]), RTCD_OK);
    assert_int_equal(rtcd_world_get_velocities(w, first, count, &velocities[0][0]), RTCD_OK);
    for (uint32_t i = 0; i < count; ++i) {
        rtcd_transform t;
        float v[3], a[3];
        assert_int_equal(rtcd_world_get_pose(w, first + i, &t), RTCD_OK);
        assert_int_equal(rtcd_world_get_velocity(w, first + i, v, a), RTCD_OK);
        assert_memory_equal(&transforms[i], &t, sizeof t);
        assert_memory_equal(poses[i], t.translation, sizeof t.translation);
        assert_memory_equal(velocities[i], v, sizeof v);
        assert_memory_equal(velocities[i] + 3, a, sizeof a);
        /* the quaternion: unit, w >= 0, and the same rotation as the pose */
        const float* q = poses[i] + 3;
        double n = 0, m[9];
        for (int k = 0; k < 4; ++k) n += (double)q[k] * q[k];
        assert_float_near(n, 1.0, 1e-5);
        assert_true(q[3] >= 0.0f);
        quat_matrix(q, m);
        for (int k = 0; k < 9; ++k) assert_float_near(m[k], t.rotation[k], 1e-5);
    }
}

static void test_batch_equals_per_body(void** state)
{
    (void)state;
    scene s;
    make_scene(&s);
    /* before any step: the created orientations come back (up to the sign) */
    float poses[BODIES][7];
    assert_int_equal(rtcd_world_get_poses(s.world, 0, BODIES, &poses[0][0]), RTCD_OK);
    for (uint32_t b = 0; b < BODIES; ++b) {
        float sign = s.quats[b][3] < 0 ? -1.0f : 1.0f;
        for (int k = 0; k < 4; ++k) assert_float_near(poses[b][3 + k], sign * s.quats[b][k], 1e-5);
    }
    check_against_per_body(s.world, 0, BODIES);
    /* moving, turning, landing bodies */
    for (int step = 0; step < 40; ++step) {
        assert_int_equal(rtcd_world_step(s.world), RTCD_OK);
        if (step % 10 == 9) {
            check_against_per_body(s.world, 0, BODIES);
            check_against_per_body(s.world, 5, 4);
            check_against_per_body(s.world, BODIES - 1, 1);
        }
    }
    free_scene(&s);
}

static void test_velocities_as_set(void** state)
{
    (void)state;
    scene s;
    make_scene(&s);
    float vel[BODIES][6];
    assert_int_equal(rtcd_world_get_velocities(s.world, 0, BODIES, &vel[0][0]), RTCD_OK);
    for (uint32_t b = 0; b < BODIES; ++b) {
        float want[6] = {(float)b * 0.1f, 0.0f, -1.0f, 0.0f, 2.0f, (float)b * 0.3f};
        assert_memory_equal(vel[b], want, sizeof want);
    }
    free_scene(&s);
}

static void test_bad_arguments(void** state)
{
    (void)state;
    scene s;
    make_scene(&s);
    rtcd_transform transforms[2];
    float out[2 * 7], sentinel[2 * 7];
    for (int k = 0; k < 14; ++k) out[k] = sentinel[k] = -12345.0f;
    memset(transforms, 0xab, sizeof transforms);
    unsigned char transforms_before[sizeof transforms];
    memcpy(transforms_before, transforms, sizeof transforms);

    /* empty ranges succeed and write nothing, wherever they start within the world */
    assert_int_equal(rtcd_world_get_poses(s.world, 0, 0, NULL), RTCD_OK);
    assert_int_equal(rtcd_world_get_velocities(s.world, BODIES, 0, NULL), RTCD_OK);
    assert_int_equal(rtcd_world_get_transforms(s.world, BODIES, 0, NULL), RTCD_OK);

    assert_int_equal(rtcd_world_get_poses(NULL, 0, 1, out), RTCD_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(rtcd_last_error_message(), "NULL world"));
    assert_int_equal(rtcd_world_get_velocities(s.world, 0, 1, NULL), RTCD_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(rtcd_last_error_message(), "rtcd_world_get_velocities: NULL out"));
    assert_int_equal(rtcd_world_get_transforms(s.world, 0, 1, NULL), RTCD_ERROR_INVALID_ARGUMENT);

    /* past the end, partly or wholly, and a range whose end wraps in 32 bits */
    assert_int_equal(rtcd_world_get_poses(s.world, BODIES - 1, 2, out), RTCD_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(rtcd_last_error_message(), "out of range"));
    assert_int_equal(rtcd_world_get_velocities(s.world, BODIES, 1, out), RTCD_ERROR_INVALID_ARGUMENT);
    assert_int_equal(rtcd_world_get_poses(s.world, UINT32_MAX, 2, out), RTCD_ERROR_INVALID_ARGUMENT);
    assert_int_equal(rtcd_world_get_transforms(s.world, BODIES - 1, 2, transforms), RTCD_ERROR_INVALID_ARGUMENT);
    assert_int_equal(rtcd_world_get_transforms(s.world, 1, UINT32_MAX, transforms), RTCD_ERROR_INVALID_ARGUMENT);
    /* a refused call wrote nothing */
    assert_memory_equal(out, sentinel, sizeof out);
    assert_memory_equal(transforms, transforms_before, sizeof transforms);
    free_scene(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batch_equals_per_body),
        cmocka_unit_test(test_velocities_as_set),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
