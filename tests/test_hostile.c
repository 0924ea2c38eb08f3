/* Hostile and careless input to the core's public C API (issue 12): one test
 * per finding. Each crashed or misbehaved before its fix:
 * 1. the contact reduction with non-finite scores (an Inf coordinate, a NaN
 *    depth, or bodies so large that a spread overflows float) picked no
 *    contact and read contacts[0xFFFFFFFF], on the CPU and in the kernels;
 * 2. NULL pointers in rtcd_mesh_bounds, rtcd_contact_from_ray and
 *    rtcd_transform_from_quat;
 * 3. out-of-range enum values were taken as some other value without a word
 *    by rtcd_collide_standard and rtcd_contact_from_ray. */
#include "test_util.h"

#include <rtcd/rtcd_batch.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- error reports ---- */

typedef struct error_log {
    uint32_t count;
    rtcd_error code;
    char message[1024];
} error_log;

static error_log g_errors;

static void record_error(rtcd_error code, const char* message, void* user)
{
    (void)user;
    g_errors.count++;
    g_errors.code = code;
    snprintf(g_errors.message, sizeof g_errors.message, "%s", message);
}

static void errors_reset(void)
{
    memset(&g_errors, 0, sizeof g_errors);
    rtcd_set_error_callback(record_error, NULL);
}

static void quiet_log(rtcd_log_level level, const char* message, void* user)
{
    (void)user;
    if (level == RTCD_LOG_ERROR) fprintf(stderr, "%s\n", message);
}

/* The last report was RTCD_ERROR_INVALID_ARGUMENT and its message holds every
 * one of the (up to two) words given. */
static void expect_invalid(const char* what, const char* word1, const char* word2)
{
    if (g_errors.count == 0) fail_msg("%s: no error reported", what);
    if (g_errors.code != RTCD_ERROR_INVALID_ARGUMENT)
        fail_msg("%s: reported %s, not RTCD_ERROR_INVALID_ARGUMENT", what, rtcd_error_name(g_errors.code));
    if (word1 && !strstr(g_errors.message, word1))
        fail_msg("%s: the message does not name %s: %s", what, word1, g_errors.message);
    if (word2 && !strstr(g_errors.message, word2))
        fail_msg("%s: the message does not name %s: %s", what, word2, g_errors.message);
    if (strcmp(rtcd_last_error_message(), g_errors.message) != 0)
        fail_msg("%s: rtcd_last_error_message differs from the callback's message", what);
}

/* ---- 1. the reduction on any float input ---- */

static int contact_is_finite(const rtcd_contact* c)
{
    int ok = isfinite(c->depth) != 0;
    for (int k = 0; k < 3; ++k) ok &= isfinite(c->point_on_b[k]) && isfinite(c->normal_on_b[k]);
    return ok;
}

static rtcd_contact make_contact(float x, float y, float z, float depth, uint32_t feature)
{
    rtcd_contact c;
    memset(&c, 0, sizeof c);
    c.point_on_b[0] = x, c.point_on_b[1] = y, c.point_on_b[2] = z;
    c.normal_on_b[2] = 1.0f;
    c.depth = depth;
    c.feature = feature;
    return c;
}

/* rtcd_reduce_contacts on in[0..n) keeps min(4, finite contacts) of them,
 * each finite, each one of the inputs, none twice, whatever their order.
 * Returns how many it kept. */
static uint32_t check_reduction(const char* what, const rtcd_contact* in, uint32_t n)
{
    uint32_t finite = 0;
    for (uint32_t i = 0; i < n; ++i) finite += (uint32_t)contact_is_finite(&in[i]);
    rtcd_contact out[RTCD_MAX_MANIFOLD_POINTS + 1];
    memset(out, 0xab, sizeof out);
    uint32_t m = rtcd_reduce_contacts(in, n, out);
    uint32_t want = finite < RTCD_MAX_MANIFOLD_POINTS ? finite : RTCD_MAX_MANIFOLD_POINTS;
    if (m != want) fail_msg("%s: %u contacts out of %u (%u finite), want %u", what, m, n, finite, want);
    for (uint32_t k = 0; k < m; ++k) {
        if (!contact_is_finite(&out[k])) fail_msg("%s: contact %u is not finite", what, k);
        int found = 0;
        for (uint32_t i = 0; i < n && !found; ++i) found = memcmp(&in[i], &out[k], sizeof out[k]) == 0;
        if (!found) fail_msg("%s: contact %u (feature %08x) is none of the inputs", what, k, out[k].feature);
        for (uint32_t j = 0; j < k; ++j)
            if (out[j].feature == out[k].feature) fail_msg("%s: feature %08x picked twice", what, out[k].feature);
    }
    /* The same picks from the reversed input (ties go by feature id). */
    rtcd_contact* rev = malloc((n ? n : 1) * sizeof *rev);
    assert_non_null(rev);
    for (uint32_t i = 0; i < n; ++i) rev[i] = in[n - 1 - i];
    rtcd_contact out2[RTCD_MAX_MANIFOLD_POINTS];
    uint32_t m2 = rtcd_reduce_contacts(rev, n, out2);
    assert_int_equal(m2, m);
    for (uint32_t k = 0; k < m; ++k) assert_memory_equal(&out2[k], &out[k], sizeof out[k]);
    free(rev);
    return m;
}

