/* Mesh validation (every bad-mesh class), derived data, hooks. */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Regular octahedron, outward counter-clockwise winding. */
static const float octa_v[] = {1, 0, 0, -1, 0, 0, 0, 1, 0, 0, -1, 0, 0, 0, 1, 0, 0, -1};
static const uint32_t octa_i[] = {0, 2, 4, 2, 1, 4, 1, 3, 4, 3, 0, 4, 2, 0, 5, 1, 2, 5, 3, 1, 5, 0, 3, 5};

static rtcd_error make(const float* v, uint32_t nv, const uint32_t* idx, uint32_t nt, uint32_t flags,
                       rtcd_mesh** out)
{
    rtcd_mesh_def def = rtcd_default_mesh_def();
    def.vertices = v;
    def.vertex_count = nv;
    def.indices = idx;
    def.triangle_count = nt;
    def.flags = flags;
    def.name = "case";
    return rtcd_mesh_create(&def, out);
}

static void expect_rejected(const float* v, uint32_t nv, const uint32_t* idx, uint32_t nt, rtcd_error code,
                            const char* must_mention)
{
    rtcd_mesh* m = (rtcd_mesh*)0x1;
    rtcd_error err = make(v, nv, idx, nt, 0, &m);
    if (err != code || !strstr(rtcd_last_error_message(), must_mention))
        print_error("got %s: '%s', want %s mentioning '%s'\n", rtcd_error_name(err), rtcd_last_error_message(),
                    rtcd_error_name(code), must_mention);
    assert_int_equal(err, code);
    assert_null(m);
    assert_non_null(strstr(rtcd_last_error_message(), must_mention));
    assert_non_null(strstr(rtcd_last_error_message(), "case")); /* names the mesh */
}

static void test_valid_octahedron(void** state)
{
    (void)state;
    rtcd_mesh* m = NULL;
    assert_int_equal(make(octa_v, 6, octa_i, 8, 0, &m), RTCD_OK);
    assert_int_equal(rtcd_mesh_vertex_count(m), 6);
    assert_int_equal(rtcd_mesh_triangle_count(m), 8);
    /* Volume of the unit octahedron is 4/3. */
    assert_float_near(rtcd_mesh_mass_properties(m).volume, 4.0 / 3.0, 1e-6);
    rtcd_mesh_release(m);
}

static void test_index_out_of_range(void** state)
{
    (void)state;
    uint32_t idx[24];
    memcpy(idx, octa_i, sizeof idx);
    idx[3 * 5 + 1] = 6;
    expect_rejected(octa_v, 6, idx, 8, RTCD_ERROR_MESH_INDEX_OUT_OF_RANGE, "triangle 5");
}

static void test_nonfinite_vertex(void** state)
{
    (void)state;
    float v[18];
    memcpy(v, octa_v, sizeof v);
    v[3 * 4 + 2] = NAN;
    expect_rejected(v, 6, octa_i, 8, RTCD_ERROR_MESH_NONFINITE_VERTEX, "vertex 4");
    v[3 * 4 + 2] = 1.0f;
    v[3 * 2 + 0] = INFINITY;
    expect_rejected(v, 6, octa_i, 8, RTCD_ERROR_MESH_NONFINITE_VERTEX, "vertex 2");
}

static void test_degenerate_triangle(void** state)
{
    (void)state;
    uint32_t idx[24];
    memcpy(idx, octa_i, sizeof idx);
    idx[3 * 6 + 2] = idx[3 * 6]; /* repeated index */
    expect_rejected(octa_v, 6, idx, 8, RTCD_ERROR_MESH_DEGENERATE_TRIANGLE, "triangle 6");
    /* Collinear corners: move vertex 4 onto the segment between 0 and 2. */
    float v[18];
    memcpy(v, octa_v, sizeof v);
    v[12] = 0.5f, v[13] = 0.5f, v[14] = 0.0f;
    expect_rejected(v, 6, octa_i, 8, RTCD_ERROR_MESH_DEGENERATE_TRIANGLE, "triangle 0");
}

static void test_open_edge(void** state)
{
    (void)state;
    /* Drop the last triangle: its three edges lose their neighbour. */
    expect_rejected(octa_v, 6, octa_i, 7, RTCD_ERROR_MESH_OPEN_EDGE, "not closed");
}

static void test_nonmanifold_edge(void** state)
{
    (void)state;
    /* Two closed tetrahedra sharing the edge (0, 1): that edge has four triangles. */
    static const float v[] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, -1, 0, 0, 0, -1};
    static const uint32_t idx[] = {0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3, 0, 1, 4, 0, 5, 1, 0, 4, 5, 1, 5, 4};
    expect_rejected(v, 6, idx, 8, RTCD_ERROR_MESH_NONMANIFOLD_EDGE, "edge (0, 1)");
}

