/* The C API over Bullet: resting, stacking, deep-overlap separation,
 * determinism, bad input. rtcd's narrow phase on the CPU reference. */
#include "test_util.h"

#include <rtcd/rtcd_world.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOB_RADIUS 0.5f

typedef struct scene {
    rtcd_world* world;
    rtcd_shape* shape;
    float size;      /* the blob's largest extent */
    float thickness; /* its extent along z */
} scene;

/* flatten < 1 squashes the blob along z into a pebble (stackable). */
static scene make_scene_shaped(rtcd_narrowphase_kind kind, int with_plane, float flatten)
{
    scene s;
    rtcd_world_def def = rtcd_default_world_def();
    def.narrowphase_kind = kind;
    if (!with_plane) def.gravity[2] = 0.0f; /* floating bodies: no gravity */
    assert_int_equal(rtcd_world_create(&def, &s.world), RTCD_OK);
    rtcd_generated_mesh g;
    assert_int_equal(rtcd_generate_blob(RTCD_AVALANCHE_BLOB_VERTICES, BLOB_RADIUS, 1, &g), RTCD_OK);
    for (uint32_t i = 0; i < g.vertex_count; ++i) g.vertices[3 * i + 2] *= flatten;
    rtcd_mesh* mesh = test_mesh_from_generated(&g, "blob");
    assert_int_equal(rtcd_shape_create(s.world, mesh, &s.shape), RTCD_OK);
    float lo[3], hi[3];
    rtcd_mesh_bounds(mesh, lo, hi);
    s.size = fmaxf(fmaxf(hi[0] - lo[0], hi[1] - lo[1]), hi[2] - lo[2]);
    s.thickness = hi[2] - lo[2];
    rtcd_mesh_release(mesh);
    if (with_plane) {
        float up[3] = {0, 0, 1};
        assert_int_equal(rtcd_world_add_plane(s.world, up, 0.0f), RTCD_OK);
    }
    return s;
}

static scene make_scene(rtcd_narrowphase_kind kind, int with_plane) { return make_scene_shaped(kind, with_plane, 1.0f); }

static void free_scene(scene* s)
{
    rtcd_shape_release(s->shape);
    rtcd_world_release(s->world);
}

static uint32_t add_posed(scene* s, rtcd_transform pose)
{
    uint32_t id;
    assert_int_equal(rtcd_world_add_body(s->world, s->shape, 1.0f, &pose, &id), RTCD_OK);
    return id;
}

static uint32_t add_at(scene* s, float x, float y, float z, uint64_t seed)
{
    test_rng rng = {seed};
    rtcd_transform pose = test_random_pose(&rng, 0.0f);
    pose.translation[0] = x, pose.translation[1] = y, pose.translation[2] = z;
    uint32_t id;
    assert_int_equal(rtcd_world_add_body(s->world, s->shape, 1.0f, &pose, &id), RTCD_OK);
    return id;
}

