/* The standard narrow phase against analytic cases, symmetry, culling and the
 * papers' known failure cases. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct pair_result {
    rtcd_ray_hit* rays;
    uint32_t count;
    rtcd_narrowphase_stats stats;
} pair_result;

static pair_result collide(const rtcd_narrowphase_def* def, const rtcd_mesh* a, const rtcd_transform* pa,
                           const rtcd_mesh* b, const rtcd_transform* pb)
{
    pair_result r;
    uint32_t cap = rtcd_mesh_vertex_count(a) + rtcd_mesh_vertex_count(b);
    r.rays = calloc(cap, sizeof *r.rays);
    assert_non_null(r.rays);
    assert_int_equal(rtcd_collide_standard(def, a, pa, b, pb, r.rays, cap, &r.count, &r.stats), RTCD_OK);
    return r;
}

static rtcd_transform translated(float x, float y, float z)
{
    rtcd_transform t = rtcd_transform_identity();
    t.translation[0] = x, t.translation[1] = y, t.translation[2] = z;
    return t;
}

static double angle_deg(const float a[3], const float b[3])
{
    double d = (a[0] * b[0] + a[1] * b[1] + a[2] * b[2]) /
               (sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]) * sqrt(b[0] * b[0] + b[1] * b[1] + b[2] * b[2]));
    return acos(fmax(-1.0, fmin(1.0, d))) * 180.0 / M_PI;
}

/* Depth-weighted mean contact normal over all colliding rays. */
static void mean_normal(const pair_result* r, rtcd_contact_normal mode, float out[3])
{
    out[0] = out[1] = out[2] = 0.0f;
    for (uint32_t i = 0; i < r->count; ++i) {
        rtcd_contact c = rtcd_contact_from_ray(&r->rays[i], mode);
        for (int k = 0; k < 3; ++k) out[k] += c.depth * c.normal_on_b[k];
    }
}

static void test_overlapping_spheres(void** state)
{
    (void)state;
    const float d = 0.1f;
    rtcd_mesh* s = test_make_uv_sphere(40, 80, 1.0f);
    rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
    /* Along the poles: A's north pole vertex looks straight at B's south pole. */
    rtcd_transform pa = translated(0, 0, 0), pb = translated(0, 0, 2.0f - d);
    pair_result r = collide(&def, s, &pa, s, &pb);
    assert_true(r.count > 10);
    assert_int_equal(r.stats.culled, 0);
    /* Tessellation tolerance: faces near a pole tilt by up to half a ring step. */
    double ring_step = M_PI / 41.0;
    float axis[3] = {0, 0, -1}; /* from B to A */
    float deepest = 0.0f;
    for (uint32_t i = 0; i < r.count; ++i) {
        rtcd_contact c = rtcd_contact_from_ray(&r.rays[i], RTCD_CONTACT_REPROJECTED);
        deepest = fmaxf(deepest, c.depth);
        /* Every normal lies inside the lens: its rim is at acos(1 - d/2) from the axis. */
        assert_true(angle_deg(c.normal_on_b, axis) <= acos(1.0 - d / 2.0) * 180.0 / M_PI + 1.5 * ring_step * 180.0 / M_PI);
        assert_true(c.depth > 0.0f && c.depth <= d * 1.001f);
    }
    assert_true(deepest >= d * cos(ring_step) - 1e-4);
    rtcd_contact reduced[4];
    rtcd_contact all[8192];
    for (uint32_t i = 0; i < r.count; ++i) all[i] = rtcd_contact_from_ray(&r.rays[i], RTCD_CONTACT_REPROJECTED);
    uint32_t n = rtcd_reduce_contacts(all, r.count, reduced);
    assert_int_equal(n, 4);
    assert_true(angle_deg(reduced[0].normal_on_b, axis) < ring_step * 180.0 / M_PI); /* the deepest is central */
    float mn[3];
    mean_normal(&r, RTCD_CONTACT_REPROJECTED, mn);
    assert_true(angle_deg(mn, axis) < 2.0); /* symmetric: tangential parts cancel */
    free(r.rays);

    /* Separated by 0.05 along a diagonal (the boxes overlap): nothing, whether culled or not. */
    pb = translated(2.05f / sqrtf(2.0f), 2.05f / sqrtf(2.0f), 0.0f);
    r = collide(&def, s, &pa, s, &pb);
    assert_int_equal(r.count, 0);
    free(r.rays);
    def.cull_separated = 0;
    r = collide(&def, s, &pa, s, &pb);
    assert_int_equal(r.count, 0);
    assert_true(r.stats.candidate_vertices > 0); /* vertices near the other surface: rays were really cast */
    free(r.rays);
    rtcd_mesh_release(s);
}

