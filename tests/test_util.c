#include "test_util.h"

#include "scene_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The scenes' generator, so tests draw the same sequences as the scenes. */
uint64_t test_rng_next(test_rng* rng) { return scene_rng_next(&rng->state); }

double test_rng_uniform(test_rng* rng) { return scene_rng_uniform(&rng->state); }

double test_rng_range(test_rng* rng, double lo, double hi) { return lo + (hi - lo) * test_rng_uniform(rng); }

void test_rng_unit_vector(test_rng* rng, float out[3])
{
    double z = test_rng_range(rng, -1.0, 1.0), phi = test_rng_range(rng, 0.0, 2.0 * M_PI);
    double r = sqrt(1.0 - z * z);
    out[0] = (float)(r * cos(phi));
    out[1] = (float)(r * sin(phi));
    out[2] = (float)z;
}

rtcd_transform test_random_pose(test_rng* rng, float max_translation)
{
    /* The scenes' rotation (same generator, same draws), then the translation. */
    rtcd_transform pose = scene_random_pose(&rng->state, 0.0f, 0.0f, 0.0f);
    for (int i = 0; i < 3; ++i) pose.translation[i] = (float)test_rng_range(rng, -max_translation, max_translation);
    return pose;
}

rtcd_mesh* test_mesh_from_generated(rtcd_generated_mesh* g, const char* name)
{
    rtcd_mesh* mesh = NULL;
    rtcd_error err = scene_mesh_from_generated(g, name, &mesh);
    if (err != RTCD_OK) fprintf(stderr, "%s: %s: %s\n", name, rtcd_error_name(err), rtcd_last_error_message());
    assert_int_equal(err, RTCD_OK);
    return mesh;
}

rtcd_mesh* test_make_blob(uint32_t vertex_count, float radius, uint64_t seed)
{
    rtcd_generated_mesh g;
    assert_int_equal(rtcd_generate_blob(vertex_count, radius, seed, &g), RTCD_OK);
    return test_mesh_from_generated(&g, "blob");
}

rtcd_mesh* test_make_uv_sphere(uint32_t rings, uint32_t segments, float radius)
{
    rtcd_generated_mesh g;
    assert_int_equal(rtcd_generate_uv_sphere(rings, segments, radius, &g), RTCD_OK);
    return test_mesh_from_generated(&g, "uv_sphere");
}

rtcd_mesh* test_make_box(float hx, float hy, float hz, uint32_t subdivisions)
{
    rtcd_generated_mesh g;
    float h[3] = {hx, hy, hz};
    assert_int_equal(rtcd_generate_box(h, subdivisions, &g), RTCD_OK);
    return test_mesh_from_generated(&g, "box");
}

rtcd_error test_collide_iterative(const rtcd_narrowphase_def* def, const rtcd_iterative_def* idef,
                                  rtcd_pair_state* state, const rtcd_mesh* a, const rtcd_transform* pose_a,
                                  const rtcd_mesh* b, const rtcd_transform* pose_b, rtcd_ray_hit* rays,
                                  uint32_t ray_capacity, uint32_t* ray_count, rtcd_narrowphase_stats* stats)
{
    rtcd_narrowphase_def d = *def;
    d.iterative = *idef;
    return rtcd_collide_iterative(&d, state, a, pose_a, b, pose_b, rays, ray_capacity, ray_count, stats);
}

int test_opencl_available(void)
{
    static int known = -1; /* -1: not probed yet */
    if (known >= 0) return known;
    rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
    def.backend = RTCD_BACKEND_OPENCL;
    rtcd_batch* b = NULL;
    rtcd_error err = rtcd_batch_create(&def, &b);
    known = err == RTCD_OK;
    if (err == RTCD_OK)
        print_message("OpenCL: %u device(s), first %s\n", rtcd_batch_device_count(b), rtcd_batch_device_name(b, 0));
    else if (err == RTCD_ERROR_UNSUPPORTED)
        print_message("notice: this build has no OpenCL (RTCD_WITH_OPENCL=OFF): OpenCL checks skipped\n");
    else
        print_message("notice: no OpenCL device here (%s: %s): OpenCL checks skipped\n", rtcd_error_name(err),
                      rtcd_last_error_message());
    if (err != RTCD_OK) assert_null(b);
    rtcd_batch_release(b);
    return known;
}

rtcd_batch* test_create_batch(const rtcd_narrowphase_def* def, const char* kernel)
{
    const char* before = getenv("RTCD_CL_KERNEL");
    char* saved = before ? strdup(before) : NULL;
    if (kernel) setenv("RTCD_CL_KERNEL", kernel, 1);
    rtcd_batch* b = NULL;
    rtcd_error err = rtcd_batch_create(def, &b);
    if (saved) {
        setenv("RTCD_CL_KERNEL", saved, 1);
        free(saved);
    } else {
        unsetenv("RTCD_CL_KERNEL");
    }
    if (err != RTCD_OK) fprintf(stderr, "%s: %s\n", rtcd_error_name(err), rtcd_last_error_message());
    assert_int_equal(err, RTCD_OK);
    if (def->backend != RTCD_BACKEND_AUTO) assert_int_equal(rtcd_batch_backend(b), def->backend);
    return b;
}

/* ---- the failing allocator (test_util.h) ---- */

