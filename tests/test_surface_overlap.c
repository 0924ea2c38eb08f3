/* The narrow phase's separation gate (core/query/surface_overlap.c):
 * rtcd_surfaces_intersect never says 0 for surfaces that cross, against a
 * brute force over every triangle pair in double; its early answer for
 * meshes whose bounding balls are apart agrees; poses are drawn around the
 * distance where the balls touch, where a wrong early answer would show. */
#include "test_util.h"

#include "mesh/mesh_layout.h"
#include "query/surface_overlap.h"
#include "shared/geom.h"

#include <math.h>
#include <stdlib.h>

/* Does segment p q cross triangle (a, b, c)? Double, Moller-Trumbore with
 * the segment's parameter in [0, 1]; a segment in the triangle's plane
 * counts as no (random poses never put one there). */
static int segment_crosses(const double p[3], const double q[3], const double a[3], const double b[3],
                           const double c[3])
{
    double d[3], e1[3], e2[3], s[3], h[3], k[3];
    for (int i = 0; i < 3; ++i) d[i] = q[i] - p[i], e1[i] = b[i] - a[i], e2[i] = c[i] - a[i], s[i] = p[i] - a[i];
    h[0] = d[1] * e2[2] - d[2] * e2[1], h[1] = d[2] * e2[0] - d[0] * e2[2], h[2] = d[0] * e2[1] - d[1] * e2[0];
    double det = e1[0] * h[0] + e1[1] * h[1] + e1[2] * h[2];
    if (fabs(det) < 1e-30) return 0;
    double u = (s[0] * h[0] + s[1] * h[1] + s[2] * h[2]) / det;
    if (u < 0.0 || u > 1.0) return 0;
    k[0] = s[1] * e1[2] - s[2] * e1[1], k[1] = s[2] * e1[0] - s[0] * e1[2], k[2] = s[0] * e1[1] - s[1] * e1[0];
    double v = (d[0] * k[0] + d[1] * k[1] + d[2] * k[2]) / det;
    if (v < 0.0 || u + v > 1.0) return 0;
    double t = (e2[0] * k[0] + e2[1] * k[1] + e2[2] * k[2]) / det;
    return t >= 0.0 && t <= 1.0;
}

/* Triangle t of m, placed by x (NULL: as it is), in double. */
static void placed_triangle(const rtcd_mesh* m, uint32_t t, const rtcd_xform* x, double out[3][3])
{
    for (int v = 0; v < 3; ++v) {
        const float* p = m->vertices + 3 * m->indices[3 * t + v];
        for (int i = 0; i < 3; ++i)
            out[v][i] = x ? (double)x->r[3 * i] * p[0] + (double)x->r[3 * i + 1] * p[1] + (double)x->r[3 * i + 2] * p[2] +
                                x->t[i]
                          : p[i];
    }
}

/* Do two triangles cross (an edge of either through the other)? */
static int triangles_cross(double s[3][3], double t[3][3])
{
    for (int e = 0; e < 3; ++e) {
        if (segment_crosses(s[e], s[(e + 1) % 3], t[0], t[1], t[2])) return 1;
        if (segment_crosses(t[e], t[(e + 1) % 3], s[0], s[1], s[2])) return 1;
    }
    return 0;
}