/* Two finely tessellated spheres 2 mm apart: hundreds of vertices sit in the
 * other's surface cells, so the exact separation test runs, and culls. */
static void test_separation_test_culls_near_miss(void** state)
{
    (void)state;
    rtcd_mesh* slab = test_make_uv_sphere(80, 160, 1.0f);
    rtcd_transform pa = translated(0, 0, 0), pb = translated(1.4156f, 1.4156f, 0.0f); /* centres 2.002 apart */
    rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
    pair_result culled = collide(&def, slab, &pa, slab, &pb);
    def.cull_separated = 0;
    pair_result cast = collide(&def, slab, &pa, slab, &pb);
    print_message("near miss: %u candidates without the test\n", cast.stats.candidate_vertices);
    assert_true(cast.stats.candidate_vertices > 128);
    assert_int_equal(cast.count, 0);
    assert_int_equal(culled.stats.culled, 1);
    assert_int_equal(culled.stats.rays_cast, 0);
    assert_int_equal(culled.count, 0);
    free(culled.rays);
    free(cast.rays);
    /* Overlapping by 10 mm: not culled, and contacts found. */
    pb = translated(1.4071f, 1.4071f, 0.0f);
    def.cull_separated = 1;
    pair_result touching = collide(&def, slab, &pa, slab, &pb);
    assert_int_equal(touching.stats.culled, 0);
    assert_true(touching.count > 0);
    free(touching.rays);
    rtcd_mesh_release(slab);
}

static void test_sphere_pressed_into_box_face(void** state)
{
    (void)state;
    const float d = 0.05f, radius = 0.5f;
    rtcd_mesh* sphere = test_make_uv_sphere(30, 60, radius);
    rtcd_mesh* box = test_make_box(2.0f, 2.0f, 0.5f, 24);
    rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
    rtcd_transform pa = translated(0.013f, -0.021f, 0.5f + radius - d), pb = translated(0, 0, 0);
    pair_result r = collide(&def, sphere, &pa, box, &pb);
    float up[3] = {0, 0, 1};
    float deepest = 0.0f;
    uint32_t from_sphere = 0;
    for (uint32_t i = 0; i < r.count; ++i) {
        rtcd_contact c = rtcd_contact_from_ray(&r.rays[i], RTCD_CONTACT_REPROJECTED);
        if (r.rays[i].direction == 0) { /* sphere vertex below the face: face normal, exact depth */
            ++from_sphere;
            assert_true(angle_deg(c.normal_on_b, up) < 1e-3);
            float below = 0.5f - r.rays[i].origin[2];
            assert_float_near(c.depth, below, 1e-5);
            assert_float_near(c.point_on_b[2], 0.5f, 1e-5);
            deepest = fmaxf(deepest, c.depth);
        }
    }
    assert_true(from_sphere > 0);
    assert_float_near(deepest, d, 1e-4); /* the south pole is a vertex exactly d deep */
    float mn[3];
    mean_normal(&r, RTCD_CONTACT_REPROJECTED, mn);
    assert_true(angle_deg(mn, up) < 3.0);
    free(r.rays);
    rtcd_mesh_release(sphere);
    rtcd_mesh_release(box);
}

