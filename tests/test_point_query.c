/* Point queries: the ray-parity inside test against the winding number and
 * analytic shapes, the BVH closest point against brute force. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>

#define BLOB_SEED 7u
#define TORUS_R 1.0f
#define TORUS_r 0.35f

static rtcd_mesh* make_torus(void)
{
    rtcd_generated_mesh g;
    assert_int_equal(rtcd_generate_torus(TORUS_R, TORUS_r, 48, 24, &g), RTCD_OK);
    return test_mesh_from_generated(&g, "torus");
}

static void random_point_near(test_rng* rng, const rtcd_mesh* m, double margin, float p[3])
{
    float lo[3], hi[3];
    rtcd_mesh_bounds(m, lo, hi);
    for (int k = 0; k < 3; ++k) {
        double pad = margin * (hi[k] - lo[k]);
        p[k] = (float)test_rng_range(rng, lo[k] - pad, hi[k] + pad);
    }
}

static double box_signed_distance(const float p[3], const float h[3])
{
    double out2 = 0.0, in = -INFINITY;
    for (int k = 0; k < 3; ++k) {
        double d = fabs((double)p[k]) - h[k];
        if (d > 0.0) out2 += d * d;
        in = fmax(in, d);
    }
    return out2 > 0.0 ? sqrt(out2) : in;
}

/* ---- independent brute-force distance: plane projection, else edges ---- */

static double point_segment_distance(const double p[3], const double a[3], const double b[3])
{
    double ab[3], ap[3], len2 = 0.0, s = 0.0, d2 = 0.0;
    for (int k = 0; k < 3; ++k) {
        ab[k] = b[k] - a[k];
        ap[k] = p[k] - a[k];
        len2 += ab[k] * ab[k];
        s += ap[k] * ab[k];
    }
    s = len2 > 0.0 ? fmin(fmax(s / len2, 0.0), 1.0) : 0.0;
    for (int k = 0; k < 3; ++k) d2 += (ap[k] - s * ab[k]) * (ap[k] - s * ab[k]);
    return sqrt(d2);
}

