/* Coincident and nested bodies (issue 12, finding 8). Bodies created at one
 * pose have every vertex on each other's surfaces, where every ray ties:
 * the narrow phase found nothing, the bodies never parted, and the
 * penetration ruler took minutes to report 0. Now the deep vertices of a
 * pair whose box centres coincide leave along a fixed axis (A along +z, B
 * along -z; core/shared/crossing.h), at most RTCD_COINCIDENT_SAMPLES of them
 * a direction, and the ruler counts such pairs as penetrating as deep as
 * their boxes are into each other. */
#include "test_util.h"

#include <rtcd/rtcd_world.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct pile {
    rtcd_world* world;
    rtcd_mesh* mesh;
    rtcd_shape* shape;
} pile;

/* `count` blobs of radius 0.5 at one pose, 2 m above a plane. */
static pile make_pile(uint32_t count)
{
    pile p;
    rtcd_world_def d = rtcd_default_world_def();
    d.narrowphase.backend = RTCD_BACKEND_CPU;
    d.narrowphase.threads = 1;
    assert_int_equal(rtcd_world_create(&d, &p.world), RTCD_OK);
    const float up[3] = {0.0f, 0.0f, 1.0f};
    assert_int_equal(rtcd_world_add_plane(p.world, up, 0.0f), RTCD_OK);
    p.mesh = test_make_blob(RTCD_AVALANCHE_BLOB_VERTICES, 0.5f, 3);
    assert_int_equal(rtcd_shape_create(p.world, p.mesh, &p.shape), RTCD_OK);
    rtcd_transform pose = rtcd_transform_identity();
    pose.translation[2] = 2.0f;
    for (uint32_t i = 0; i < count; ++i) assert_int_equal(rtcd_world_add_body(p.world, p.shape, 1.0f, &pose, NULL), RTCD_OK);
    return p;
}

static void free_pile(pile* p)
{
    rtcd_shape_release(p->shape);
    rtcd_mesh_release(p->mesh);
    rtcd_world_release(p->world);
}

/* Smallest distance between two body centres. */
static float closest_centres(rtcd_world* w)
{
    uint32_t n = rtcd_world_body_count(w);
    float best = INFINITY;
    for (uint32_t i = 0; i < n; ++i)
        for (uint32_t j = i + 1; j < n; ++j) {
            rtcd_transform a, b;
            assert_int_equal(rtcd_world_get_pose(w, i, &a), RTCD_OK);
            assert_int_equal(rtcd_world_get_pose(w, j, &b), RTCD_OK);
            float d2 = 0.0f;
            for (int k = 0; k < 3; ++k) d2 += (a.translation[k] - b.translation[k]) * (a.translation[k] - b.translation[k]);
            best = fminf(best, sqrtf(d2));
        }
    return best;
}

/* The ruler: coincident bodies penetrate about a diameter, every vertex. */
static void test_ruler_counts_coincident_bodies(void** state)
{
    (void)state;
    pile p = make_pile(20);
    rtcd_penetration pen;
    /* As created: the measure pairs them before the first step. */
    assert_int_equal(rtcd_world_measure_penetration(p.world, &pen), RTCD_OK);
    uint32_t pairs = 20 * 19 / 2, v = rtcd_mesh_vertex_count(rtcd_shape_body_mesh(p.shape));
    print_message("20 coincident blobs: max penetration %.3f m, %u vertices inside\n", (double)pen.max,
                  pen.vertices_inside);
    assert_true(pen.max > 0.9f && pen.max < 1.1f); /* the blob's diameter, about 1 m */
    assert_true(pen.vertices_inside >= pairs * 2 * v);
    free_pile(&p);
}

/* Two and 30 blobs at one pose part (they end no closer than 0.8 of a
 * diameter, and the ruler finds at most 5 cm), and the first step's rays
 * stay within two per vertex of each pair. */
static void test_coincident_bodies_part(void** state)
{
    (void)state;
    const uint32_t counts[] = {2, 30};
    for (size_t c = 0; c < sizeof counts / sizeof *counts; ++c) {
        pile p = make_pile(counts[c]);
        assert_int_equal(rtcd_world_step(p.world), RTCD_OK);
        rtcd_step_stats first = rtcd_world_last_step_stats(p.world);
        uint32_t v = rtcd_mesh_vertex_count(rtcd_shape_body_mesh(p.shape));
        uint64_t pairs = (uint64_t)counts[c] * (counts[c] - 1) / 2;
        print_message("%u coincident blobs: first step %llu rays over %llu pairs (%.0f a pair, %u vertices a blob)\n",
                      counts[c], (unsigned long long)first.rays_cast, (unsigned long long)pairs,
                      (double)first.rays_cast / (double)pairs, v);
        assert_true(first.rays_cast <= pairs * 2u * 2u * v);
        for (int i = 1; i < 240; ++i) assert_int_equal(rtcd_world_step(p.world), RTCD_OK);
        rtcd_penetration pen;
        assert_int_equal(rtcd_world_measure_penetration(p.world, &pen), RTCD_OK);
        float closest = closest_centres(p.world);
        print_message("  after 240 steps: closest centres %.3f m, max penetration %.3f m\n", (double)closest,
                      (double)pen.max);
        assert_true(closest > 0.8f);
        assert_true(pen.max < 0.05f);
        free_pile(&p);
    }
}