static rtcd_transform compose(const rtcd_transform* a, const rtcd_transform* b) /* a * b */
{
    rtcd_transform out;
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j)
            out.rotation[3 * i + j] = a->rotation[3 * i] * b->rotation[j] + a->rotation[3 * i + 1] * b->rotation[3 + j] +
                                      a->rotation[3 * i + 2] * b->rotation[6 + j];
        out.translation[i] = a->rotation[3 * i] * b->translation[0] + a->rotation[3 * i + 1] * b->translation[1] +
                             a->rotation[3 * i + 2] * b->translation[2] + a->translation[i];
    }
    return out;
}

static void test_rotated_cubes(void** state)
{
    (void)state;
    const float d = 0.04f;
    rtcd_mesh* a = test_make_box(0.5f, 0.5f, 0.5f, 4);
    rtcd_mesh* b = test_make_box(0.5f, 0.5f, 0.4f, 4);
    float q45[4] = {0, 0, sinf((float)M_PI / 8), cosf((float)M_PI / 8)};
    /* y offset: keeps A's face vertices out of B's wedge, so only B's edge collides */
    float tb[3] = {0.5f + 0.5f * sqrtf(2.0f) - d, 0.1f, 0.0f};
    rtcd_transform pa0 = rtcd_transform_identity(), pb0 = rtcd_transform_from_quat(q45, tb);
    test_rng rng = {99};
    for (int trial = 0; trial < 8; ++trial) {
        /* The same configuration seen from 8 random world frames. */
        rtcd_transform world = trial ? test_random_pose(&rng, 3.0f) : rtcd_transform_identity();
        rtcd_transform pa = compose(&world, &pa0), pb = compose(&world, &pb0);
        rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
        pair_result r = collide(&def, a, &pa, b, &pb);
        assert_true(r.count >= 5); /* the vertices along B's leading edge */
        float minus_x[3] = {-world.rotation[0], -world.rotation[3], -world.rotation[6]};
        for (uint32_t i = 0; i < r.count; ++i) {
            rtcd_contact c = rtcd_contact_from_ray(&r.rays[i], RTCD_CONTACT_REPROJECTED);
            assert_int_equal(r.rays[i].direction, 1);
            assert_true(angle_deg(c.normal_on_b, minus_x) < 0.01);
            assert_float_near(c.depth, d, 2e-4);
        }
        free(r.rays);
    }
    rtcd_mesh_release(a);
    rtcd_mesh_release(b);
}

/* Swapping A and B mirrors the result: same rays with the direction flipped,
 * contacts with negated normals and the point moved to the other body. */
static void test_swap_mirrors(void** state)
{
    (void)state;
    rtcd_mesh* a = test_make_blob(RTCD_AVALANCHE_BLOB_VERTICES, 1.0f, 3);
    rtcd_mesh* b = test_make_blob(rtcd_spawner_mesh_vertices(1), 1.0f, 5);
    test_rng rng = {7};
    rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
    uint32_t total = 0;
    for (int trial = 0; trial < 40; ++trial) {
        rtcd_transform pa = test_random_pose(&rng, 0.8f), pb = test_random_pose(&rng, 0.8f);
        pair_result ab = collide(&def, a, &pa, b, &pb);
        pair_result ba = collide(&def, b, &pb, a, &pa);
        assert_int_equal(ab.count, ba.count);
        uint32_t n0 = 0;
        while (n0 < ab.count && ab.rays[n0].direction == 0) ++n0;
        for (uint32_t i = 0; i < ab.count; ++i) {
            /* (direction, vertex) order: A's rays first in ab are last in ba. */
            const rtcd_ray_hit* x = &ab.rays[i];
            const rtcd_ray_hit* y = &ba.rays[i < n0 ? ab.count - n0 + i : i - n0];
            assert_int_equal(x->direction, 1 - y->direction);
            assert_int_equal(x->vertex, y->vertex);
            assert_int_equal(x->triangle, y->triangle);
            assert_float_near(x->length, y->length, 1e-5);
            rtcd_contact cx = rtcd_contact_from_ray(x, RTCD_CONTACT_REPROJECTED);
            rtcd_contact cy = rtcd_contact_from_ray(y, RTCD_CONTACT_REPROJECTED);
            assert_float_near(cx.depth, cy.depth, 1e-5);
            for (int k = 0; k < 3; ++k) {
                assert_float_near(cx.normal_on_b[k], -cy.normal_on_b[k], 1e-5);
                /* point on A of one = point on B of the other */
                assert_float_near(cx.point_on_b[k] - cx.normal_on_b[k] * cx.depth, cy.point_on_b[k], 1e-4);
            }
        }
        total += ab.count;
        free(ab.rays);
        free(ba.rays);
    }
    assert_true(total > 100);
    rtcd_mesh_release(a);
    rtcd_mesh_release(b);
}