static double point_triangle_distance_ref(const double p[3], const double v[3][3])
{
    double e1[3], e2[3], n[3], nl = 0.0;
    for (int k = 0; k < 3; ++k) {
        e1[k] = v[1][k] - v[0][k];
        e2[k] = v[2][k] - v[0][k];
    }
    n[0] = e1[1] * e2[2] - e1[2] * e2[1];
    n[1] = e1[2] * e2[0] - e1[0] * e2[2];
    n[2] = e1[0] * e2[1] - e1[1] * e2[0];
    nl = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    double h = ((p[0] - v[0][0]) * n[0] + (p[1] - v[0][1]) * n[1] + (p[2] - v[0][2]) * n[2]) / nl;
    double q[3] = {p[0] - h * n[0] / nl, p[1] - h * n[1] / nl, p[2] - h * n[2] / nl};
    int inside = 1;
    for (int i = 0; i < 3; ++i) {
        const double* a = v[i];
        const double* b = v[(i + 1) % 3];
        double ab[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, aq[3] = {q[0] - a[0], q[1] - a[1], q[2] - a[2]};
        double c[3] = {ab[1] * aq[2] - ab[2] * aq[1], ab[2] * aq[0] - ab[0] * aq[2], ab[0] * aq[1] - ab[1] * aq[0]};
        if (c[0] * n[0] + c[1] * n[1] + c[2] * n[2] < 0.0) inside = 0;
    }
    if (inside) return fabs(h);
    return fmin(fmin(point_segment_distance(p, v[0], v[1]), point_segment_distance(p, v[1], v[2])),
                point_segment_distance(p, v[2], v[0]));
}

static void triangle_corners(const rtcd_mesh* m, uint32_t t, double v[3][3])
{
    const float* verts = rtcd_mesh_vertices(m);
    const uint32_t* idx = rtcd_mesh_indices(m);
    for (int i = 0; i < 3; ++i)
        for (int k = 0; k < 3; ++k) v[i][k] = verts[3 * idx[3 * t + i] + k];
}

static double brute_force_distance(const rtcd_mesh* m, const float pf[3])
{
    double p[3] = {pf[0], pf[1], pf[2]}, best = INFINITY, v[3][3];
    for (uint32_t t = 0; t < rtcd_mesh_triangle_count(m); ++t) {
        triangle_corners(m, t, v);
        best = fmin(best, point_triangle_distance_ref(p, v));
    }
    return best;
}

/* ---- inside test ---- */

static void check_contains_against_winding(rtcd_mesh* m, uint64_t seed, int wanted)
{
    test_rng rng = {seed};
    int tested = 0, skipped = 0, inside = 0;
    while (tested < wanted) {
        float p[3];
        random_point_near(&rng, m, 0.2, p);
        if (rtcd_mesh_closest_point(m, p, NULL, NULL) < 1e-4f) {
            ++skipped;
            continue;
        }
        double w = rtcd_mesh_winding_number(m, p);
        assert_true(fabs(w - round(w)) < 1e-6); /* integral off the surface */
        int c = rtcd_mesh_contains_point(m, p);
        if (c != (w > 0.5)) fprintf(stderr, "%s: (%g %g %g) w=%g c=%d\n", rtcd_mesh_name(m), p[0], p[1], p[2], w, c);
        assert_int_equal(c, w > 0.5);
        inside += c;
        ++tested;
    }
    /* Both answers must be well represented for the comparison to mean much. */
    assert_true(inside > wanted / 20 && inside < wanted - wanted / 20);
    (void)skipped;
}

static void test_winding_number_box(void** state)
{
    (void)state;
    rtcd_mesh* m = test_make_box(0.8f, 0.5f, 0.3f, 3);
    float in[3] = {0.1f, -0.2f, 0.05f}, out[3] = {1.0f, 0.0f, 0.0f}, far_pt[3] = {30.0f, -20.0f, 10.0f};
    assert_float_near(rtcd_mesh_winding_number(m, in), 1.0, 1e-9);
    assert_float_near(rtcd_mesh_winding_number(m, out), 0.0, 1e-9);
    assert_float_near(rtcd_mesh_winding_number(m, far_pt), 0.0, 1e-9);
    rtcd_mesh_release(m);
}

static void test_contains_matches_winding(void** state)
{
    (void)state;
    rtcd_mesh* meshes[4] = {test_make_blob(453, 1.0f, BLOB_SEED), test_make_box(0.8f, 0.5f, 0.3f, 4), make_torus(),
                            test_make_uv_sphere(24, 32, 1.0f)};
    for (int i = 0; i < 4; ++i) {
        check_contains_against_winding(meshes[i], 1000u + (uint64_t)i, 20000);
        rtcd_mesh_release(meshes[i]);
    }
}

static void test_contains_analytic(void** state)
{
    (void)state;
    const float h[3] = {0.8f, 0.5f, 0.3f};
    rtcd_mesh* box = test_make_box(h[0], h[1], h[2], 4);
    rtcd_mesh* torus = make_torus();
    rtcd_mesh* sphere = test_make_uv_sphere(24, 32, 1.0f);
    rtcd_mesh* blob = test_make_blob(453, 1.0f, BLOB_SEED);
    /* The blob is star-shaped around the origin: the ball up to the nearest
     * surface point is inside, beyond the farthest vertex is outside. */
    float origin[3] = {0.0f, 0.0f, 0.0f};
    double blob_in = brute_force_distance(blob, origin), blob_out = 0.0;
    const float* bv = rtcd_mesh_vertices(blob);
    for (uint32_t i = 0; i < rtcd_mesh_vertex_count(blob); ++i)
        blob_out = fmax(blob_out, sqrt(bv[3 * i] * bv[3 * i] + bv[3 * i + 1] * bv[3 * i + 1] + bv[3 * i + 2] * bv[3 * i + 2]));
    assert_true(blob_in > 0.1);
    test_rng rng = {42};
    int checked[4] = {0, 0, 0, 0};
    for (int n = 0; n < 20000; ++n) {
        float p[3];
        for (int k = 0; k < 3; ++k) p[k] = (float)test_rng_range(&rng, -1.6, 1.6);
        double r = sqrt((double)p[0] * p[0] + (double)p[1] * p[1] + (double)p[2] * p[2]);
        double sd = box_signed_distance(p, h);
        if (fabs(sd) > 1e-4) {
            assert_int_equal(rtcd_mesh_contains_point(box, p), sd < 0.0);
            ++checked[0];
        }
        if (r < 0.95 || r > 1.0) {
            assert_int_equal(rtcd_mesh_contains_point(sphere, p), r < 0.95);
            ++checked[1];
        }
        double tube = sqrt(pow(sqrt((double)p[0] * p[0] + (double)p[1] * p[1]) - TORUS_R, 2.0) + (double)p[2] * p[2]);
        if (fabs(tube - TORUS_r) > 0.02) {
            assert_int_equal(rtcd_mesh_contains_point(torus, p), tube < TORUS_r);
            ++checked[2];
        }
        if (r < blob_in - 1e-4 || r > blob_out + 1e-4) {
            assert_int_equal(rtcd_mesh_contains_point(blob, p), r < blob_in);
            ++checked[3];
        }
    }
    for (int i = 0; i < 4; ++i) assert_true(checked[i] > 1000);
    rtcd_mesh_release(box);
    rtcd_mesh_release(torus);
    rtcd_mesh_release(sphere);
    rtcd_mesh_release(blob);
}

/* Copies of the first cast directions in core/query/point_query.c: points placed so
 * that the first ray passes (up to rounding) exactly through a vertex or an
 * edge midpoint exercise the re-cast. If the list changes these points are
 * merely generic, and the test still holds. */
static const float k_first_dirs[2][3] = {{-0.3135514f, -0.9255403f, -0.2122749f}, {0.4956869f, 0.7861791f, 0.3690759f}};

static void check_aimed(rtcd_mesh* m, const float target[3], const float centre[3], const float* box_h)
{
    const double scales[4] = {0.999, 1.001, 0.5, 1.3};
    float pts[4 + 2 * 3][3];
    int n = 0;
    for (int s = 0; s < 4; ++s, ++n) /* on the ray from the centre through the target */
        for (int k = 0; k < 3; ++k) pts[n][k] = (float)(centre[k] + scales[s] * (target[k] - centre[k]));
    const double ts[3] = {0.05, 0.3, -0.2};
    for (int d = 0; d < 2; ++d)
        for (int s = 0; s < 3; ++s, ++n) /* the first cast direction runs through the target */
            for (int k = 0; k < 3; ++k) pts[n][k] = (float)(target[k] - ts[s] * k_first_dirs[d][k]);
    for (int i = 0; i < n; ++i) {
        if (rtcd_mesh_closest_point(m, pts[i], NULL, NULL) < 1e-4f) continue;
        int expect = box_h ? box_signed_distance(pts[i], box_h) < 0.0 : rtcd_mesh_winding_number(m, pts[i]) > 0.5;
        assert_int_equal(rtcd_mesh_contains_point(m, pts[i]), expect);
    }
}

static void check_aimed_at_features(rtcd_mesh* m, const float* box_h)
{
    const float* v = rtcd_mesh_vertices(m);
    const uint32_t* idx = rtcd_mesh_indices(m);
    const float centre[3] = {0.0f, 0.0f, 0.0f};
    for (uint32_t i = 0; i < rtcd_mesh_vertex_count(m); ++i) check_aimed(m, v + 3 * i, centre, box_h);
    for (uint32_t t = 0; t < rtcd_mesh_triangle_count(m); ++t) {
        for (int e = 0; e < 3; ++e) {
            const float* a = v + 3 * idx[3 * t + e];
            const float* b = v + 3 * idx[3 * t + (e + 1) % 3];
            float mid[3] = {0.5f * (a[0] + b[0]), 0.5f * (a[1] + b[1]), 0.5f * (a[2] + b[2])};
            check_aimed(m, mid, centre, box_h);
        }
    }
}

static void test_contains_aimed_at_vertices_and_edges(void** state)
{
    (void)state;
    const float h[3] = {1.0f, 0.7f, 0.5f};
    rtcd_mesh* box = test_make_box(h[0], h[1], h[2], 3);
    check_aimed_at_features(box, h);
    rtcd_mesh* blob = test_make_blob(453, 1.0f, BLOB_SEED);
    check_aimed_at_features(blob, NULL);
    /* Points on the surface may go either way, but must return. */
    const float* v = rtcd_mesh_vertices(box);
    for (uint32_t i = 0; i < rtcd_mesh_vertex_count(box); ++i) {
        int c = rtcd_mesh_contains_point(box, v + 3 * i);
        assert_true(c == 0 || c == 1);
    }
    rtcd_mesh_release(box);
    rtcd_mesh_release(blob);
}

static void test_contains_degenerate_input(void** state)
{
    (void)state;
    rtcd_mesh* box = test_make_box(1.0f, 1.0f, 1.0f, 1);
    float nan_pt[3] = {NAN, 0.0f, 0.0f}, inf_pt[3] = {0.0f, INFINITY, 0.0f}, in[3] = {0.0f, 0.0f, 0.0f};
    assert_int_equal(rtcd_mesh_contains_point(box, nan_pt), 0);
    assert_int_equal(rtcd_mesh_contains_point(box, inf_pt), 0);
    assert_int_equal(rtcd_mesh_contains_point(NULL, in), 0);
    assert_int_equal(rtcd_mesh_contains_point(box, in), 1);
    uint32_t tri = 0;
    assert_true(isinf(rtcd_mesh_closest_point(box, nan_pt, NULL, &tri)));
    assert_int_equal(tri, RTCD_NO_TRIANGLE);
    rtcd_mesh_release(box);
}

/* ---- closest point ---- */

static void check_closest(rtcd_mesh* m, uint64_t seed, int count, const float* box_h)
{
    test_rng rng = {seed};
    float lo[3], hi[3];
    rtcd_mesh_bounds(m, lo, hi);
    double scale = fmax(fmax(hi[0] - lo[0], hi[1] - lo[1]), hi[2] - lo[2]);
    for (int n = 0; n < count; ++n) {
        float p[3], c[3];
        uint32_t tri = RTCD_NO_TRIANGLE;
        random_point_near(&rng, m, 0.3, p);
        if (n % 4 == 0) { /* some points very near the surface */
            rtcd_mesh_closest_point(m, p, c, NULL);
            for (int k = 0; k < 3; ++k) p[k] = c[k] + (float)test_rng_range(&rng, -1e-3, 1e-3);
        }
        double d = rtcd_mesh_closest_point(m, p, c, &tri);
        double ref = brute_force_distance(m, p);
        assert_true(fabs(d - ref) <= 1e-5 * ref + 1e-6 * scale);
        if (box_h) assert_true(fabs(fabs(box_signed_distance(p, box_h)) - d) <= 1e-5 * d + 1e-6 * scale);
        /* The reported point is at that distance and on the reported triangle. */
        assert_true(tri < rtcd_mesh_triangle_count(m));
        double dc = sqrt(pow((double)c[0] - p[0], 2) + pow((double)c[1] - p[1], 2) + pow((double)c[2] - p[2], 2));
        assert_true(fabs(dc - d) <= 1e-5 * d + 1e-6 * scale);
        double v[3][3], cd[3] = {c[0], c[1], c[2]};
        triangle_corners(m, tri, v);
        assert_true(point_triangle_distance_ref(cd, v) <= 1e-6 * scale);
    }
}

static void test_closest_point_brute_force(void** state)
{
    (void)state;
    const float h[3] = {0.8f, 0.5f, 0.3f};
    rtcd_mesh* box = test_make_box(h[0], h[1], h[2], 4);
    check_closest(box, 11, 2000, h);
    rtcd_mesh_release(box);
    rtcd_mesh* others[3] = {test_make_blob(453, 1.0f, BLOB_SEED), make_torus(), test_make_uv_sphere(24, 32, 1.0f)};
    for (int i = 0; i < 3; ++i) {
        check_closest(others[i], 12u + (uint64_t)i, 2000, NULL);
        rtcd_mesh_release(others[i]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_winding_number_box),
        cmocka_unit_test(test_contains_matches_winding),
        cmocka_unit_test(test_contains_analytic),
        cmocka_unit_test(test_contains_aimed_at_vertices_and_edges),
        cmocka_unit_test(test_contains_degenerate_input),
        cmocka_unit_test(test_closest_point_brute_force),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
