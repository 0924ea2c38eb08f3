/* Contact generation modes and the 4-point reduction. */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static rtcd_ray_hit make_ray(uint32_t direction, const float origin[3], const float dir[3], const float normal[3],
                             float length)
{
    rtcd_ray_hit r;
    memset(&r, 0, sizeof r);
    r.direction = direction;
    r.vertex = 17;
    for (int k = 0; k < 3; ++k) {
        r.origin[k] = origin[k];
        r.ray_dir[k] = dir[k];
        r.normal[k] = normal[k];
        r.point[k] = origin[k] + dir[k] * length;
    }
    r.length = length;
    return r;
}

/* A ray at 60 degrees to the hit normal: re-projection gives the normal and
 * length*cos; the raw mode the ray itself; the weighted mode length*cos. */
static void test_modes_analytic(void** state)
{
    (void)state;
    float o[3] = {1, 2, 3}, n[3] = {0, 0, 1};
    float dir[3] = {sinf((float)M_PI / 3), 0, cosf((float)M_PI / 3)};
    rtcd_ray_hit r = make_ray(0, o, dir, n, 0.2f);
    rtcd_contact c = rtcd_contact_from_ray(&r, RTCD_CONTACT_REPROJECTED);
    assert_float_near(c.depth, 0.1f, 1e-6);
    assert_float_near(c.normal_on_b[2], 1.0f, 1e-6);
    assert_float_near(c.point_on_b[2], 3.1f, 1e-6); /* the vertex lifted onto the hit plane */
    assert_float_near(c.point_on_b[0], 1.0f, 1e-6);
    assert_int_equal(c.feature, 17u);
    c = rtcd_contact_from_ray(&r, RTCD_CONTACT_RAY);
    assert_float_near(c.depth, 0.2f, 1e-6);
    assert_float_near(c.normal_on_b[0], dir[0], 1e-6);
    for (int k = 0; k < 3; ++k) assert_float_near(c.point_on_b[k], r.point[k], 1e-6); /* the hit point */
    c = rtcd_contact_from_ray(&r, RTCD_CONTACT_RAY_WEIGHTED);
    assert_float_near(c.depth, 0.1f, 1e-6);
    /* Direction 1 (B's vertex in A): the point stays on B, the normal flips. */
    r.direction = 1;
    c = rtcd_contact_from_ray(&r, RTCD_CONTACT_REPROJECTED);
    assert_float_near(c.normal_on_b[2], -1.0f, 1e-6);
    for (int k = 0; k < 3; ++k) assert_float_near(c.point_on_b[k], o[k], 1e-6);
    assert_int_equal(c.feature, (1u << 31) | 17u);
}