/* Culling and traversal never change the answer: random close pairs, all
 * four combinations give the same rays. */
static void test_culling_and_traversal_do_not_change_results(void** state)
{
    (void)state;
    rtcd_mesh* a = test_make_blob(RTCD_AVALANCHE_BLOB_VERTICES, 1.0f, 21);
    rtcd_mesh* b = test_make_blob(RTCD_AVALANCHE_BLOB_VERTICES, 1.0f, 22);
    test_rng rng = {5};
    uint32_t culled = 0, colliding_pairs = 0;
    const int trials = 150;
    for (int trial = 0; trial < trials; ++trial) {
        rtcd_transform pa = test_random_pose(&rng, 1.6f), pb = test_random_pose(&rng, 1.6f);
        pair_result ref;
        memset(&ref, 0, sizeof ref);
        for (int variant = 0; variant < 4; ++variant) {
            rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
            def.cull_separated = variant & 1;
            def.traversal = (variant & 2) ? RTCD_TRAVERSAL_BRUTE_FORCE : RTCD_TRAVERSAL_BVH;
            pair_result r = collide(&def, a, &pa, b, &pb);
            if (variant == 0) {
                ref = r;
                colliding_pairs += r.count > 0;
                continue;
            }
            culled += r.stats.culled;
            assert_int_equal(r.count, ref.count);
            for (uint32_t i = 0; i < r.count; ++i) {
                assert_int_equal(r.rays[i].vertex, ref.rays[i].vertex);
                assert_int_equal(r.rays[i].triangle, ref.rays[i].triangle);
                assert_float_near(r.rays[i].length, ref.rays[i].length, 1e-5);
            }
            free(r.rays);
        }
        free(ref.rays);
    }
    fprintf(stderr, "%d pairs: %u with contacts, %u culled runs\n", trials, colliding_pairs, culled);
    assert_true(colliding_pairs > 10 && colliding_pairs < (uint32_t)trials); /* both kinds present */
    assert_true(culled > 0);
    rtcd_mesh_release(a);
    rtcd_mesh_release(b);
}

/* Hermann et al. Figure 9: every inward ray crosses its own body first. A thin
 * plate (corners only) pushed deep into a thick box: each corner inside the
 * box casts a ray that leaves the plate through its own face before it can
 * leave the box, so the standard algorithm has no ray; the deep contacts
 * (deep_contacts, on by default) give the pair contacts without one
 * (tests/test_contact_quality.c checks their directions and the world). */