/* A few valid contacts on a square, and contacts poisoned in every field. */
static void test_reduction_nonfinite_contacts(void** state)
{
    (void)state;
    errors_reset();
    const float inf = INFINITY, nan = NAN;
    rtcd_contact c[16];
    uint32_t n = 0;
    /* Poisoned ones first, with the lowest feature ids: they would win every tie. */
    c[n++] = make_contact(inf, 0, 0, 0.1f, 1);
    c[n++] = make_contact(0, -inf, 0, 0.1f, 2);
    c[n++] = make_contact(0, 0, nan, 0.1f, 3);
    c[n++] = make_contact(0.5f, 0.5f, 0, nan, 4);
    c[n++] = make_contact(0.5f, 0.5f, 0, inf, 5);
    c[n++] = make_contact(0.5f, 0.5f, 0, -inf, 6);
    c[n] = make_contact(0.5f, 0.5f, 0, 0.1f, 7), c[n++].normal_on_b[0] = nan;
    c[n] = make_contact(0.5f, 0.5f, 0, 0.1f, 8), c[n++].normal_on_b[1] = inf;
    uint32_t poisoned = n;
    /* All poisoned: nothing to keep. */
    assert_int_equal(check_reduction("all poisoned", c, poisoned), 0);
    assert_int_equal(check_reduction("one poisoned", c + 3, 1), 0);
    /* One, two, then five valid ones among them. */
    c[n++] = make_contact(0, 0, 0, 0.2f, 20);
    assert_int_equal(check_reduction("1 valid", c, n), 1);
    c[n++] = make_contact(1, 0, 0, 0.1f, 21);
    assert_int_equal(check_reduction("2 valid", c, n), 2);
    c[n++] = make_contact(1, 1, 0, 0.1f, 22);
    c[n++] = make_contact(0, 1, 0, 0.1f, 23);
    c[n++] = make_contact(0.5f, 0.5f, 0, 0.1f, 24);
    assert_int_equal(check_reduction("5 valid", c, n), 4);
    /* Only the valid ones: the same picks as with the poisoned ones around. */
    rtcd_contact with[4], without[4];
    uint32_t m1 = rtcd_reduce_contacts(c, n, with);
    uint32_t m2 = rtcd_reduce_contacts(c + poisoned, n - poisoned, without);
    assert_int_equal(m1, m2);
    for (uint32_t k = 0; k < m1; ++k) assert_memory_equal(&with[k], &without[k], sizeof with[k]);
    /* The square's corners: the deepest first, then the spread. */
    assert_int_equal(with[0].feature, 20);
    assert_int_equal(with[1].feature, 22);
    rtcd_set_error_callback(NULL, NULL);
}

/* Finite contacts whose scores overflow float: coordinates of 1e19 to
 * FLT_MAX (a squared distance or a doubled area is Inf, Inf - Inf is NaN),
 * depths of +-FLT_MAX. Every one is valid: four are kept. */
static void test_reduction_overflowing_scores(void** state)
{
    (void)state;
    const float big[] = {5e9f, 1e10f, 1e19f, 1e30f, FLT_MAX};
    for (size_t b = 0; b < sizeof big / sizeof big[0]; ++b) {
        float s = big[b];
        rtcd_contact c[8];
        c[0] = make_contact(-s, -s, 0, 1.0f, 10);
        c[1] = make_contact(s, -s, 0, 1.0f, 11);
        c[2] = make_contact(s, s, 0, 1.0f, 12);
        c[3] = make_contact(-s, s, 0, 1.0f, 13);
        c[4] = make_contact(0, 0, s, 1.0f, 14);
        c[5] = make_contact(-s, 0, -s, 1.0f, 15);
        c[6] = make_contact(s, s, s, FLT_MAX, 16);
        c[7] = make_contact(-s, -s, -s, -FLT_MAX, 17);
        char what[64];
        snprintf(what, sizeof what, "coordinates %g", (double)s);
        assert_int_equal(check_reduction(what, c, 8), 4);
        /* The deepest first, whatever else overflows. */
        rtcd_contact out[4];
        assert_int_equal(rtcd_reduce_contacts(c, 8, out), 4);
        assert_int_equal(out[0].feature, 16);
        /* Three and four of them, all depths equal. */
        assert_int_equal(check_reduction(what, c, 3), 3);
        assert_int_equal(check_reduction(what, c, 4), 4);
    }
}