static float speed(const scene* s, uint32_t body)
{
    float v[3], w[3];
    assert_int_equal(rtcd_world_get_velocity(s->world, body, v, w), RTCD_OK);
    return sqrtf(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
}

static rtcd_transform pose_of(const scene* s, uint32_t body)
{
    rtcd_transform t;
    assert_int_equal(rtcd_world_get_pose(s->world, body, &t), RTCD_OK);
    return t;
}

static void steps(scene* s, int n)
{
    for (int i = 0; i < n; ++i) assert_int_equal(rtcd_world_step(s->world), RTCD_OK);
}

static void test_blob_comes_to_rest(void** state)
{
    (void)state;
    scene s = make_scene(RTCD_NARROWPHASE_RTCD, 1);
    uint32_t b = add_at(&s, 0, 0, 1.0f, 3);
    uint32_t owned = 0, solved = 0;
    for (int i = 0; i < 180; ++i) { /* 3 s */
        steps(&s, 1);
        rtcd_step_stats st = rtcd_world_last_step_stats(s.world);
        owned = st.pairs_owned > owned ? st.pairs_owned : owned;
        /* The solver's time is part of the step's, and there is some once contacts are. */
        assert_true(st.solver_ms >= 0.0 && st.solver_ms <= st.step_ms);
        solved += st.contacts > 0 && st.solver_ms > 0.0;
    }
    assert_true(owned >= 1); /* the blob-plane pair went through rtcd */
    assert_true(solved > 0);
    float v = speed(&s, b);
    rtcd_penetration pen;
    assert_int_equal(rtcd_world_measure_penetration(s.world, &pen), RTCD_OK);
    print_message("after 3 s: speed %.5f m/s, penetration %.5f m (size %.3f)\n", v, pen.max, s.size);
    assert_true(v < 0.01f);
    assert_true(pen.max < 0.01f * s.size);
    rtcd_transform before = pose_of(&s, b);
    steps(&s, 120); /* 2 s more: no creep */
    rtcd_transform after = pose_of(&s, b);
    float drift = 0;
    for (int k = 0; k < 3; ++k) drift = fmaxf(drift, fabsf(after.translation[k] - before.translation[k]));
    print_message("drift over 2 s: %.6f m\n", drift);
    assert_true(drift < 0.001f * s.size * 10); /* under 1 % of the size */
    free_scene(&s);
}

static void test_stack_of_three(void** state)
{
    (void)state;
    /* Flat pebbles (the blob squashed to 15 % along z), flat side down, each
     * turned about z: a cairn. Rounder blobs roll off each other whatever the
     * narrow phase (convex hulls and GImpact topple them too). */
    scene s = make_scene_shaped(RTCD_NARROWPHASE_RTCD, 1, 0.15f);
    uint32_t ids[3];
    float thickness = 1.2f * s.thickness;
    for (int i = 0; i < 3; ++i) {
        float yaw = 0.7f * (float)i;
        float q[4] = {0, 0, sinf(0.5f * yaw), cosf(0.5f * yaw)};
        float t[3] = {0, 0, 0.6f * thickness + (float)i * thickness};
        ids[i] = add_posed(&s, rtcd_transform_from_quat(q, t));
    }
    float max_ke = 0;
    for (int step = 0; step < 300; ++step) {
        steps(&s, 1);
        float ke = 0;
        for (int i = 0; i < 3; ++i) ke += 0.5f * speed(&s, ids[i]) * speed(&s, ids[i]);
        if (step > 60) max_ke = fmaxf(max_ke, ke);
        if (getenv("RTCD_TEST_VERBOSE") && step % 10 == 0)
            print_message("step %d ke %.3f z %.3f %.3f %.3f\n", step, ke, pose_of(&s, ids[0]).translation[2],
                          pose_of(&s, ids[1]).translation[2], pose_of(&s, ids[2]).translation[2]);
    }
    float z[3];
    for (int i = 0; i < 3; ++i) z[i] = pose_of(&s, ids[i]).translation[2];
    print_message("stack heights %.3f %.3f %.3f, max kinetic energy after 1 s %.4f J\n", z[0], z[1], z[2], max_ke);
    float lateral = 0;
    for (int i = 0; i < 3; ++i) {
        rtcd_transform t = pose_of(&s, ids[i]);
        lateral = fmaxf(lateral, sqrtf(t.translation[0] * t.translation[0] + t.translation[1] * t.translation[1]));
    }
    print_message("largest sideways drift %.3f m\n", lateral);
    assert_true(z[0] > 0.0f);                 /* the bottom one stays above the plane */
    assert_true(z[1] > z[0] + 0.5f * s.thickness); /* nothing sank through: still stacked */
    assert_true(z[2] > z[1] + 0.5f * s.thickness);
    assert_true(lateral < 0.25f * s.size);    /* still one above the other */
    assert_true(max_ke < 2.0f);                        /* bounded: no explosion */
    free_scene(&s);
}

/* Two blobs half inside each other, no gravity, no plane. */
static void separate(rtcd_narrowphase_kind kind, float* gap_out, float* vmax_out, int* steps_out)
{
    scene s = make_scene(kind, 0);
    uint32_t a = add_at(&s, 0, 0, 0, 1), b = add_at(&s, 0.5f * s.size, 0, 0, 2);
    float vmax = 0;
    int separated_at = -1;
    for (int step = 0; step < 60; ++step) {
        steps(&s, 1);
        vmax = fmaxf(vmax, fmaxf(speed(&s, a), speed(&s, b)));
        rtcd_penetration pen;
        assert_int_equal(rtcd_world_measure_penetration(s.world, &pen), RTCD_OK);
        if (separated_at < 0 && pen.vertices_inside == 0) separated_at = step + 1;
    }
    *gap_out = pose_of(&s, b).translation[0] - pose_of(&s, a).translation[0];
    *vmax_out = vmax;
    *steps_out = separated_at;
    free_scene(&s);
}

static void test_deep_overlap_separates(void** state)
{
    (void)state;
    float gap, vmax;
    int at;
    separate(RTCD_NARROWPHASE_RTCD, &gap, &vmax, &at);
    print_message("rtcd: separated after %d steps, centre gap %.3f m, max speed %.3f m/s\n", at, gap, vmax);
    assert_true(at > 0 && at <= 60); /* within 1 s */
    assert_true(vmax < 2.0f);         /* pushed apart, not launched */
    separate(RTCD_NARROWPHASE_GIMPACT, &gap, &vmax, &at);
    print_message("gimpact (reported, not asserted): separated after %d steps (-1: not within 1 s), gap %.3f m, "
                  "max speed %.3f m/s\n",
                  at, gap, vmax);
}

static void run_avalanche(rtcd_transform* final_poses, uint32_t* count, float* lowest)
{
    scene s = make_scene(RTCD_NARROWPHASE_RTCD, 1);
    uint32_t n = 0;
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j)
            for (int k = 0; k < 4; ++k, ++n)
                add_at(&s, (float)i * 1.1f * s.size + 0.05f * (float)k, (float)j * 1.1f * s.size,
                       0.8f + (float)k * 1.1f * s.size, 100 + n);
    *lowest = INFINITY;
    const float* v = rtcd_mesh_vertices(rtcd_shape_body_mesh(s.shape));
    uint32_t nv = rtcd_mesh_vertex_count(rtcd_shape_body_mesh(s.shape));
    for (int step = 0; step < 300; ++step) {
        steps(&s, 1);
        for (uint32_t b = 0; b < n; ++b) {
            rtcd_transform t = pose_of(&s, b);
            for (int k = 0; k < 12; ++k) assert_true(isfinite(k < 9 ? t.rotation[k] : t.translation[k - 9]));
            if (step % 30 != 29) continue;
            for (uint32_t i = 0; i < nv; ++i) {
                const float* p = v + 3 * i;
                float z = t.rotation[6] * p[0] + t.rotation[7] * p[1] + t.rotation[8] * p[2] + t.translation[2];
                *lowest = fminf(*lowest, z);
            }
        }
    }
    for (uint32_t b = 0; b < n; ++b) final_poses[b] = pose_of(&s, b);
    *count = n;
    free_scene(&s);
}

