/* Open one-sided surfaces (RTCD_MESH_OPEN_SURFACE): validation, the inside
 * rule against the analytic height field, rays against the same surface
 * closed into a slab (an independent closed mesh), and CPU reference against
 * OpenCL bit for bit. */
#include "test_util.h"

#include <rtcd/rtcd_batch.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GRID 24
#define SIZE 8.0f
#define SLAB 1.0f /* the slab's thickness below the surface */

static float height(float x, float y) { return 0.15f * sinf(0.9f * x) * cosf(0.7f * y); }

/* The grid surface z = height(x, y), counter-clockwise from above; with
 * `slab`, closed by a flat bottom SLAB below its lowest point and four walls
 * (the top's vertices and triangles come first, numbered the same). */
static rtcd_mesh* terrain(int slab, uint32_t flags)
{
    const int n = GRID, nv_top = (n + 1) * (n + 1);
    float* v = malloc(sizeof(float) * 3 * 2 * nv_top);
    uint32_t* idx = malloc(sizeof(uint32_t) * 3 * (4 * n * n + 8 * n));
    uint32_t nv = 0, nt = 0;
    for (int j = 0; j <= n; ++j)
        for (int i = 0; i <= n; ++i) {
            float x = SIZE * ((float)i / n - 0.5f), y = SIZE * ((float)j / n - 0.5f);
            v[3 * nv] = x, v[3 * nv + 1] = y, v[3 * nv + 2] = height(x, y);
            ++nv;
        }
#define TRI(a, b, c) (idx[3 * nt] = (a), idx[3 * nt + 1] = (b), idx[3 * nt + 2] = (c), ++nt)
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
            uint32_t a = j * (n + 1) + i, b = a + 1, c = a + n + 1, d = c + 1;
            TRI(a, b, d);
            TRI(a, d, c);
        }
    if (slab) {
        for (int k = 0; k < nv_top; ++k) {
            v[3 * (nv_top + k)] = v[3 * k], v[3 * (nv_top + k) + 1] = v[3 * k + 1];
            v[3 * (nv_top + k) + 2] = -0.15f - SLAB;
        }
        nv = 2 * nv_top;
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i) {
                uint32_t a = nv_top + j * (n + 1) + i, b = a + 1, c = a + n + 1, d = c + 1;
                TRI(a, d, b); /* facing down */
                TRI(a, c, d);
            }
        /* Walls along the border, outward. */
        for (int k = 0; k < n; ++k) {
            uint32_t s0 = k, s1 = k + 1;                                   /* y = min, x rising */
            TRI(s0, s0 + nv_top, s1 + nv_top), TRI(s0, s1 + nv_top, s1);
            uint32_t e0 = k * (n + 1) + n, e1 = e0 + n + 1;                /* x = max, y rising */
            TRI(e0, e0 + nv_top, e1 + nv_top), TRI(e0, e1 + nv_top, e1);
            uint32_t t0 = n * (n + 1) + k + 1, t1 = t0 - 1;                /* y = max, x falling */
            TRI(t0, t0 + nv_top, t1 + nv_top), TRI(t0, t1 + nv_top, t1);
            uint32_t w0 = (k + 1) * (n + 1), w1 = k * (n + 1);             /* x = min, y falling */
            TRI(w0, w0 + nv_top, w1 + nv_top), TRI(w0, w1 + nv_top, w1);
        }
    }
#undef TRI
    rtcd_mesh_def def = rtcd_default_mesh_def();
    def.vertices = v;
    def.vertex_count = nv;
    def.indices = idx;
    def.triangle_count = nt;
    def.flags = flags;
    def.name = slab ? "slab" : "terrain";
    rtcd_mesh* m = NULL;
    rtcd_error err = rtcd_mesh_create(&def, &m);
    if (err != RTCD_OK && flags == RTCD_MESH_OPEN_SURFACE)
        fail_msg("%s: %s", rtcd_error_name(err), rtcd_last_error_message());
    free(v);
    free(idx);
    return m;
}