/* An allocator that refuses everything. */
static void* refusing_alloc(size_t size, size_t alignment, void* user)
{
    (void)size, (void)alignment, (void)user;
    return NULL;
}

static void plain_free(void* p, void* user)
{
    (void)user;
    free(p);
}

/* Out of memory with 1000 contacts (past the reduction's stack): reported,
 * and four of them still come out, the deepest first, with no NaN one. */
static void test_reduction_out_of_memory(void** state)
{
    (void)state;
    enum { N = 1000 };
    static rtcd_contact c[N];
    uint64_t rng = 12345;
    for (uint32_t i = 0; i < N; ++i) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        float x = (float)((rng >> 40) % 1000) * 1e-3f, y = (float)((rng >> 20) % 1000) * 1e-3f;
        c[i] = make_contact(x, y, 0.0f, 0.01f + 1e-5f * (float)(i % 97), i);
    }
    c[617].depth = 0.5f; /* the deepest */
    rtcd_contact with_memory[4], without[4];
    assert_int_equal(rtcd_reduce_contacts(c, N, with_memory), 4);
    assert_int_equal(with_memory[0].feature, 617);
    rtcd_set_error_callback(record_error, NULL);
    for (int poisoned = 0; poisoned < 2; ++poisoned) {
        if (poisoned) c[300].depth = NAN; /* dropped, and reported too */
        rtcd_set_allocator(refusing_alloc, plain_free, NULL);
        errors_reset();
        uint32_t m = rtcd_reduce_contacts(c, N, without);
        rtcd_set_allocator(NULL, NULL, NULL);
        assert_int_equal(m, 4);
        assert_int_equal(g_errors.count, 1 + poisoned);
        if (!poisoned) {
            assert_int_equal(g_errors.code, RTCD_ERROR_OUT_OF_MEMORY);
            assert_non_null(strstr(g_errors.message, "no memory"));
        } else {
            assert_non_null(strstr(g_errors.message, "not finite"));
        }
        assert_int_equal(without[0].feature, 617);
        for (uint32_t k = 0; k < m; ++k) {
            assert_true(contact_is_finite(&without[k]));
            for (uint32_t j = 0; j < k; ++j) assert_int_not_equal(without[j].feature, without[k].feature);
        }
    }
    rtcd_set_error_callback(NULL, NULL);
}

/* Random contacts drawn from ordinary values, huge ones and non-finite
 * ones: never a crash, always min(4, valid) finite inputs out. */
static void test_reduction_random_hostile(void** state)
{
    (void)state;
    test_rng rng = {0x12a12a12aull};
    const float pool[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.25f, 1e-30f, 1e-45f, 5e9f, -5e9f, 1e10f, 1e19f, -1e19f,
                          1e30f, FLT_MAX, -FLT_MAX, INFINITY, -INFINITY, NAN};
    const uint32_t n_pool = sizeof pool / sizeof pool[0];
    rtcd_contact c[40];
    for (int iter = 0; iter < 3000; ++iter) {
        uint32_t n = 1 + (uint32_t)(test_rng_next(&rng) % 40);
        int wild = (int)(test_rng_next(&rng) % 4); /* 0: ordinary values only */
        for (uint32_t i = 0; i < n; ++i) {
            float v[7];
            for (int k = 0; k < 7; ++k) {
                int pick_pool = wild && test_rng_next(&rng) % (uint64_t)(2 + 6 * (3 - wild)) == 0;
                v[k] = pick_pool ? pool[test_rng_next(&rng) % n_pool] : (float)test_rng_range(&rng, -2.0, 2.0);
            }
            c[i] = make_contact(v[0], v[1], v[2], v[3], (uint32_t)(test_rng_next(&rng) % 64));
            c[i].normal_on_b[0] = v[4], c[i].normal_on_b[1] = v[5], c[i].normal_on_b[2] = v[6];
            c[i].feature = (uint32_t)i * 7u % 41u; /* unique within the call */
        }
        char what[64];
        snprintf(what, sizeof what, "random call %d", iter);
        check_reduction(what, c, n);
    }
}