static void test_figure9_thin_plate(void** state)
{
    (void)state;
    rtcd_mesh* plate = test_make_box(1.0f, 1.0f, 0.05f, 1);
    rtcd_mesh* block = test_make_box(2.0f, 2.0f, 2.0f, 1);
    rtcd_transform pa = translated(-2.0f - 1.0f + 0.5f, 0.0f, 0.0f), pb = translated(0, 0, 0); /* 0.5 deep */
    rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
    def.deep_contacts = def.edge_crossings = 0; /* the papers' algorithm */
    pair_result r = collide(&def, plate, &pa, block, &pb);
    float corner[3] = {-2.0f + 0.5f, 1.0f, 0.05f}; /* a plate corner, in the block's frame */
    assert_int_equal(rtcd_mesh_contains_point(block, corner), 1); /* really interpenetrating */
    assert_int_equal(r.stats.candidate_vertices, 4);
    assert_int_equal(r.count, 0); /* the papers' algorithm: missed */
    assert_int_equal(r.stats.crossing_contacts, 0);
    free(r.rays);
    def.deep_contacts = 1;
    r = collide(&def, plate, &pa, block, &pb);
    assert_int_equal(r.count, 0);                     /* still no Hermann ray... */
    assert_int_equal(r.stats.crossing_contacts, 4);   /* ...but each corner inside has a deep contact */
    free(r.rays);
    def.edge_crossings = 1;
    r = collide(&def, plate, &pa, block, &pb);
    assert_true(r.stats.crossing_contacts >= 4);      /* and the plate's edges through the block's face */
    free(r.rays);
    rtcd_mesh_release(plate);
    rtcd_mesh_release(block);
}

/* One mesh entirely inside another: no surfaces cross, the containment test
 * keeps the pair, but every ray of the inner mesh hits itself first: no
 * Hermann ray; every inner vertex gets a deep contact. */
static void test_contained(void** state)
{
    (void)state;
    rtcd_mesh* small = test_make_uv_sphere(8, 16, 0.3f);
    rtcd_mesh* big = test_make_uv_sphere(16, 32, 2.0f);
    rtcd_transform pa = translated(0.2f, 0.1f, -0.3f), pb = translated(0, 0, 0);
    rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
    def.deep_contacts = 0;
    pair_result r = collide(&def, small, &pa, big, &pb);
    assert_int_equal(r.stats.culled, 0);          /* containment is not culled away */
    assert_true(r.stats.candidate_vertices > 0);
    assert_int_equal(r.count, 0);                 /* the papers' algorithm: no contact */
    assert_int_equal(r.stats.crossing_contacts, 0);
    free(r.rays);
    def.deep_contacts = 1;
    r = collide(&def, small, &pa, big, &pb);
    assert_int_equal(r.count, 0);
    assert_int_equal(r.stats.crossing_contacts, rtcd_mesh_vertex_count(small));
    free(r.rays);
    rtcd_mesh_release(small);
    rtcd_mesh_release(big);
}

static void test_bad_arguments(void** state)
{
    (void)state;
    rtcd_mesh* s = test_make_uv_sphere(4, 17, 1.0f);
    rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
    rtcd_transform p = rtcd_transform_identity(), bad = rtcd_transform_identity();
    bad.translation[1] = NAN;
    rtcd_ray_hit rays[200];
    uint32_t n = 7;
    assert_int_equal(rtcd_collide_standard(&def, s, &p, s, &p, rays, 10, &n, NULL), RTCD_ERROR_BUFFER_TOO_SMALL);
    assert_int_equal(n, 0);
    assert_int_equal(rtcd_collide_standard(&def, s, &p, s, &bad, rays, 200, &n, NULL), RTCD_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(rtcd_last_error_message(), "not finite"));
    assert_int_equal(rtcd_collide_standard(&def, NULL, &p, s, &p, rays, 200, &n, NULL), RTCD_ERROR_INVALID_ARGUMENT);
    rtcd_mesh_release(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_overlapping_spheres),
        cmocka_unit_test(test_separation_test_culls_near_miss),
        cmocka_unit_test(test_sphere_pressed_into_box_face),
        cmocka_unit_test(test_rotated_cubes),
        cmocka_unit_test(test_swap_mirrors),
        cmocka_unit_test(test_culling_and_traversal_do_not_change_results),
        cmocka_unit_test(test_figure9_thin_plate),
        cmocka_unit_test(test_contained),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