static void test_inconsistent_orientation(void** state)
{
    (void)state;
    uint32_t idx[24];
    memcpy(idx, octa_i, sizeof idx);
    uint32_t tmp = idx[3 * 3 + 1];
    idx[3 * 3 + 1] = idx[3 * 3 + 2];
    idx[3 * 3 + 2] = tmp;
    expect_rejected(octa_v, 6, idx, 8, RTCD_ERROR_MESH_INCONSISTENT_ORIENTATION, "triangles");
}

static void test_inside_out_and_flip(void** state)
{
    (void)state;
    uint32_t idx[24];
    for (int t = 0; t < 8; ++t) {
        idx[3 * t] = octa_i[3 * t];
        idx[3 * t + 1] = octa_i[3 * t + 2];
        idx[3 * t + 2] = octa_i[3 * t + 1];
    }
    expect_rejected(octa_v, 6, idx, 8, RTCD_ERROR_MESH_INSIDE_OUT, "RTCD_MESH_FLIP_INSIDE_OUT");
    rtcd_mesh* m = NULL;
    assert_int_equal(make(octa_v, 6, idx, 8, RTCD_MESH_FLIP_INSIDE_OUT, &m), RTCD_OK);
    assert_float_near(rtcd_mesh_mass_properties(m).volume, 4.0 / 3.0, 1e-6);
    const float* n = rtcd_mesh_triangle_normals(m);
    const float* v = rtcd_mesh_vertices(m);
    const uint32_t* ix = rtcd_mesh_indices(m);
    for (int t = 0; t < 8; ++t) { /* outward: normal points away from the centre */
        float c[3] = {0, 0, 0};
        for (int k = 0; k < 3; ++k)
            for (int j = 0; j < 3; ++j) c[j] += v[3 * ix[3 * t + k] + j] / 3.0f;
        assert_true(n[3 * t] * c[0] + n[3 * t + 1] * c[1] + n[3 * t + 2] * c[2] > 0.0f);
    }
    rtcd_mesh_release(m);
}

static void test_invalid_arguments(void** state)
{
    (void)state;
    rtcd_mesh* m = NULL;
    assert_int_equal(rtcd_mesh_create(NULL, &m), RTCD_ERROR_INVALID_ARGUMENT);
    assert_int_equal(make(NULL, 6, octa_i, 8, 0, &m), RTCD_ERROR_INVALID_ARGUMENT);
    assert_int_equal(make(octa_v, 6, octa_i, 0, 0, &m), RTCD_ERROR_INVALID_ARGUMENT);
    assert_true(strlen(rtcd_last_error_message()) > 0);
}

/* Box: analytic normals (corner normals are (±1,±1,±1)/√3 with angle weighting,
 * whatever the tessellation), adjacency, mass properties. */
static void test_box_derived_data(void** state)
{
    (void)state;
    const float hx = 1.0f, hy = 2.0f, hz = 0.5f;
    rtcd_mesh* m = test_make_box(hx, hy, hz, 3);
    uint32_t nv = rtcd_mesh_vertex_count(m), nt = rtcd_mesh_triangle_count(m);
    const float* v = rtcd_mesh_vertices(m);
    const float* vn = rtcd_mesh_vertex_normals(m);
    const uint32_t* idx = rtcd_mesh_indices(m);
    const uint32_t* nb = rtcd_mesh_triangle_neighbors(m);
    for (uint32_t i = 0; i < nv; ++i) {
        float expect[3];
        for (int k = 0; k < 3; ++k) {
            float h = k == 0 ? hx : (k == 1 ? hy : hz);
            expect[k] = fabsf(fabsf(v[3 * i + k]) - h) < 1e-6f ? copysignf(1.0f, v[3 * i + k]) : 0.0f;
        }
        float len = sqrtf(expect[0] * expect[0] + expect[1] * expect[1] + expect[2] * expect[2]);
        for (int k = 0; k < 3; ++k) assert_float_near(vn[3 * i + k], expect[k] / len, 1e-5);
    }
    for (uint32_t t = 0; t < nt; ++t) {
        for (int e = 0; e < 3; ++e) {
            uint32_t a = idx[3 * t + e], b = idx[3 * t + (e + 1) % 3], u = nb[3 * t + e];
            assert_true(u < nt && u != t);
            int back = 0; /* the neighbour walks the same edge the other way and points back */
            for (int f = 0; f < 3; ++f)
                back += idx[3 * u + f] == b && idx[3 * u + (f + 1) % 3] == a && nb[3 * u + f] == t;
            assert_int_equal(back, 1);
        }
    }
    rtcd_mass_properties mp = rtcd_mesh_mass_properties(m);
    double mass = 8.0 * hx * hy * hz;
    assert_float_near(mp.volume, mass, 1e-5);
    for (int k = 0; k < 3; ++k) assert_float_near(mp.center_of_mass[k], 0.0, 1e-6);
    assert_float_near(mp.inertia[0], mass / 3.0 * (hy * hy + hz * hz), 1e-4);
    assert_float_near(mp.inertia[4], mass / 3.0 * (hx * hx + hz * hz), 1e-4);
    assert_float_near(mp.inertia[8], mass / 3.0 * (hx * hx + hy * hy), 1e-4);
    assert_float_near(mp.inertia[1], 0.0, 1e-5);
    float lo[3], hi[3];
    rtcd_mesh_bounds(m, lo, hi);
    assert_float_near(lo[1], -hy, 1e-6);
    assert_float_near(hi[2], hz, 1e-6);
    rtcd_mesh_release(m);
}