/* A contact from a ray with non-finite data is reported, and is not finite,
 * so the reduction drops it. */
static void test_contact_from_nonfinite_ray(void** state)
{
    (void)state;
    rtcd_ray_hit good;
    memset(&good, 0, sizeof good);
    good.vertex = 3;
    good.ray_dir[2] = -1.0f;
    good.normal[2] = -1.0f;
    good.length = 0.1f;
    errors_reset();
    rtcd_contact ok = rtcd_contact_from_ray(&good, RTCD_CONTACT_REPROJECTED);
    assert_int_equal(g_errors.count, 0);
    assert_true(contact_is_finite(&ok));
    const float bad[] = {INFINITY, -INFINITY, NAN};
    for (int field = 0; field < 10; ++field) {
        for (int b = 0; b < 3; ++b) {
            for (int mode = 0; mode < 3; ++mode) {
                rtcd_ray_hit r = good;
                if (field < 3) r.origin[field] = bad[b];
                else if (field < 6) r.ray_dir[field - 3] = bad[b];
                else if (field < 9) r.normal[field - 6] = bad[b];
                else r.length = bad[b];
                errors_reset();
                rtcd_contact c = rtcd_contact_from_ray(&r, (rtcd_contact_normal)mode);
                expect_invalid("rtcd_contact_from_ray with a non-finite ray", "rtcd_contact_from_ray", "finite");
                assert_false(contact_is_finite(&c));
                rtcd_contact both[2] = {c, ok}, out[4];
                assert_int_equal(rtcd_reduce_contacts(both, 2, out), 1);
                assert_memory_equal(&out[0], &ok, sizeof ok);
            }
        }
    }
    rtcd_set_error_callback(NULL, NULL);
}

/* The pattern of docs/c-api.md (rtcd_collide_standard, rtcd_contact_from_ray,
 * rtcd_reduce_contacts) on two overlapping spheres of radius `radius`.
 * Returns the number of colliding rays (0 when the mesh is refused). */
static uint32_t readme_pattern(float radius)
{
    rtcd_generated_mesh g;
    assert_int_equal(rtcd_generate_uv_sphere(16, 24, radius, &g), RTCD_OK);
    rtcd_mesh_def def = rtcd_default_mesh_def();
    def.vertices = g.vertices;
    def.vertex_count = g.vertex_count;
    def.indices = g.indices;
    def.triangle_count = g.triangle_count;
    def.name = "huge sphere";
    rtcd_mesh* mesh = NULL;
    rtcd_error err = rtcd_mesh_create(&def, &mesh);
    rtcd_generated_free(&g);
    if (err != RTCD_OK) {
        print_message("radius %g: refused (%s: %s)\n", (double)radius, rtcd_error_name(err), rtcd_last_error_message());
        assert_int_equal(err, RTCD_ERROR_MESH_OUT_OF_RANGE);
        assert_null(mesh);
        return 0;
    }
    rtcd_narrowphase_def nd = rtcd_default_narrowphase_def();
    rtcd_transform pose_a = rtcd_transform_identity(), pose_b = rtcd_transform_identity();
    pose_b.translation[0] = radius; /* overlapping by a radius */
    pose_b.translation[1] = 0.1f * radius;
    uint32_t cap = 2 * rtcd_mesh_vertex_count(mesh), n = 0;
    rtcd_ray_hit* rays = calloc(cap, sizeof *rays);
    rtcd_contact* c = calloc(cap, sizeof *c);
    assert_true(rays && c);
    assert_int_equal(rtcd_collide_standard(&nd, mesh, &pose_a, mesh, &pose_b, rays, cap, &n, NULL), RTCD_OK);
    for (uint32_t i = 0; i < n; ++i) c[i] = rtcd_contact_from_ray(&rays[i], nd.contact_normal);
    rtcd_contact manifold[4];
    uint32_t m = rtcd_reduce_contacts(c, n, manifold);
    uint32_t finite = 0;
    for (uint32_t i = 0; i < n; ++i) finite += (uint32_t)contact_is_finite(&c[i]);
    print_message("radius %g: %u colliding rays (%u finite contacts), %u kept\n", (double)radius, n, finite, m);
    assert_int_equal(m, finite < 4 ? finite : 4);
    for (uint32_t k = 0; k < m; ++k) assert_true(contact_is_finite(&manifold[k]));
    check_reduction("README pattern", c, n);
    free(rays);
    free(c);
    rtcd_mesh_release(mesh);
    return n;
}