static int brute_force_cross(const rtcd_mesh* a, const rtcd_mesh* b, const rtcd_xform* b_in_a)
{
    double (*tb)[3][3] = malloc(b->triangle_count * sizeof *tb);
    double (*box)[2][3] = malloc(b->triangle_count * sizeof *box);
    assert_non_null(tb);
    assert_non_null(box);
    for (uint32_t j = 0; j < b->triangle_count; ++j) {
        placed_triangle(b, j, b_in_a, tb[j]);
        for (int i = 0; i < 3; ++i) {
            box[j][0][i] = fmin(tb[j][0][i], fmin(tb[j][1][i], tb[j][2][i]));
            box[j][1][i] = fmax(tb[j][0][i], fmax(tb[j][1][i], tb[j][2][i]));
        }
    }
    int cross = 0;
    for (uint32_t i = 0; i < a->triangle_count && !cross; ++i) {
        double ta[3][3], lo[3], hi[3];
        placed_triangle(a, i, NULL, ta);
        for (int k = 0; k < 3; ++k) {
            lo[k] = fmin(ta[0][k], fmin(ta[1][k], ta[2][k]));
            hi[k] = fmax(ta[0][k], fmax(ta[1][k], ta[2][k]));
        }
        for (uint32_t j = 0; j < b->triangle_count && !cross; ++j) {
            int apart = 0;
            for (int k = 0; k < 3; ++k) apart |= hi[k] < box[j][0][k] || lo[k] > box[j][1][k];
            if (!apart) cross = triangles_cross(ta, tb[j]);
        }
    }
    free(tb);
    free(box);
    return cross;
}

/* b placed at a random rotation, its origin `distance` from a's along a
 * random direction. */
static rtcd_xform place_at(test_rng* rng, float distance)
{
    rtcd_transform pose = test_random_pose(rng, 0.0f);
    float dir[3];
    test_rng_unit_vector(rng, dir);
    for (int i = 0; i < 3; ++i) pose.translation[i] = distance * dir[i];
    return rtcd_to_xform(&pose);
}

static void check_pair(const rtcd_mesh* a, const rtcd_mesh* b, uint64_t seed, uint32_t trials)
{
    test_rng rng = {seed};
    float touch = a->reach + b->reach;
    uint32_t crossing = 0, early = 0, apart_inside_balls = 0;
    for (uint32_t k = 0; k < trials; ++k) {
        /* Most just inside or outside the balls' touching distance, some
         * where the surfaces surely cross. */
        double f = k % 4 == 0 ? test_rng_range(&rng, 0.3, 0.9) : test_rng_range(&rng, 0.9, 1.02);
        if (k % 8 == 1) f = 1.0 + test_rng_range(&rng, -1e-5, 1e-5);
        rtcd_xform x = place_at(&rng, (float)(f * touch));
        int got = rtcd_surfaces_intersect(a, b, &x);
        int want = brute_force_cross(a, b, &x);
        if (want && !got) fail_msg("%s/%s trial %u at %.6f x the balls' touch: surfaces cross, the gate says apart", a->name,
                                   b->name, k, f);
        float d = sqrtf(x.t[0] * x.t[0] + x.t[1] * x.t[1] + x.t[2] * x.t[2]);
        if (d > touch) {
            early++;
            assert_false(got); /* balls apart: no triangle within the tolerance */
        } else if (!want && !got) {
            apart_inside_balls++;
        }
        crossing += (uint32_t)want;
    }
    print_message("%s/%s: %u trials, %u crossing, %u with the balls apart, %u apart inside the balls\n", a->name,
                  b->name, trials, crossing, early, apart_inside_balls);
    /* The draw covers every case. */
    assert_true(crossing > 0);
    assert_true(early > 0);
    assert_true(apart_inside_balls > 0);
}

static void test_gate_never_misses_a_crossing(void** state)
{
    (void)state;
    rtcd_mesh* blob = test_make_blob(120, 0.25f, 7);
    rtcd_mesh* blob2 = test_make_blob(90, 0.2f, 11);
    /* A long box: its reach (a corner) is far from most of its surface. */
    rtcd_mesh* box = test_make_box(0.3f, 0.1f, 0.05f, 2);
    rtcd_mesh* sphere = test_make_uv_sphere(8, 12, 0.15f);
    check_pair(blob, blob2, 1, 160);
    check_pair(box, blob, 2, 160);
    check_pair(box, box, 3, 160);
    check_pair(sphere, box, 4, 160);
    rtcd_mesh_release(blob);
    rtcd_mesh_release(blob2);
    rtcd_mesh_release(box);
    rtcd_mesh_release(sphere);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gate_never_misses_a_crossing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
