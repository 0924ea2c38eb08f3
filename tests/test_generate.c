/* Generated meshes: counts, determinism, topology, orientation, concavity,
 * volumes and argument checks, all against references computed here. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PI 3.14159265358979323846

static const uint32_t k_spawner_triangles[RTCD_SPAWNER_MESH_COUNT] = {902, 2130, 3456, 3458};

/* ---- independent mesh analysis (double precision, brute-force edge map) ---- */

typedef struct dedge {
    uint64_t key; /* from << 32 | to */
    uint32_t tri;
} dedge;

static int dedge_cmp(const void* a, const void* b)
{
    uint64_t x = ((const dedge*)a)->key, y = ((const dedge*)b)->key;
    return x < y ? -1 : x > y;
}

static dedge* edge_map(const rtcd_generated_mesh* g)
{
    dedge* e = malloc(sizeof *e * 3 * (size_t)g->triangle_count);
    assert_non_null(e);
    for (uint32_t t = 0; t < g->triangle_count; ++t)
        for (int k = 0; k < 3; ++k) {
            uint64_t a = g->indices[3 * t + k], b = g->indices[3 * t + (k + 1) % 3];
            e[3 * t + k].key = a << 32 | b;
            e[3 * t + k].tri = t;
        }
    qsort(e, 3 * (size_t)g->triangle_count, sizeof *e, dedge_cmp);
    return e;
}

static const dedge* find_edge(const dedge* map, const rtcd_generated_mesh* g, uint32_t a, uint32_t b)
{
    dedge k = {(uint64_t)a << 32 | b, 0};
    return bsearch(&k, map, 3 * (size_t)g->triangle_count, sizeof k, dedge_cmp);
}

static void corner(const rtcd_generated_mesh* g, uint32_t v, double p[3])
{
    for (int k = 0; k < 3; ++k) p[k] = g->vertices[3 * v + k];
}

static void tri_corners(const rtcd_generated_mesh* g, uint32_t t, double p[3][3])
{
    for (int c = 0; c < 3; ++c) corner(g, g->indices[3 * t + c], p[c]);
}

static void tri_normal(double p[3][3], double n[3]) /* unnormalised, right-hand rule */
{
    double u[3], v[3];
    for (int k = 0; k < 3; ++k) u[k] = p[1][k] - p[0][k], v[k] = p[2][k] - p[0][k];
    n[0] = u[1] * v[2] - u[2] * v[1];
    n[1] = u[2] * v[0] - u[0] * v[2];
    n[2] = u[0] * v[1] - u[1] * v[0];
}