/* The range of validity (rtcd_mesh.h) at mesh creation: a body too small,
 * too large, too far from its origin, or too small for where it lies. */
static void test_mesh_range_of_validity(void** state)
{
    (void)state;
    struct {
        float radius, offset;
        rtcd_error want;
    } cases[] = {
        {0.5f, 0.0f, RTCD_OK},           {4e-4f, 0.0f, RTCD_ERROR_MESH_OUT_OF_RANGE},
        {5e-4f, 0.0f, RTCD_OK},          {5e3f, 0.0f, RTCD_OK},
        {6e3f, 0.0f, RTCD_ERROR_MESH_OUT_OF_RANGE}, {0.5f, 4e3f, RTCD_OK},          {60.0f, 9e4f, RTCD_OK},
        {0.5f, 2e5f, RTCD_ERROR_MESH_OUT_OF_RANGE}, {1e-3f, 5e4f, RTCD_ERROR_MESH_OUT_OF_RANGE},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        rtcd_generated_mesh g;
        assert_int_equal(rtcd_generate_uv_sphere(8, 12, cases[k].radius, &g), RTCD_OK);
        for (uint32_t i = 0; i < g.vertex_count; ++i) g.vertices[3 * i] += cases[k].offset;
        rtcd_mesh_def def = rtcd_default_mesh_def();
        def.vertices = g.vertices, def.vertex_count = g.vertex_count;
        def.indices = g.indices, def.triangle_count = g.triangle_count;
        def.name = "ranged";
        rtcd_mesh* m = NULL;
        rtcd_error err = rtcd_mesh_create(&def, &m);
        rtcd_generated_free(&g);
        if (err != cases[k].want)
            fail_msg("radius %g at %g: %s (%s), want %s", (double)cases[k].radius, (double)cases[k].offset,
                     rtcd_error_name(err), rtcd_last_error_message(), rtcd_error_name(cases[k].want));
        if (err != RTCD_OK) assert_non_null(strstr(rtcd_last_error_message(), "ranged"));
        rtcd_mesh_release(m);
    }
}

static void test_readme_pattern_huge_spheres(void** state)
{
    (void)state;
    rtcd_set_log(quiet_log, NULL);
    /* 1e10 m, the case (areas of 1e20 m^2 square to Inf), and beyond:
     * outside the range of validity, refused where the mesh is made. */
    const float beyond[] = {1e10f, 5e9f, 1e15f, 1e19f, 1e30f, 1e-11f};
    for (size_t k = 0; k < sizeof beyond / sizeof beyond[0]; ++k) {
        assert_int_equal(readme_pattern(beyond[k]), 0);
        assert_non_null(strstr(rtcd_last_error_message(), "huge sphere"));
    }
    /* Its edges: a body of 10 km and one of 1 mm, and the usual 1 m. */
    const float within[] = {5e3f, 1.0f, 5e-4f};
    for (size_t k = 0; k < sizeof within / sizeof within[0]; ++k) assert_true(readme_pattern(within[k]) >= 3);
    rtcd_set_log(NULL, NULL);
}

/* The kernels' reductions (serial and work-group) on the same pair: no
 * crash, and the CPU batch's result bit for bit. */
static rtcd_batch* create_batch(rtcd_backend backend, const char* kernel)
{
    rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
    def.backend = backend;
    def.max_devices = 1;
    def.threads = 1;
    return test_create_batch(&def, kernel);
}

enum { HUGE_PAIRS = 6, HUGE_STEPS = 3 };

/* Pairs of spheres at the largest size within the range of validity (10 km
 * across; 1e10 m, the case, is refused at creation now) overlapping
 * in several ways, over a few steps (the iterative pass too). */
#define HUGE_RADIUS 5e3f
static uint32_t huge_pairs(rtcd_mesh* const* meshes, int step, rtcd_pair_desc* pairs)
{
    for (uint32_t i = 0; i < HUGE_PAIRS; ++i) {
        rtcd_pair_desc* p = &pairs[i];
        memset(p, 0, sizeof *p);
        const rtcd_mesh* m = meshes[i < 4 ? 0 : 1];
        float r = HUGE_RADIUS;
        p->a = p->b = m;
        p->key = 100 + i;
        p->pose_a = rtcd_transform_identity();
        float q[4] = {0.0f, 0.0f, sinf(0.1f * (float)(i + step)), cosf(0.1f * (float)(i + step))};
        p->pose_b = rtcd_transform_from_quat(q, NULL);
        p->pose_b.translation[0] = r * (0.5f + 0.3f * (float)(i % 4)) + 0.01f * r * (float)step;
        p->pose_b.translation[1] = 0.05f * r * (float)i;
        p->pose_b.translation[2] = -0.02f * r * (float)step;
    }
    return HUGE_PAIRS;
}