/* Generated blob: adjacency symmetric, vertex normals unit and outward on average. */
static void test_blob_derived_data(void** state)
{
    (void)state;
    rtcd_mesh* m = test_make_blob(RTCD_AVALANCHE_BLOB_VERTICES, 1.0f, 7);
    uint32_t nt = rtcd_mesh_triangle_count(m);
    const uint32_t* nb = rtcd_mesh_triangle_neighbors(m);
    const float* tn = rtcd_mesh_triangle_normals(m);
    const float* v = rtcd_mesh_vertices(m);
    const uint32_t* idx = rtcd_mesh_indices(m);
    for (uint32_t t = 0; t < nt; ++t) {
        for (int e = 0; e < 3; ++e) {
            uint32_t u = nb[3 * t + e];
            assert_true(u < nt);
            assert_true(nb[3 * u] == t || nb[3 * u + 1] == t || nb[3 * u + 2] == t);
        }
        /* Star-shaped around the origin: every face looks away from it. */
        float c[3] = {0, 0, 0};
        for (int k = 0; k < 3; ++k)
            for (int j = 0; j < 3; ++j) c[j] += v[3 * idx[3 * t + k] + j];
        assert_true(tn[3 * t] * c[0] + tn[3 * t + 1] * c[1] + tn[3 * t + 2] * c[2] > 0.0f);
    }
    const float* vn = rtcd_mesh_vertex_normals(m);
    for (uint32_t i = 0; i < rtcd_mesh_vertex_count(m); ++i) {
        float len = sqrtf(vn[3 * i] * vn[3 * i] + vn[3 * i + 1] * vn[3 * i + 1] + vn[3 * i + 2] * vn[3 * i + 2]);
        assert_float_near(len, 1.0f, 1e-5);
    }
    rtcd_mesh_release(m);
}

/* ---- hooks: allocator, error callback, out-of-memory on every allocation ---- */


static int g_callback_code;
static void on_error(rtcd_error code, const char* message, void* user)
{
    (void)message;
    *(int*)user = (int)code;
}

static void test_error_callback(void** state)
{
    (void)state;
    rtcd_set_error_callback(on_error, &g_callback_code);
    rtcd_mesh* m = NULL;
    assert_int_equal(make(octa_v, 6, octa_i, 7, 0, &m), RTCD_ERROR_MESH_OPEN_EDGE);
    assert_int_equal(g_callback_code, RTCD_ERROR_MESH_OPEN_EDGE);
    rtcd_set_error_callback(NULL, NULL);
}

static void test_out_of_memory_everywhere(void** state)
{
    (void)state;
    test_failing_allocator_install();
    int saw_ok = 0;
    for (int fail_at = 0; fail_at < 64 && !saw_ok; ++fail_at) {
        test_fail_after(fail_at);
        rtcd_mesh* m = NULL;
        rtcd_error err = make(octa_v, 6, octa_i, 8, 0, &m);
        if (err == RTCD_OK) {
            saw_ok = 1;
            rtcd_mesh_release(m);
        } else {
            assert_int_equal(err, RTCD_ERROR_OUT_OF_MEMORY);
            assert_null(m);
        }
        assert_int_equal(test_live_allocations(), 0); /* nothing leaks on any error path */
    }
    assert_true(saw_ok);
    rtcd_set_allocator(NULL, NULL, NULL);
}

static void test_retain_release(void** state)
{
    (void)state;
    test_failing_allocator_install();
    test_fail_after(-1);
    rtcd_mesh* m = NULL;
    assert_int_equal(make(octa_v, 6, octa_i, 8, 0, &m), RTCD_OK);
    rtcd_mesh_retain(m);
    rtcd_mesh_release(m);
    assert_true(test_live_allocations() > 0); /* still alive */
    assert_int_equal(rtcd_mesh_vertex_count(m), 6);
    rtcd_mesh_release(m);
    assert_int_equal(test_live_allocations(), 0);
    rtcd_set_allocator(NULL, NULL, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_octahedron),      cmocka_unit_test(test_index_out_of_range),
        cmocka_unit_test(test_nonfinite_vertex),      cmocka_unit_test(test_degenerate_triangle),
        cmocka_unit_test(test_open_edge),             cmocka_unit_test(test_nonmanifold_edge),
        cmocka_unit_test(test_inconsistent_orientation), cmocka_unit_test(test_inside_out_and_flip),
        cmocka_unit_test(test_invalid_arguments),     cmocka_unit_test(test_box_derived_data),
        cmocka_unit_test(test_blob_derived_data),     cmocka_unit_test(test_error_callback),
        cmocka_unit_test(test_out_of_memory_everywhere), cmocka_unit_test(test_retain_release),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