static void test_validation(void** state)
{
    (void)state;
    assert_null(terrain(0, 0)); /* open without the flag */
    assert_int_equal(rtcd_mesh_create(NULL, NULL), RTCD_ERROR_INVALID_ARGUMENT);
    rtcd_mesh* m = terrain(0, RTCD_MESH_OPEN_SURFACE);
    assert_true(rtcd_mesh_is_open_surface(m));
    assert_float_near(rtcd_mesh_mass_properties(m).volume, 0.0, 0.0);
    rtcd_mesh_release(m);
    rtcd_mesh* slab = terrain(1, 0);
    assert_non_null(slab);
    assert_false(rtcd_mesh_is_open_surface(slab));
    rtcd_mesh_release(slab);
}

/* Behind the surface is inside: against z < height(x, y). */
static void test_inside_rule(void** state)
{
    (void)state;
    rtcd_mesh* m = terrain(0, RTCD_MESH_OPEN_SURFACE);
    test_rng rng = {11};
    int wrong = 0;
    for (int i = 0; i < 2000; ++i) {
        float p[3] = {(float)test_rng_range(&rng, -3.5, 3.5), (float)test_rng_range(&rng, -3.5, 3.5), 0};
        float h = height(p[0], p[1]);
        float dz = (float)test_rng_range(&rng, 0.02, 1.0) * (i % 2 ? 1.0f : -1.0f);
        p[2] = h + dz;
        wrong += rtcd_mesh_contains_point(m, p) != (dz < 0);
    }
    assert_int_equal(wrong, 0);
    rtcd_mesh_release(m);
}

/* The blob sunk into the surface at random places and turns: the open
 * surface gives the same colliding rays as the slab (same top vertices and
 * triangles), whichever traversal. */
static void test_rays_match_slab(void** state)
{
    (void)state;
    rtcd_mesh* open = terrain(0, RTCD_MESH_OPEN_SURFACE);
    rtcd_mesh* slab = terrain(1, 0);
    rtcd_mesh* blob = test_make_blob(RTCD_AVALANCHE_BLOB_VERTICES, 0.5f, 3);
    uint32_t cap = rtcd_mesh_vertex_count(blob) + rtcd_mesh_vertex_count(slab);
    rtcd_ray_hit* ro = malloc(sizeof *ro * cap);
    rtcd_ray_hit* rs = malloc(sizeof *rs * cap);
    rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
    test_rng rng = {5};
    rtcd_transform ident = rtcd_transform_identity();
    uint32_t total = 0;
    for (int trial = 0; trial < 40; ++trial) {
        def.traversal = trial % 2 ? RTCD_TRAVERSAL_BVH : RTCD_TRAVERSAL_BRUTE_FORCE;
        rtcd_transform pose = test_random_pose(&rng, 0.0f);
        float x = (float)test_rng_range(&rng, -2.5, 2.5), y = (float)test_rng_range(&rng, -2.5, 2.5);
        pose.translation[0] = x, pose.translation[1] = y;
        pose.translation[2] = height(x, y) + (float)test_rng_range(&rng, 0.2, 0.45);
        uint32_t no = 0, ns = 0;
        assert_int_equal(rtcd_collide_standard(&def, blob, &pose, open, &ident, ro, cap, &no, NULL), RTCD_OK);
        assert_int_equal(rtcd_collide_standard(&def, blob, &pose, slab, &ident, rs, cap, &ns, NULL), RTCD_OK);
        if (no != ns) fail_msg("trial %d: %u rays against the open surface, %u against the slab", trial, no, ns);
        for (uint32_t i = 0; i < no; ++i) {
            assert_int_equal(ro[i].direction, rs[i].direction);
            assert_int_equal(ro[i].vertex, rs[i].vertex);
            assert_int_equal(ro[i].triangle, rs[i].triangle);
            assert_float_near(ro[i].length, rs[i].length, 1e-6);
        }
        total += no;
    }
    print_message("%u colliding rays, all equal\n", total);
    assert_true(total > 200);
    free(ro);
    free(rs);
    rtcd_mesh_release(open);
    rtcd_mesh_release(slab);
    rtcd_mesh_release(blob);
}

/* Pairs with the open surface through the batch, 30 steps of a blob sliding
 * over it (iterative and predictive state, speculative contacts): the CPU
 * reference and OpenCL give the same bytes. */