/* The batch on the huge pairs: the CPU reference, and with `opencl` both
 * kernels, compared with it bit for bit. */
static void run_huge_batches(int opencl)
{
    rtcd_set_log(quiet_log, NULL);
    rtcd_mesh* meshes[2] = {test_make_uv_sphere(16, 24, HUGE_RADIUS), NULL};
    rtcd_generated_mesh g;
    assert_int_equal(rtcd_generate_uv_sphere(16, 24, 1e19f, &g), RTCD_OK);
    rtcd_mesh_def def = rtcd_default_mesh_def();
    def.vertices = g.vertices, def.vertex_count = g.vertex_count;
    def.indices = g.indices, def.triangle_count = g.triangle_count;
    def.name = "1e19 sphere";
    if (rtcd_mesh_create(&def, &meshes[1]) != RTCD_OK) { /* refused: the 1e10 one again */
        rtcd_mesh_retain(meshes[0]);
        meshes[1] = meshes[0];
    }
    rtcd_generated_free(&g);
    rtcd_batch* cpu = create_batch(RTCD_BACKEND_CPU, NULL);
    rtcd_batch* cl_serial = opencl ? create_batch(RTCD_BACKEND_OPENCL, "serial") : NULL;
    rtcd_batch* cl_group = opencl ? create_batch(RTCD_BACKEND_OPENCL, "group") : NULL;
    rtcd_pair_desc pairs[HUGE_PAIRS];
    rtcd_pair_result want[HUGE_PAIRS], got[HUGE_PAIRS];
    uint32_t contacts = 0;
    for (int step = 0; step < HUGE_STEPS; ++step) {
        uint32_t n = huge_pairs(meshes, step, pairs);
        memset(want, 0, sizeof want);
        assert_int_equal(rtcd_batch_collide(cpu, pairs, n, want, NULL), RTCD_OK);
        for (uint32_t i = 0; i < n; ++i) {
            assert_true(want[i].contact_count <= 4);
            for (uint32_t k = 0; k < want[i].contact_count; ++k) assert_true(contact_is_finite(&want[i].contacts[k]));
            contacts += want[i].contact_count;
        }
        rtcd_batch* others[2] = {cl_serial, cl_group};
        const char* names[2] = {"serial kernel", "work-group kernel"};
        for (int o = 0; o < 2; ++o) {
            if (!others[o]) continue;
            memset(got, 0, sizeof got);
            assert_int_equal(rtcd_batch_collide(others[o], pairs, n, got, NULL), RTCD_OK);
            for (uint32_t i = 0; i < n; ++i) {
                if (got[i].contact_count != want[i].contact_count)
                    fail_msg("step %d pair %u, %s: %u contacts, the CPU %u", step, i, names[o], got[i].contact_count,
                             want[i].contact_count);
                for (uint32_t k = 0; k < want[i].contact_count; ++k)
                    if (memcmp(&got[i].contacts[k], &want[i].contacts[k], sizeof want[i].contacts[k]) != 0)
                        fail_msg("step %d pair %u, %s: contact %u (feature %08x, depth %.9g) differs from the CPU's "
                                 "(feature %08x, depth %.9g)",
                                 step, i, names[o], k, got[i].contacts[k].feature, (double)got[i].contacts[k].depth,
                                 want[i].contacts[k].feature, (double)want[i].contacts[k].depth);
            }
        }
    }
    print_message("%u contacts over %d steps of %d huge pairs%s\n", contacts, HUGE_STEPS, HUGE_PAIRS,
                  opencl ? ", the same from both kernels" : "");
    assert_true(contacts > 0); /* not vacuous */
    rtcd_batch_release(cl_group);
    rtcd_batch_release(cl_serial);
    rtcd_batch_release(cpu);
    rtcd_mesh_release(meshes[1]);
    rtcd_mesh_release(meshes[0]);
    rtcd_set_log(NULL, NULL);
}

static void test_batch_huge_spheres_cpu(void** state)
{
    (void)state;
    run_huge_batches(0);
}