static long g_allow = -1; /* < 0: never fails */
static long g_failed = 0, g_live = 0;

static void* failing_alloc(size_t size, size_t alignment, void* user)
{
    (void)user;
    if (g_allow == 0) {
        g_failed++;
        return NULL;
    }
    if (g_allow > 0) g_allow--;
    void* p = NULL;
    if (alignment < sizeof(void*)) alignment = sizeof(void*);
    if (posix_memalign(&p, alignment, size ? size : 1) != 0) return NULL;
    g_live++;
    return p;
}

static void counting_free(void* p, void* user)
{
    (void)user;
    if (p) g_live--;
    free(p);
}

void test_failing_allocator_install(void)
{
    g_allow = -1;
    g_failed = g_live = 0;
    rtcd_set_allocator(failing_alloc, counting_free, NULL);
}

void test_fail_after(long n)
{
    g_allow = n;
    g_failed = g_live = 0;
}

long test_failed_allocations(void) { return g_failed; }

long test_live_allocations(void) { return g_live; }

/* ---- comparing results (test_util.h) ---- */

int test_by_ray(const void* a, const void* b)
{
    const rtcd_ray_hit* x = a;
    const rtcd_ray_hit* y = b;
    if (x->direction != y->direction) return x->direction < y->direction ? -1 : 1;
    return x->vertex < y->vertex ? -1 : (x->vertex > y->vertex);
}

static void same_u32(const char* where, const char* field, uint32_t want, uint32_t got)
{
    if (want != got) fail_msg("%s: %s is %u, the reference has %u", where, field, got, want);
}

void test_same_rays(const char* where, const rtcd_ray_hit* want, const rtcd_ray_hit* got, uint32_t count)
{
    for (uint32_t r = 0; r < count; ++r)
        if (memcmp(&want[r], &got[r], sizeof want[r]) != 0)
            fail_msg("%s: ray %u of %u (direction %u, vertex %u) differs from the reference's (direction %u, vertex %u)",
                     where, r, count, got[r].direction, got[r].vertex, want[r].direction, want[r].vertex);
}

void test_same_contacts(const char* where, const rtcd_contact* want, uint32_t want_count, const rtcd_pair_result* got)
{
    same_u32(where, "contact_count", want_count, got->contact_count);
    for (uint32_t c = 0; c < want_count; ++c)
        if (memcmp(&want[c], &got->contacts[c], sizeof want[c]) != 0)
            fail_msg("%s: contact %u (feature %08x, depth %.9g) differs from the reference's (feature %08x, depth %.9g)",
                     where, c, got->contacts[c].feature, (double)got->contacts[c].depth, want[c].feature,
                     (double)want[c].depth);
}

void test_same_result(const char* where, const rtcd_pair_result* want, const rtcd_pair_result* got, int exact)
{
    same_u32(where, "colliding_rays", want->colliding_rays, got->colliding_rays);
    same_u32(where, "standard_pass", want->standard_pass, got->standard_pass);
    same_u32(where, "kept_rays", want->kept_rays, got->kept_rays);
    same_u32(where, "kept_predictions", want->kept_predictions, got->kept_predictions);
    same_u32(where, "walk_steps", want->walk_steps, got->walk_steps);
    same_u32(where, "crossing_contacts", want->crossing_contacts, got->crossing_contacts);
    test_same_contacts(where, want->contacts, want->contact_count, got);
    if (exact) {
        /* Work counts: the CPU skips clusters of vertices whose rays the
         * kernels cast and find nothing with. */
        same_u32(where, "rays_cast", want->rays_cast, got->rays_cast);
        same_u32(where, "predictive_rays", want->predictive_rays, got->predictive_rays);
        same_u32(where, "device", want->device, got->device);
    }
    if (exact == 1) {
        if (memcmp(&want->ray_length, &got->ray_length, sizeof want->ray_length) != 0)
            fail_msg("%s: ray_length %.9g, the reference has %.9g", where, (double)got->ray_length,
                     (double)want->ray_length);
    } else if (fabs((double)want->ray_length - (double)got->ray_length) > 1e-4 * (1.0 + want->ray_length)) {
        fail_msg("%s: ray_length %.9g, the reference has %.9g", where, (double)got->ray_length, (double)want->ray_length);
    }
}

void test_rotate_by(rtcd_transform* t, const float w[3])
{
    float angle = sqrtf(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
    if (angle == 0.0f) return;
    float k[3] = {w[0] / angle, w[1] / angle, w[2] / angle}, c = cosf(angle), s = sinf(angle), C = 1.0f - c;
    float r[9] = {c + k[0] * k[0] * C,        k[0] * k[1] * C - k[2] * s, k[0] * k[2] * C + k[1] * s,
                  k[1] * k[0] * C + k[2] * s, c + k[1] * k[1] * C,        k[1] * k[2] * C - k[0] * s,
                  k[2] * k[0] * C - k[1] * s, k[2] * k[1] * C + k[0] * s, c + k[2] * k[2] * C};
    float out[9];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            out[3 * i + j] = r[3 * i] * t->rotation[j] + r[3 * i + 1] * t->rotation[3 + j] +
                             r[3 * i + 2] * t->rotation[6 + j];
    memcpy(t->rotation, out, sizeof out);
}
