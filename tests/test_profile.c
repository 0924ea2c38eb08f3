/* The batch's profile (rtcd_batch_stats): its host parts add up to the
 * call's wall time, the devices' parts fit inside the run, and what it
 * counts (bytes over the bus, fallback pairs) is what the call did. On the
 * CPU reference and, where OpenCL is usable, on both kernels. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BODIES = 24, CALLS = 12 };

/* A small heap of blobs, each overlapping its neighbours: pairs of
 * neighbours, moved a little each call so that passes alternate. */
typedef struct heap {
    rtcd_mesh* mesh;
    rtcd_transform poses[BODIES];
    rtcd_pair_desc pairs[BODIES * BODIES];
    uint32_t pair_count;
} heap;

static void heap_make(heap* h)
{
    memset(h, 0, sizeof *h);
    h->mesh = test_make_blob(RTCD_AVALANCHE_BLOB_VERTICES, 0.5f, 3);
    test_rng rng = {11};
    for (int i = 0; i < BODIES; ++i) {
        h->poses[i] = test_random_pose(&rng, 0.0f);
        h->poses[i].translation[0] = 0.7f * (float)(i % 6);
        h->poses[i].translation[1] = 0.7f * (float)(i / 6);
    }
}

static void heap_pairs(heap* h, int call)
{
    h->pair_count = 0;
    for (int i = 0; i < BODIES; ++i)
        for (int j = i + 1; j < BODIES; ++j) {
            float dx = h->poses[i].translation[0] - h->poses[j].translation[0];
            float dy = h->poses[i].translation[1] - h->poses[j].translation[1];
            if (dx * dx + dy * dy > 1.1f) continue;
            rtcd_pair_desc* p = &h->pairs[h->pair_count++];
            memset(p, 0, sizeof *p);
            p->a = p->b = h->mesh;
            p->pose_a = h->poses[i];
            p->pose_b = h->poses[j];
            p->pose_b.translation[2] += 0.002f * (float)call; /* a slow slide */
            p->key = (uint64_t)i << 32 | (uint64_t)j;
        }
}

static void check_profile(const char* what, const rtcd_batch_stats* s, int opencl, uint32_t pairs)
{
    double parts = s->plan_ms + s->run_ms + s->finish_ms;
    print_message("%s: %.3f ms = plan %.3f + run %.3f + finish %.3f (device %.3f, up %.3f, down %.3f, reduce %.3f)\n",
                  what, s->ms, s->plan_ms, s->run_ms, s->finish_ms, s->device_ms, s->upload_ms, s->download_ms,
                  s->reduce_ms);
    assert_true(s->plan_ms >= 0.0 && s->run_ms >= 0.0 && s->finish_ms >= 0.0);
    /* The parts follow one another: only the argument checks lie outside. */
    assert_true(parts <= s->ms * 1.0000001 + 1e-6);
    assert_true(parts >= 0.95 * s->ms);
    if (opencl) {
        assert_true(s->device_ms > 0.0);
        /* The kernels ran between the submission and the end of the wait:
         * in run_ms; with segments, from the first one's launch in plan_ms. */
        assert_true(s->device_ms <= (s->segments > 1 ? s->plan_ms + s->run_ms : s->run_ms) * 1.05 + 0.05);
        assert_true(s->upload_bytes > 0 && s->download_bytes > 0);
        assert_true(s->upload_bytes % pairs == 0 && s->download_bytes % pairs == 0); /* a record each way per pair */
        assert_true(s->reduce_ms == 0.0);
    } else {
        assert_true(s->device_ms == 0.0 && s->upload_ms == 0.0 && s->download_ms == 0.0);
        assert_true(s->upload_bytes == 0 && s->download_bytes == 0);
        assert_true(s->reduce_ms >= 0.0);
    }
    assert_true(s->fallback_ms == 0.0 && s->cpu_fallback_pairs == 0);
}

static void profile_on(rtcd_backend backend, const char* kernel)
{
    heap h;
    heap_make(&h);
    rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
    def.backend = backend;
    def.threads = 2;
    rtcd_batch* b = test_create_batch(&def, kernel);
    rtcd_pair_result* res = calloc(BODIES * BODIES, sizeof *res);
    uint32_t contacts = 0;
    for (int call = 0; call < CALLS; ++call) {
        heap_pairs(&h, call);
        assert_true(h.pair_count > 20);
        assert_int_equal(rtcd_batch_collide(b, h.pairs, h.pair_count, res, NULL), RTCD_OK);
        for (uint32_t i = 0; i < h.pair_count; ++i) contacts += res[i].contact_count;
        rtcd_batch_stats s = rtcd_batch_last_stats(b);
        char what[96];
        snprintf(what, sizeof what, "%s%s%s, call %d", rtcd_backend_name(backend), kernel ? " " : "",
                 kernel ? kernel : "", call);
        if (call == 0 || call == CALLS - 1) check_profile(what, &s, backend == RTCD_BACKEND_OPENCL, h.pair_count);
        else assert_true(fabs(s.plan_ms + s.run_ms + s.finish_ms - s.ms) <= 0.05 * s.ms);
    }
    assert_true(contacts > 0); /* the heap's pairs touch */
    free(res);
    rtcd_batch_release(b);
    rtcd_mesh_release(h.mesh);
}

static void test_cpu_profile_adds_up(void** state)
{
    (void)state;
    profile_on(RTCD_BACKEND_CPU, NULL);
}

static void test_opencl_profile_adds_up(void** state)
{
    (void)state;
    if (!test_opencl_available()) {
        print_message("no OpenCL device: skipped\n");
        skip();
    }
    profile_on(RTCD_BACKEND_OPENCL, "serial");
    profile_on(RTCD_BACKEND_OPENCL, "group");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_profile_adds_up),
        cmocka_unit_test(test_opencl_profile_adds_up),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