static void test_batch_huge_spheres_opencl(void** state)
{
    (void)state;
    if (!test_opencl_available()) skip();
    run_huge_batches(1);
}

/* ---- 2. NULL pointers ---- */

static void test_null_pointers(void** state)
{
    (void)state;
    rtcd_mesh* m = test_make_box(1.0f, 2.0f, 3.0f, 1);
    /* rtcd_mesh_bounds: a NULL output is skipped, a NULL mesh gives zeros. */
    rtcd_mesh_bounds(m, NULL, NULL);
    float lo[3] = {9, 9, 9}, hi[3] = {9, 9, 9};
    rtcd_mesh_bounds(m, lo, NULL);
    assert_float_near(lo[1], -2.0f, 1e-4);
    rtcd_mesh_bounds(m, NULL, hi);
    assert_float_near(hi[2], 3.0f, 1e-4);
    rtcd_mesh_bounds(NULL, lo, hi);
    for (int k = 0; k < 3; ++k) assert_true(lo[k] == 0.0f && hi[k] == 0.0f);
    rtcd_mesh_bounds(NULL, NULL, NULL);
    rtcd_mesh_release(m);

    /* rtcd_contact_from_ray(NULL): reported; a contact the reduction drops. */
    errors_reset();
    rtcd_contact c = rtcd_contact_from_ray(NULL, RTCD_CONTACT_REPROJECTED);
    expect_invalid("rtcd_contact_from_ray(NULL)", "rtcd_contact_from_ray", "NULL");
    assert_false(contact_is_finite(&c));
    rtcd_contact out[4];
    assert_int_equal(rtcd_reduce_contacts(&c, 1, out), 0);

    /* rtcd_transform_from_quat(NULL, t): reported; the identity rotation at t. */
    errors_reset();
    float t[3] = {1.0f, 2.0f, 3.0f};
    rtcd_transform x = rtcd_transform_from_quat(NULL, t);
    expect_invalid("rtcd_transform_from_quat(NULL, t)", "rtcd_transform_from_quat", "NULL");
    rtcd_transform id = rtcd_transform_identity();
    assert_memory_equal(x.rotation, id.rotation, sizeof id.rotation);
    assert_memory_equal(x.translation, t, sizeof t);
    errors_reset();
    x = rtcd_transform_from_quat(NULL, NULL);
    expect_invalid("rtcd_transform_from_quat(NULL, NULL)", "rtcd_transform_from_quat", "NULL");
    assert_memory_equal(&x, &id, sizeof id);
    /* A non-finite quaternion: reported, the identity rotation (not NaN). */
    const float bad[] = {INFINITY, -INFINITY, NAN};
    for (int k = 0; k < 4; ++k)
        for (int b = 0; b < 3; ++b) {
            float q[4] = {0.0f, 0.0f, 0.0f, 1.0f};
            q[k] = bad[b];
            errors_reset();
            x = rtcd_transform_from_quat(q, t);
            expect_invalid("rtcd_transform_from_quat(non-finite)", "rtcd_transform_from_quat", "finite");
            assert_memory_equal(x.rotation, id.rotation, sizeof id.rotation);
        }
    /* The ordinary cases say nothing. */
    errors_reset();
    float q[4] = {0.0f, 0.0f, 0.0f, 2.0f};
    x = rtcd_transform_from_quat(q, t);
    assert_memory_equal(x.rotation, id.rotation, sizeof id.rotation);
    assert_int_equal(g_errors.count, 0);
    float zero[4] = {0.0f, 0.0f, 0.0f, 0.0f}; /* no rotation, at t */
    x = rtcd_transform_from_quat(zero, t);
    assert_memory_equal(x.rotation, id.rotation, sizeof id.rotation);
    assert_memory_equal(x.translation, t, sizeof t);
    assert_int_equal(g_errors.count, 0);
    rtcd_set_error_callback(NULL, NULL);
}

/* ---- 3. out-of-range enum values ---- */

typedef enum def_field { FIELD_TRAVERSAL, FIELD_CONTACT_NORMAL, FIELD_ALGORITHM, FIELD_BACKEND, FIELD_COUNT } def_field;

static const char* field_name(def_field f)
{
    switch (f) {
    case FIELD_TRAVERSAL: return "traversal";
    case FIELD_CONTACT_NORMAL: return "contact_normal";
    case FIELD_ALGORITHM: return "algorithm";
    case FIELD_BACKEND: return "backend";
    default: return "?";
    }
}