static void test_avalanche_64_deterministic(void** state)
{
    (void)state;
    rtcd_transform first[64], second[64];
    uint32_t n1, n2;
    float low1, low2;
    run_avalanche(first, &n1, &low1);
    run_avalanche(second, &n2, &low2);
    print_message("64-object avalanche: lowest vertex %.4f m\n", low1);
    assert_int_equal(n1, 64);
    assert_int_equal(n2, 64);
    assert_true(low1 > -0.05f); /* nothing sinks below the plane beyond tolerance */
    assert_memory_equal(first, second, sizeof first); /* bit-identical */
}

static void test_bad_input(void** state)
{
    (void)state;
    rtcd_world* w = NULL;
    rtcd_world_def def = rtcd_default_world_def();
    def.time_step = 0.0f;
    assert_int_equal(rtcd_world_create(&def, &w), RTCD_ERROR_INVALID_ARGUMENT);
    assert_null(w);
    scene s = make_scene(RTCD_NARROWPHASE_RTCD, 1);
    rtcd_transform bad = rtcd_transform_identity();
    bad.translation[0] = NAN;
    assert_int_equal(rtcd_world_add_body(s.world, s.shape, 1.0f, &bad, NULL), RTCD_ERROR_INVALID_ARGUMENT);
    rtcd_transform ok = rtcd_transform_identity();
    assert_int_equal(rtcd_world_add_body(s.world, s.shape, -1.0f, &ok, NULL), RTCD_ERROR_INVALID_ARGUMENT);
    rtcd_transform out;
    assert_int_equal(rtcd_world_get_pose(s.world, 7, &out), RTCD_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(rtcd_last_error_message(), "out of range"));
    float zero[3] = {0, 0, 0};
    assert_int_equal(rtcd_world_add_plane(s.world, zero, 0.0f), RTCD_ERROR_INVALID_ARGUMENT);
    free_scene(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blob_comes_to_rest),
        cmocka_unit_test(test_stack_of_three),
        cmocka_unit_test(test_deep_overlap_separates),
        cmocka_unit_test(test_avalanche_64_deterministic),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