static double dot3(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/* Closed, 2-manifold, consistently oriented: every directed edge occurs once
 * and its reverse once. Also checks index range, repeated corners, unused
 * vertices and the Euler characteristic. */
static void check_closed_manifold(const rtcd_generated_mesh* g, int euler)
{
    assert_non_null(g->vertices);
    assert_non_null(g->indices);
    uint32_t* used = calloc(g->vertex_count, sizeof *used);
    assert_non_null(used);
    for (uint32_t t = 0; t < g->triangle_count; ++t) {
        const uint32_t* i = g->indices + 3 * t;
        for (int k = 0; k < 3; ++k) {
            assert_true(i[k] < g->vertex_count);
            used[i[k]] = 1;
        }
        assert_true(i[0] != i[1] && i[1] != i[2] && i[2] != i[0]);
    }
    for (uint32_t v = 0; v < g->vertex_count; ++v) assert_true(used[v]);
    free(used);
    for (uint32_t v = 0; v < 3 * g->vertex_count; ++v) assert_true(isfinite(g->vertices[v]));
    dedge* map = edge_map(g);
    size_t n = 3 * (size_t)g->triangle_count;
    for (size_t i = 0; i < n; ++i) {
        if (i + 1 < n) assert_true(map[i].key != map[i + 1].key); /* each directed edge once */
        uint32_t a = (uint32_t)(map[i].key >> 32), b = (uint32_t)map[i].key;
        assert_non_null(find_edge(map, g, b, a)); /* and its reverse once (unique keys) */
    }
    free(map);
    assert_true(n % 2 == 0);
    long long e = (long long)(n / 2);
    assert_int_equal((long long)g->vertex_count - e + (long long)g->triangle_count, euler);
}

static double signed_volume(const rtcd_generated_mesh* g) /* divergence theorem */
{
    double v = 0.0;
    for (uint32_t t = 0; t < g->triangle_count; ++t) {
        double p[3][3], n[3];
        tri_corners(g, t, p);
        tri_normal(p, n);
        v += dot3(n, p[0]) / 6.0;
    }
    return v;
}

/* Undirected edges where the neighbour's far vertex is strictly above the plane. */
static uint32_t count_reflex_edges(const rtcd_generated_mesh* g, double tol)
{
    dedge* map = edge_map(g);
    uint32_t reflex = 0;
    for (uint32_t t = 0; t < g->triangle_count; ++t) {
        double p[3][3], n[3];
        tri_corners(g, t, p);
        tri_normal(p, n);
        double len = sqrt(dot3(n, n));
        for (int k = 0; k < 3; ++k) {
            uint32_t a = g->indices[3 * t + k], b = g->indices[3 * t + (k + 1) % 3];
            if (a > b) continue;
            const dedge* other = find_edge(map, g, b, a);
            assert_non_null(other);
            const uint32_t* o = g->indices + 3 * other->tri;
            uint32_t far = o[0] != a && o[0] != b ? o[0] : (o[1] != a && o[1] != b ? o[1] : o[2]);
            double d[3];
            corner(g, far, d);
            for (int c = 0; c < 3; ++c) d[c] -= p[0][c];
            if (dot3(n, d) / len > tol) ++reflex;
        }
    }
    free(map);
    return reflex;
}

static void check_mesh_create(rtcd_generated_mesh* g, const char* name)
{
    rtcd_mesh* m = test_mesh_from_generated(g, name); /* frees g */
    assert_non_null(m);
    rtcd_mesh_release(m);
}

/* ---- tests ---- */

static void test_counts(void** state)
{
    (void)state;
    rtcd_generated_mesh g;
    for (uint32_t w = 0; w < RTCD_SPAWNER_MESH_COUNT; ++w) {
        uint32_t v = rtcd_spawner_mesh_vertices(w);
        assert_int_equal(2 * v - 4, k_spawner_triangles[w]);
        assert_int_equal(rtcd_generate_blob(v, 1.0f, 7 + w, &g), RTCD_OK);
        assert_int_equal(g.vertex_count, v);
        assert_int_equal(g.triangle_count, k_spawner_triangles[w]);
        rtcd_generated_free(&g);
        assert_null(g.vertices);
        assert_null(g.indices);
        assert_int_equal(g.vertex_count, 0);
    }
    assert_int_equal(rtcd_spawner_mesh_vertices(RTCD_SPAWNER_MESH_COUNT), 0);
    assert_int_equal(rtcd_spawner_mesh_vertices(0xffffffffu), 0);
    assert_int_equal(rtcd_generate_blob(RTCD_AVALANCHE_BLOB_VERTICES, 2.0f, 1, &g), RTCD_OK);
    assert_int_equal(g.triangle_count, 902);
    rtcd_generated_free(&g);
    rtcd_generated_free(NULL);

    assert_int_equal(rtcd_generate_uv_sphere(4, 17, 1.0f, &g), RTCD_OK);
    assert_int_equal(g.vertex_count, 70);
    assert_int_equal(g.triangle_count, 136);
    rtcd_generated_free(&g);
    assert_int_equal(rtcd_generate_torus(1.0f, 0.3f, 40, 20, &g), RTCD_OK);
    assert_int_equal(g.vertex_count, 800);
    assert_int_equal(g.triangle_count, 1600);
    rtcd_generated_free(&g);
    for (uint32_t s = 1; s <= 5; ++s) { /* (s+1)^3 - (s-1)^3 surface lattice points */
        float h[3] = {1, 2, 3};
        assert_int_equal(rtcd_generate_box(h, s, &g), RTCD_OK);
        assert_int_equal(g.vertex_count, (s + 1) * (s + 1) * (s + 1) - (s - 1) * (s - 1) * (s - 1));
        assert_int_equal(g.triangle_count, 12 * s * s);
        rtcd_generated_free(&g);
    }
}

static void test_blob_determinism(void** state)
{
    (void)state;
    rtcd_generated_mesh a, b, c;
    assert_int_equal(rtcd_generate_blob(1067, 1.5f, 42, &a), RTCD_OK);
    assert_int_equal(rtcd_generate_blob(1067, 1.5f, 42, &b), RTCD_OK);
    assert_int_equal(rtcd_generate_blob(1067, 1.5f, 43, &c), RTCD_OK);
    assert_memory_equal(a.vertices, b.vertices, sizeof(float) * 3 * a.vertex_count);
    assert_memory_equal(a.indices, b.indices, sizeof(uint32_t) * 3 * a.triangle_count);
    assert_memory_not_equal(a.vertices, c.vertices, sizeof(float) * 3 * a.vertex_count);
    rtcd_generated_free(&a);
    rtcd_generated_free(&b);
    rtcd_generated_free(&c);
}

/* Topology, star shape, radius range and concavity over many seeds and sizes. */
static void check_blob(uint32_t v, float radius, uint64_t seed, int check_concavity)
{
    rtcd_generated_mesh g;
    assert_int_equal(rtcd_generate_blob(v, radius, seed, &g), RTCD_OK);
    assert_int_equal(g.vertex_count, v);
    assert_int_equal(g.triangle_count, 2 * v - 4);
    check_closed_manifold(&g, 2);
    assert_true(signed_volume(&g) > 0.0);
    for (uint32_t t = 0; t < g.triangle_count; ++t) {
        double p[3][3], n[3], centroid[3];
        tri_corners(&g, t, p);
        tri_normal(p, n);
        for (int k = 0; k < 3; ++k) centroid[k] = (p[0][k] + p[1][k] + p[2][k]) / 3.0;
        assert_true(dot3(n, centroid) > 0.0);
    }
    for (uint32_t i = 0; i < v; ++i) {
        double p[3];
        corner(&g, i, p);
        double r = sqrt(dot3(p, p));
        assert_true(r >= 0.4 * radius * (1 - 1e-6) && r <= 1.8 * radius * (1 + 1e-6));
    }
    if (check_concavity) {
        uint32_t edges = 3 * g.triangle_count / 2, reflex = count_reflex_edges(&g, 1e-6 * radius);
        assert_true(reflex * 20 > edges); /* > 5 % */
    }
    rtcd_generated_free(&g);
}

static void test_blob_shape(void** state)
{
    (void)state;
    for (uint32_t w = 0; w < RTCD_SPAWNER_MESH_COUNT; ++w)
        for (uint64_t seed = 0; seed < 6; ++seed) check_blob(rtcd_spawner_mesh_vertices(w), 0.5f + w, seed * 977, 1);
    for (uint32_t v = 4; v <= 80; ++v) check_blob(v, 1.0f, v, 0); /* small hulls: too coarse for bumps */
    check_blob(20000, 3.0f, 5, 1);
    check_blob(1u << 16, 1.0f, 9, 0); /* the largest accepted size */
}

static void test_blob_mesh_create(void** state)
{
    (void)state;
    for (uint32_t w = 0; w < RTCD_SPAWNER_MESH_COUNT; ++w) {
        rtcd_generated_mesh g;
        assert_int_equal(rtcd_generate_blob(rtcd_spawner_mesh_vertices(w), 1.0f, w, &g), RTCD_OK);
        check_mesh_create(&g, "blob");
    }
}

static void test_uv_sphere(void** state)
{
    (void)state;
    static const uint32_t cases[][2] = {{4, 17}, {1, 3}, {2, 5}, {16, 32}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        float r = 1.25f;
        rtcd_generated_mesh g;
        assert_int_equal(rtcd_generate_uv_sphere(cases[c][0], cases[c][1], r, &g), RTCD_OK);
        assert_int_equal(g.vertex_count, cases[c][0] * cases[c][1] + 2);
        assert_int_equal(g.triangle_count, 2 * cases[c][0] * cases[c][1]);
        check_closed_manifold(&g, 2);
        /* Vertices on the sphere: the convex polyhedron lies between the ball
         * of its smallest face-plane distance and the circumscribed ball. */
        double r_in = INFINITY;
        for (uint32_t t = 0; t < g.triangle_count; ++t) {
            double p[3][3], n[3];
            tri_corners(&g, t, p);
            tri_normal(p, n);
            r_in = fmin(r_in, dot3(n, p[0]) / sqrt(dot3(n, n)));
        }
        assert_true(r_in > 0.0);
        double vol = signed_volume(&g);
        assert_true(vol > 4.0 / 3.0 * PI * r_in * r_in * r_in);
        assert_true(vol < 4.0 / 3.0 * PI * (double)r * r * r);
        assert_int_equal(count_reflex_edges(&g, 1e-6 * r), 0); /* convex */
        check_mesh_create(&g, "uv_sphere");
    }
}

/* Volume of this triangulated torus (vertices on the surface, quads split
 * along (i,j)-(i+1,j+1)) is exactly 2 pi^2 R r^2 S(n) S(m), S(k) = sin(2pi/k) /
 * (2pi/k), the area ratio of an inscribed regular k-gon (checked in double
 * to 1e-15 for assorted R, r, n, m: the volume is homogeneous of degree 3 in
 * R, r and the R^3, R^2 r, r^3 terms cancel). Since 1 - ab <= (1-a) + (1-b)
 * and 1 - sin(x)/x <= x^2/6, the relative error is below
 * (2pi^2/3)(1/n^2 + 1/m^2), the bound asked for; the exact value is tighter. */
static void test_torus(void** state)
{
    (void)state;
    static const struct { float R, r; uint32_t n, m; } cases[] = {
        {1.0f, 0.3f, 40, 20}, {2.0f, 1.9f, 3, 3}, {1.0f, 0.1f, 3, 40}, {3.0f, 0.2f, 10, 50}, {1.0f, 0.5f, 64, 7}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        rtcd_generated_mesh g;
        double R = cases[c].R, r = cases[c].r;
        uint32_t n = cases[c].n, m = cases[c].m;
        assert_int_equal(rtcd_generate_torus(cases[c].R, cases[c].r, n, m, &g), RTCD_OK);
        assert_int_equal(g.vertex_count, n * m);
        assert_int_equal(g.triangle_count, 2 * n * m);
        check_closed_manifold(&g, 0);
        double vol = signed_volume(&g), ideal = 2 * PI * PI * R * r * r;
        double sn = sin(2 * PI / n) / (2 * PI / n), sm = sin(2 * PI / m) / (2 * PI / m);
        assert_true(vol > 0.0);
        assert_true(fabs(vol - ideal) / ideal < (2 * PI * PI / 3) * (1.0 / ((double)m * m) + 1.0 / ((double)n * n)));
        assert_true(fabs(vol - ideal * sn * sm) / (ideal * sn * sm) < 1e-5);
        assert_true(count_reflex_edges(&g, 1e-6 * r) > 0); /* the hole side is concave */
        check_mesh_create(&g, "torus");
    }
}

static void test_box(void** state)
{
    (void)state;
    const float h[3] = {0.5f, 1.5f, 2.25f};
    for (uint32_t s = 1; s <= 6; ++s) {
        rtcd_generated_mesh g;
        assert_int_equal(rtcd_generate_box(h, s, &g), RTCD_OK);
        check_closed_manifold(&g, 2);
        double expect = 8.0 * h[0] * h[1] * h[2];
        assert_true(fabs(signed_volume(&g) - expect) <= 1e-5 * expect);
        for (uint32_t i = 0; i < 3 * g.vertex_count; ++i) /* every vertex on the surface */
            assert_true(fabsf(g.vertices[i]) <= h[i % 3]);
        for (uint32_t v = 0; v < g.vertex_count; ++v) {
            int on_face = 0;
            for (int k = 0; k < 3; ++k) on_face |= fabsf(g.vertices[3 * v + k]) == h[k];
            assert_true(on_face);
        }
        assert_int_equal(count_reflex_edges(&g, 1e-6), 0);
        check_mesh_create(&g, "box");
    }
}

static void expect_invalid(rtcd_error err, rtcd_generated_mesh* g)
{
    assert_int_equal(err, RTCD_ERROR_INVALID_ARGUMENT);
    assert_true(strlen(rtcd_last_error_message()) > 0);
    assert_null(g->vertices);
    assert_null(g->indices);
}

static void test_bad_arguments(void** state)
{
    (void)state;
    rtcd_generated_mesh g;
    float nan = NAN, h[3] = {1, 1, 1};
    expect_invalid(rtcd_generate_blob(3, 1.0f, 0, &g), &g);
    expect_invalid(rtcd_generate_blob(0, 1.0f, 0, &g), &g);
    expect_invalid(rtcd_generate_blob((1u << 16) + 1, 1.0f, 0, &g), &g);
    expect_invalid(rtcd_generate_blob(100, 0.0f, 0, &g), &g);
    expect_invalid(rtcd_generate_blob(100, -1.0f, 0, &g), &g);
    expect_invalid(rtcd_generate_blob(100, nan, 0, &g), &g);
    expect_invalid(rtcd_generate_blob(100, INFINITY, 0, &g), &g);
    assert_int_equal(rtcd_generate_blob(100, 1.0f, 0, NULL), RTCD_ERROR_INVALID_ARGUMENT);
    expect_invalid(rtcd_generate_uv_sphere(0, 17, 1.0f, &g), &g);
    expect_invalid(rtcd_generate_uv_sphere(4, 2, 1.0f, &g), &g);
    expect_invalid(rtcd_generate_uv_sphere(4, 17, 0.0f, &g), &g);
    expect_invalid(rtcd_generate_uv_sphere(4, 17, nan, &g), &g);
    expect_invalid(rtcd_generate_torus(1.0f, 1.0f, 40, 20, &g), &g);
    expect_invalid(rtcd_generate_torus(0.5f, 1.0f, 40, 20, &g), &g);
    expect_invalid(rtcd_generate_torus(1.0f, 0.0f, 40, 20, &g), &g);
    expect_invalid(rtcd_generate_torus(1.0f, nan, 40, 20, &g), &g);
    expect_invalid(rtcd_generate_torus(nan, 0.3f, 40, 20, &g), &g);
    expect_invalid(rtcd_generate_torus(1.0f, 0.3f, 2, 20, &g), &g);
    expect_invalid(rtcd_generate_torus(1.0f, 0.3f, 40, 2, &g), &g);
    expect_invalid(rtcd_generate_box(h, 0, &g), &g);
    expect_invalid(rtcd_generate_box(NULL, 1, &g), &g);
    h[1] = 0.0f;
    expect_invalid(rtcd_generate_box(h, 1, &g), &g);
    h[1] = nan;
    expect_invalid(rtcd_generate_box(h, 1, &g), &g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts),           cmocka_unit_test(test_blob_determinism),
        cmocka_unit_test(test_blob_shape),       cmocka_unit_test(test_blob_mesh_create),
        cmocka_unit_test(test_uv_sphere),        cmocka_unit_test(test_torus),
        cmocka_unit_test(test_box),              cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