/* A small blob created at the centre of a large one (nested, different
 * meshes) comes out and rests apart from it. */
static void test_nested_body_comes_out(void** state)
{
    (void)state;
    rtcd_world_def d = rtcd_default_world_def();
    d.narrowphase.backend = RTCD_BACKEND_CPU;
    d.narrowphase.threads = 1;
    rtcd_world* w = NULL;
    assert_int_equal(rtcd_world_create(&d, &w), RTCD_OK);
    const float up[3] = {0.0f, 0.0f, 1.0f};
    assert_int_equal(rtcd_world_add_plane(w, up, 0.0f), RTCD_OK);
    rtcd_mesh* big = test_make_blob(RTCD_AVALANCHE_BLOB_VERTICES, 0.8f, 3);
    rtcd_mesh* small = test_make_blob(RTCD_AVALANCHE_BLOB_VERTICES, 0.25f, 7);
    rtcd_shape *sb = NULL, *ss = NULL;
    assert_int_equal(rtcd_shape_create(w, big, &sb), RTCD_OK);
    assert_int_equal(rtcd_shape_create(w, small, &ss), RTCD_OK);
    rtcd_transform pose = rtcd_transform_identity();
    pose.translation[2] = 0.8f;
    assert_int_equal(rtcd_world_add_body(w, sb, 4.0f, &pose, NULL), RTCD_OK);
    assert_int_equal(rtcd_world_add_body(w, ss, 1.0f, &pose, NULL), RTCD_OK);
    for (int i = 0; i < 300; ++i) assert_int_equal(rtcd_world_step(w), RTCD_OK);
    rtcd_penetration pen;
    assert_int_equal(rtcd_world_measure_penetration(w, &pen), RTCD_OK);
    float closest = closest_centres(w);
    print_message("a 0.25 m blob created inside a 0.8 m one: after 300 steps centres %.3f m apart, max penetration "
                  "%.3f m\n",
                  (double)closest, (double)pen.max);
    assert_true(closest > 0.9f); /* out: radii 0.8 + 0.25, less the blobs' bumps */
    assert_true(pen.max < 0.05f);
    rtcd_shape_release(sb);
    rtcd_shape_release(ss);
    rtcd_mesh_release(big);
    rtcd_mesh_release(small);
    rtcd_world_release(w);
}

/* test_coincident --pile N: the figures in docs/validity.md for N blobs at one pose
 * (the first step's rays and time, the ruler's answer and time, how far
 * apart they end after 240 steps). */
static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int measure_pile(uint32_t count)
{
    pile p = make_pile(count);
    rtcd_penetration pen;
    double t0 = seconds();
    assert_int_equal(rtcd_world_measure_penetration(p.world, &pen), RTCD_OK);
    double t1 = seconds();
    printf("%u blobs at one pose: ruler %.3f m, %u vertices inside, %.3f s\n", count, (double)pen.max,
           pen.vertices_inside, t1 - t0);
    t0 = seconds();
    assert_int_equal(rtcd_world_step(p.world), RTCD_OK);
    t1 = seconds();
    rtcd_step_stats st = rtcd_world_last_step_stats(p.world);
    printf("first step: %.3f s, %llu rays over %u pairs\n", t1 - t0, (unsigned long long)st.rays_cast, st.pairs_owned);
    for (int i = 1; i < 240; ++i) assert_int_equal(rtcd_world_step(p.world), RTCD_OK);
    assert_int_equal(rtcd_world_measure_penetration(p.world, &pen), RTCD_OK);
    printf("after 240 steps: closest centres %.3f m, ruler %.3f m\n", (double)closest_centres(p.world), (double)pen.max);
    free_pile(&p);
    return 0;
}

int main(int argc, char** argv)
{
    if (argc > 2 && !strcmp(argv[1], "--pile")) return measure_pile((uint32_t)atoi(argv[2]));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ruler_counts_coincident_bodies),
        cmocka_unit_test(test_coincident_bodies_part),
        cmocka_unit_test(test_nested_body_comes_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