static float quad_hull_area(const rtcd_contact* c, uint32_t n)
{
    /* Points lie in z = 0 here: shoelace over the hull, brute force by angle sort. */
    float cx = 0, cy = 0;
    for (uint32_t i = 0; i < n; ++i) cx += c[i].point_on_b[0] / n, cy += c[i].point_on_b[1] / n;
    uint32_t order[4] = {0, 1, 2, 3};
    for (uint32_t i = 0; i < n; ++i)
        for (uint32_t j = i + 1; j < n; ++j) {
            float ai = atan2f(c[order[i]].point_on_b[1] - cy, c[order[i]].point_on_b[0] - cx);
            float aj = atan2f(c[order[j]].point_on_b[1] - cy, c[order[j]].point_on_b[0] - cx);
            if (aj < ai) {
                uint32_t t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
        }
    float area = 0;
    for (uint32_t i = 0; i < n; ++i) {
        const float* p = c[order[i]].point_on_b;
        const float* q = c[order[(i + 1) % n]].point_on_b;
        area += 0.5f * (p[0] * q[1] - q[0] * p[1]);
    }
    return fabsf(area);
}

static void random_patch(test_rng* rng, rtcd_contact* c, uint32_t n)
{
    for (uint32_t i = 0; i < n; ++i) {
        memset(&c[i], 0, sizeof c[i]);
        c[i].point_on_b[0] = (float)test_rng_range(rng, -1, 1);
        c[i].point_on_b[1] = (float)test_rng_range(rng, -1, 1);
        c[i].normal_on_b[2] = 1.0f;
        c[i].depth = (float)test_rng_range(rng, 0.0, 0.1);
        c[i].feature = (uint32_t)(test_rng_next(rng) & 0xffffff) * 8 + i; /* distinct */
    }
}

/* Deepest kept, order-independent, and an area close to the best 4-subset
 * that contains the deepest point (brute force). */
static void test_reduction_properties(void** state)
{
    (void)state;
    test_rng rng = {3};
    double ratio_sum = 0;
    const int trials = 200;
    for (int trial = 0; trial < trials; ++trial) {
        enum { N = 24 };
        rtcd_contact c[N], shuffled[N], out[4], out2[4];
        random_patch(&rng, c, N);
        uint32_t n = rtcd_reduce_contacts(c, N, out);
        assert_int_equal(n, 4);
        float max_depth = 0;
        for (int i = 0; i < N; ++i) max_depth = fmaxf(max_depth, c[i].depth);
        assert_true(out[0].depth >= 0.99f * max_depth);
        memcpy(shuffled, c, sizeof c);
        for (int i = N - 1; i > 0; --i) {
            int j = (int)(test_rng_next(&rng) % (uint64_t)(i + 1));
            rtcd_contact t = shuffled[i];
            shuffled[i] = shuffled[j];
            shuffled[j] = t;
        }
        assert_int_equal(rtcd_reduce_contacts(shuffled, N, out2), 4);
        for (int k = 0; k < 4; ++k) assert_int_equal(out[k].feature, out2[k].feature);
        uint32_t d = 0;
        for (uint32_t i = 0; i < N; ++i)
            if (c[i].feature == out[0].feature) d = i;
        float best = 0;
        for (int i = 0; i < N; ++i)
            for (int j = i + 1; j < N; ++j)
                for (int k = j + 1; k < N; ++k) {
                    if ((uint32_t)i == d || (uint32_t)j == d || (uint32_t)k == d) continue;
                    rtcd_contact q[4] = {c[d], c[i], c[j], c[k]};
                    best = fmaxf(best, quad_hull_area(q, 4));
                }
        float got = quad_hull_area(out, 4);
        assert_true(got >= 0.6f * best);
        ratio_sum += got / best;
    }
    print_message("mean area ratio to brute-force best: %.3f\n", ratio_sum / trials);
    assert_true(ratio_sum / trials > 0.85);
}

/* A box resting on a plane: equal depths up to rounding. Noise far below the
 * tie band must not change which four points are kept. */
static void test_resting_patch_is_stable(void** state)
{
    (void)state;
    enum { G = 6, N = G * G };
    rtcd_contact base[N], noisy[N], ref[4], out[4];
    for (int i = 0; i < N; ++i) {
        memset(&base[i], 0, sizeof base[i]);
        base[i].point_on_b[0] = (float)(i % G) * 0.1f;
        base[i].point_on_b[1] = (float)(i / G) * 0.1f;
        base[i].normal_on_b[2] = 1;
        base[i].depth = 0.01f;
        base[i].feature = 100 + (uint32_t)i;
    }
    assert_int_equal(rtcd_reduce_contacts(base, N, ref), 4);
    test_rng rng = {77};
    for (int trial = 0; trial < 500; ++trial) {
        for (int i = 0; i < N; ++i) {
            noisy[i] = base[i];
            noisy[i].depth += (float)test_rng_range(&rng, -1e-6, 1e-6);
            for (int k = 0; k < 2; ++k) noisy[i].point_on_b[k] += (float)test_rng_range(&rng, -1e-6, 1e-6);
        }
        assert_int_equal(rtcd_reduce_contacts(noisy, N, out), 4);
        for (int k = 0; k < 4; ++k) assert_int_equal(out[k].feature, ref[k].feature);
    }
    /* The four kept points are the patch's corners: the largest area there is. */
    assert_float_near(quad_hull_area(ref, 4), 0.25f, 1e-5);
}

static void test_small_inputs(void** state)
{
    (void)state;
    rtcd_contact c[3], out[4];
    test_rng rng = {1};
    random_patch(&rng, c, 3);
    assert_int_equal(rtcd_reduce_contacts(c, 3, out), 3);
    int seen = 0;
    for (int k = 0; k < 3; ++k)
        for (int i = 0; i < 3; ++i) seen += out[k].feature == c[i].feature;
    assert_int_equal(seen, 3);
    assert_int_equal(rtcd_reduce_contacts(c, 0, out), 0);
    assert_int_equal(rtcd_reduce_contacts(NULL, 3, out), 0);
}

/* rtcd_collide_plane against every vertex tested one by one (its cluster
 * culling must lose nothing), both A/B orders, random poses cutting the
 * plane at many depths. */
static void test_plane_matches_brute_force(void** state)
{
    (void)state;
    rtcd_mesh* m = test_make_blob(RTCD_AVALANCHE_BLOB_VERTICES, 0.5f, 3);
    const float* v = rtcd_mesh_vertices(m);
    uint32_t nv = rtcd_mesh_vertex_count(m);
    rtcd_contact* all = calloc(nv, sizeof *all);
    assert_non_null(all);
    test_rng rng = {11};
    uint32_t touching = 0;
    for (int trial = 0; trial < 400; ++trial) {
        rtcd_transform pose = test_random_pose(&rng, 0.3f);
        float plane[4];
        test_rng_unit_vector(&rng, plane);
        plane[3] = (float)test_rng_range(&rng, -0.6, 0.6);
        int plane_is_a = trial & 1;
        /* Half the trials with a speculative reach: vertices that close above the plane count too. */
        float reach = trial & 2 ? 0.05f : 0.0f;
        uint32_t n = 0;
        for (uint32_t i = 0; i < nv; ++i) {
            double p[3], dist = -plane[3];
            for (int r = 0; r < 3; ++r) {
                p[r] = pose.translation[r];
                for (int c = 0; c < 3; ++c) p[r] += (double)pose.rotation[3 * r + c] * v[3 * i + c];
                dist += plane[r] * p[r];
            }
            if (dist >= 0.0 && dist >= reach) continue;
            rtcd_contact* c = &all[n++];
            c->depth = (float)-dist;
            c->feature = i;
            for (int r = 0; r < 3; ++r) {
                c->normal_on_b[r] = plane_is_a ? -plane[r] : plane[r];
                c->point_on_b[r] = (float)(plane_is_a ? p[r] : p[r] - plane[r] * dist);
            }
        }
        rtcd_contact want[RTCD_MAX_MANIFOLD_POINTS], got[RTCD_MAX_MANIFOLD_POINTS];
        uint32_t nw = rtcd_reduce_contacts(all, n, want), ng = 99;
        assert_int_equal(rtcd_collide_plane(m, &pose, plane, plane_is_a, reach, 0.0f, got, &ng), RTCD_OK);
        assert_int_equal(ng, nw);
        for (uint32_t k = 0; k < ng; ++k) {
            /* The same vertices; the arithmetic differs (float against double) by rounding only. */
            assert_int_equal(got[k].feature, want[k].feature);
            assert_float_near(got[k].depth, want[k].depth, 1e-5);
            for (int r = 0; r < 3; ++r) {
                assert_float_near(got[k].point_on_b[r], want[k].point_on_b[r], 1e-5);
                assert_float_near(got[k].normal_on_b[r], want[k].normal_on_b[r], 0.0);
            }
        }
        touching += n > 0 && n < nv;
    }
    assert_true(touching > 100); /* not vacuous: many poses cut the plane */
    /* Bad input. */
    rtcd_transform bad = rtcd_transform_identity();
    bad.translation[1] = NAN;
    float up[4] = {0, 0, 1, 0};
    rtcd_contact out[RTCD_MAX_MANIFOLD_POINTS];
    uint32_t count = 7;
    assert_int_equal(rtcd_collide_plane(m, &bad, up, 0, 0.0f, 0.0f, out, &count), RTCD_ERROR_INVALID_ARGUMENT);
    assert_int_equal(count, 0);
    assert_int_equal(rtcd_collide_plane(NULL, &bad, up, 0, 0.0f, 0.0f, out, &count), RTCD_ERROR_INVALID_ARGUMENT);
    free(all);
    rtcd_mesh_release(m);
}

/* rtcd_collide_plane culls vertices in the mesh's frame before its own
 * test: the cull must lose no vertex the world-frame test keeps, even at
 * the reach's edge and far from the origin, where the two frames round
 * differently. The reference is that test in the same float arithmetic
 * (plane_vertex_contact's order, no FMA contraction in this build), so the
 * contacts must match bit for bit. The plane is placed so that a chosen
 * vertex, the lowest, lies at the reach, give or take a rounding. */
static void test_plane_cull_exact_at_the_edge(void** state)
{
    (void)state;
    rtcd_mesh* m = test_make_blob(RTCD_AVALANCHE_BLOB_VERTICES, 0.5f, 5);
    const float* v = rtcd_mesh_vertices(m);
    uint32_t nv = rtcd_mesh_vertex_count(m);
    rtcd_contact* all = calloc(nv, sizeof *all);
    assert_non_null(all);
    test_rng rng = {23};
    uint32_t edge_kept = 0, edge_dropped = 0;
    for (int trial = 0; trial < 600; ++trial) {
        rtcd_transform pose = test_random_pose(&rng, trial % 3 == 0 ? 1000.0f : trial % 3 == 1 ? 30.0f : 0.5f);
        float plane[4];
        test_rng_unit_vector(&rng, plane);
        float reach = trial & 1 ? 0.005f : 0.0f;
        int plane_is_a = (trial >> 1) & 1;
        /* The world frame's arithmetic, as plane_vertex_contact does it. */
        float (*world)[3] = malloc(nv * sizeof *world);
        assert_non_null(world);
        for (uint32_t i = 0; i < nv; ++i)
            for (int r = 0; r < 3; ++r)
                world[i][r] = (pose.rotation[3 * r] * v[3 * i] + pose.rotation[3 * r + 1] * v[3 * i + 1] +
                               pose.rotation[3 * r + 2] * v[3 * i + 2]) + pose.translation[r];
        /* The lowest vertex: the plane's first contact, so never reduced away. */
        uint32_t at = 0;
        float h = 3.0e38f;
        for (uint32_t i = 0; i < nv; ++i) {
            float hi = plane[0] * world[i][0] + plane[1] * world[i][1] + plane[2] * world[i][2];
            if (hi < h) {
                h = hi;
                at = i;
            }
        }
        plane[3] = h - reach;
        uint32_t n = 0;
        for (uint32_t i = 0; i < nv; ++i) {
            const float* p = world[i];
            float dist = plane[0] * p[0] + plane[1] * p[1] + plane[2] * p[2] - plane[3];
            if (i == at && reach > 0.0f) {
                edge_kept += dist < reach;
                edge_dropped += !(dist < reach);
            }
            if (!(dist < reach) && !(dist < 0.0f)) continue;
            rtcd_contact* c = &all[n++];
            memset(c, 0, sizeof *c);
            c->depth = -dist;
            c->feature = i;
            for (int r = 0; r < 3; ++r) {
                c->normal_on_b[r] = plane_is_a ? -plane[r] : plane[r];
                c->point_on_b[r] = plane_is_a ? p[r] : p[r] - plane[r] * dist;
            }
        }
        free(world);
        rtcd_contact want[RTCD_MAX_MANIFOLD_POINTS], got[RTCD_MAX_MANIFOLD_POINTS];
        uint32_t nw = rtcd_reduce_contacts(all, n, want), ng = 99;
        assert_int_equal(rtcd_collide_plane(m, &pose, plane, plane_is_a, reach, 0.0f, got, &ng), RTCD_OK);
        assert_int_equal(ng, nw);
        for (uint32_t k = 0; k < ng; ++k) {
            assert_int_equal(got[k].feature, want[k].feature);
            assert_true(got[k].depth == want[k].depth);
            for (int r = 0; r < 3; ++r) {
                assert_true(got[k].point_on_b[r] == want[k].point_on_b[r]);
                assert_true(got[k].normal_on_b[r] == want[k].normal_on_b[r]);
            }
        }
    }
    /* Not vacuous: the edge vertex fell on both sides of the test. */
    assert_true(edge_kept > 20);
    assert_true(edge_dropped > 20);
    free(all);
    rtcd_mesh_release(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_modes_analytic),
        cmocka_unit_test(test_plane_cull_exact_at_the_edge),
        cmocka_unit_test(test_reduction_properties),
        cmocka_unit_test(test_resting_patch_is_stable),
        cmocka_unit_test(test_small_inputs),
        cmocka_unit_test(test_plane_matches_brute_force),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