static void test_cpu_matches_opencl(void** state)
{
    (void)state;
    rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
    def.backend = RTCD_BACKEND_OPENCL;
    def.max_devices = 1;
    rtcd_batch* cl = NULL;
    rtcd_error err = rtcd_batch_create(&def, &cl);
    if (err != RTCD_OK) {
        print_message("notice: no OpenCL here (%s): skipped\n", rtcd_error_name(err));
        skip();
    }
    def.backend = RTCD_BACKEND_CPU;
    def.iterative.algorithm = RTCD_ALGORITHM_PREDICTIVE;
    rtcd_batch* cpu = NULL;
    assert_int_equal(rtcd_batch_create(&def, &cpu), RTCD_OK);
    rtcd_narrowphase_def cdef = rtcd_batch_def(cl);
    cdef.iterative.algorithm = RTCD_ALGORITHM_PREDICTIVE;
    assert_int_equal(rtcd_batch_set_def(cl, &cdef), RTCD_OK);
    rtcd_mesh* open = terrain(0, RTCD_MESH_OPEN_SURFACE);
    rtcd_mesh* blob = test_make_blob(RTCD_AVALANCHE_BLOB_VERTICES, 0.5f, 4);
    rtcd_pair_desc d[2];
    memset(d, 0, sizeof d);
    uint32_t contacts = 0;
    for (int step = 0; step < 30; ++step) {
        for (int k = 0; k < 2; ++k) {
            d[k].a = k ? open : blob;
            d[k].b = k ? blob : open;
            rtcd_transform pose = rtcd_transform_identity();
            float x = -1.5f + 0.05f * step + k, y = 0.3f * k;
            pose.translation[0] = x, pose.translation[1] = y, pose.translation[2] = height(x, y) + 0.42f;
            (k ? &d[k].pose_b : &d[k].pose_a)[0] = pose;
            (k ? &d[k].pose_a : &d[k].pose_b)[0] = rtcd_transform_identity();
            d[k].key = 100 + k;
            d[k].motion = 0.06f;
        }
        rtcd_pair_result rc[2], ro[2];
        memset(rc, 0, sizeof rc);
        memset(ro, 0, sizeof ro);
        assert_int_equal(rtcd_batch_collide(cpu, d, 2, rc, NULL), RTCD_OK);
        assert_int_equal(rtcd_batch_collide(cl, d, 2, ro, NULL), RTCD_OK);
        for (int k = 0; k < 2; ++k) {
            /* What the kernels count or sum their own way (test_batch.c's
             * same_result): the rays cast, the summed length, the device. */
            ro[k].device = rc[k].device = 0;
            ro[k].rays_cast = rc[k].rays_cast;
            ro[k].ray_length = rc[k].ray_length;
            if (memcmp(&rc[k], &ro[k], sizeof rc[k]) != 0) {
                const unsigned char *x = (const void*)&rc[k], *y = (const void*)&ro[k];
                for (size_t b = 0; b < sizeof rc[k]; ++b)
                    if (x[b] != y[b]) print_message("byte %zu differs (contacts end at %zu)\n", b, sizeof rc[k].contacts);
                for (uint32_t c = 0; c < rc[k].contact_count; ++c)
                    print_message("cpu %08x %.9g  cl %08x %.9g\n", rc[k].contacts[c].feature, (double)rc[k].contacts[c].depth,
                                  ro[k].contacts[c].feature, (double)ro[k].contacts[c].depth);
            }
            if (memcmp(&rc[k], &ro[k], sizeof rc[k]) != 0)
                fail_msg("step %d pair %d: CPU %u contacts / %u rays, OpenCL %u / %u", step, k, rc[k].contact_count,
                         rc[k].colliding_rays, ro[k].contact_count, ro[k].colliding_rays);
            contacts += rc[k].contact_count;
        }
    }
    print_message("%u contacts over 30 steps, CPU and OpenCL equal\n", contacts);
    assert_true(contacts > 30);
    rtcd_batch_release(cpu);
    rtcd_batch_release(cl);
    rtcd_mesh_release(open);
    rtcd_mesh_release(blob);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_validation),
        cmocka_unit_test(test_inside_rule),
        cmocka_unit_test(test_rays_match_slab),
        cmocka_unit_test(test_cpu_matches_opencl),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