static void set_field(rtcd_narrowphase_def* d, def_field f, int value)
{
    switch (f) {
    case FIELD_TRAVERSAL: d->traversal = (rtcd_traversal)value; break;
    case FIELD_CONTACT_NORMAL: d->contact_normal = (rtcd_contact_normal)value; break;
    case FIELD_ALGORITHM: d->iterative.algorithm = (rtcd_algorithm)value; break;
    case FIELD_BACKEND: d->backend = (rtcd_backend)value; break;
    default: break;
    }
}

static void test_out_of_range_enums(void** state)
{
    (void)state;
    rtcd_set_log(quiet_log, NULL);
    rtcd_mesh* m = test_make_uv_sphere(8, 12, 1.0f);
    rtcd_transform pa = rtcd_transform_identity(), pb = rtcd_transform_identity();
    pb.translation[0] = 1.5f;
    uint32_t cap = 2 * rtcd_mesh_vertex_count(m), n = 0;
    rtcd_ray_hit* rays = calloc(cap, sizeof *rays);
    assert_non_null(rays);
    rtcd_pair_state* st = NULL;
    assert_int_equal(rtcd_pair_state_create(&st), RTCD_OK);
    const int values[] = {7, -1, 99, 42, 3, 1000000, -2147483647 - 1};
    for (int f = 0; f < FIELD_COUNT; ++f) {
        for (size_t v = 0; v < sizeof values / sizeof values[0]; ++v) {
            rtcd_narrowphase_def d = rtcd_default_narrowphase_def();
            d.backend = RTCD_BACKEND_CPU;
            set_field(&d, (def_field)f, values[v]);
            char value[32], what[96];
            snprintf(value, sizeof value, "%d", values[v]);
            snprintf(what, sizeof what, "%s = %d", field_name((def_field)f), values[v]);
            errors_reset();
            assert_int_equal(rtcd_narrowphase_def_validate(&d), RTCD_ERROR_INVALID_ARGUMENT);
            expect_invalid(what, field_name((def_field)f), value);
            /* Every function that takes the def refuses it before using it. */
            errors_reset();
            assert_int_equal(rtcd_collide_standard(&d, m, &pa, m, &pb, rays, cap, &n, NULL),
                             RTCD_ERROR_INVALID_ARGUMENT);
            expect_invalid(what, field_name((def_field)f), value);
            assert_int_equal(n, 0);
            errors_reset();
            assert_int_equal(rtcd_collide_iterative(&d, st, m, &pa, m, &pb, rays, cap, &n, NULL),
                             RTCD_ERROR_INVALID_ARGUMENT);
            expect_invalid(what, field_name((def_field)f), value);
            errors_reset();
            rtcd_batch* b = (rtcd_batch*)0x1;
            assert_int_equal(rtcd_batch_create(&d, &b), RTCD_ERROR_INVALID_ARGUMENT);
            assert_null(b);
            expect_invalid(what, field_name((def_field)f), value);
            /* The contact mode alone. */
            if (f == FIELD_CONTACT_NORMAL) {
                rtcd_ray_hit r;
                memset(&r, 0, sizeof r);
                r.ray_dir[2] = r.normal[2] = -1.0f;
                r.length = 0.1f;
                errors_reset();
                rtcd_contact c = rtcd_contact_from_ray(&r, (rtcd_contact_normal)values[v]);
                expect_invalid(what, "mode", value);
                assert_false(contact_is_finite(&c));
            }
        }
    }
    /* The names of unknown values. */
    assert_string_equal(rtcd_backend_name((rtcd_backend)42), "unknown");
    assert_string_equal(rtcd_algorithm_name((rtcd_algorithm)-1), "unknown");
    rtcd_pair_state_release(st);
    free(rays);
    rtcd_mesh_release(m);
    rtcd_set_error_callback(NULL, NULL);
    rtcd_set_log(NULL, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reduction_nonfinite_contacts),
        cmocka_unit_test(test_reduction_overflowing_scores),
        cmocka_unit_test(test_reduction_random_hostile),
        cmocka_unit_test(test_reduction_out_of_memory),
        cmocka_unit_test(test_contact_from_nonfinite_ray),
        cmocka_unit_test(test_mesh_range_of_validity),
        cmocka_unit_test(test_readme_pattern_huge_spheres),
        cmocka_unit_test(test_batch_huge_spheres_cpu),
        cmocka_unit_test(test_batch_huge_spheres_opencl),
        cmocka_unit_test(test_null_pointers),
        cmocka_unit_test(test_out_of_range_enums),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
