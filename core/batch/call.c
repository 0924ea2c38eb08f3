/* rtcd_batch_collide's pairs in the body form the backends take: two bodies
 * per pair, written on the call's workers (a large call's descriptors are
 * megabytes, and this is their first reading). */
#include "backend.h"
#include "hooks.h"

#include <stdatomic.h>

typedef struct expand_job {
    const rtcd_pair_desc* pairs;
    rtcd_body_desc* bodies;
    rtcd_body_pair* out;
    uint8_t* body_bad;           /* NULL: not asked for */
    _Atomic uint32_t first_null; /* UINT32_MAX: none */
    _Atomic uint32_t bad_bodies;
} expand_job;

#define EXPAND_RANGE 1024u

static void expand_range(uint32_t begin, uint32_t end, uint32_t worker, void* ctx)
{
    (void)worker;
    expand_job* job = ctx;
    uint32_t null = UINT32_MAX, bad = 0;
    for (uint32_t i = begin; i < end; ++i) {
        const rtcd_pair_desc* p = &job->pairs[i];
        if ((!p->a || !p->b) && null == UINT32_MAX) null = i;
        rtcd_body_desc* a = &job->bodies[2 * (size_t)i];
        rtcd_body_desc* b = a + 1;
        a->mesh = p->a;
        a->pose = p->pose_a;
        a->has_back = p->has_back;
        a->back = p->back_a;
        b->mesh = p->b;
        b->pose = p->pose_b;
        b->has_back = p->has_back;
        b->back = p->back_b;
        rtcd_body_pair* q = &job->out[i];
        q->a = 2 * i;
        q->b = 2 * i + 1;
        q->motion = p->motion;
        q->key = p->key;
        if (job->body_bad) {
            uint8_t bad_a = (uint8_t)!rtcd_transform_finite(&p->pose_a), bad_b = (uint8_t)!rtcd_transform_finite(&p->pose_b);
            job->body_bad[2 * (size_t)i] = bad_a;
            job->body_bad[2 * (size_t)i + 1] = bad_b;
            bad += bad_a + bad_b;
        }
    }
    if (bad) atomic_fetch_add_explicit(&job->bad_bodies, bad, memory_order_relaxed);
    rtcd_atomic_min_u32(&job->first_null, null);
}

rtcd_error rtcd_call_expand(const rtcd_pair_desc* pairs, uint32_t n, const rtcd_task_system* ts,
                            rtcd_call_scratch* scratch, rtcd_call* out, const char* who, uint8_t* body_bad,
                            uint32_t* bad_bodies)
{
    if (n > UINT32_MAX / 2)
        return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "%s: %u pairs are more than a call takes (%u)", who, n,
                         UINT32_MAX / 2);
    if (scratch->cap < n) {
        size_t cap = scratch->cap ? scratch->cap : 256;
        while (cap < n) cap *= 2;
        rtcd_body_desc* bodies = rtcd_alloc(2 * cap * sizeof *bodies);
        rtcd_body_pair* body_pairs = rtcd_alloc(cap * sizeof *body_pairs);
        if (!bodies || !body_pairs) {
            rtcd_free(bodies);
            rtcd_free(body_pairs);
            return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "%s: out of memory for %u pairs", who, n);
        }
        rtcd_call_scratch_free(scratch);
        scratch->bodies = bodies;
        scratch->pairs = body_pairs;
        scratch->cap = cap;
    }
    expand_job job = {.pairs = pairs, .bodies = scratch->bodies, .out = scratch->pairs, .body_bad = body_bad};
    atomic_init(&job.first_null, UINT32_MAX);
    atomic_init(&job.bad_bodies, 0u);
    rtcd_parallel_for(ts, n, EXPAND_RANGE, expand_range, &job);
    uint32_t null = atomic_load(&job.first_null);
    if (bad_bodies) *bad_bodies = atomic_load(&job.bad_bodies);
    if (null != UINT32_MAX) return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "%s: pair %u has a NULL mesh", who, null);
    out->bodies = scratch->bodies;
    out->pairs = scratch->pairs;
    out->body_count = 2 * n;
    out->pair_count = n;
    return RTCD_OK;
}

void rtcd_call_scratch_free(rtcd_call_scratch* scratch)
{
    rtcd_free(scratch->bodies);
    rtcd_free(scratch->pairs);
    scratch->bodies = NULL;
    scratch->pairs = NULL;
    scratch->cap = 0;
}
