/* Private to rtcd: the seam between rtcd_batch (core/batch/batch.c) and the
 * backends that run a batch of pairs, the CPU reference (core/batch/cpu_batch.c)
 * and OpenCL (opencl/cl_backend.c). A backend other than the CPU's registers
 * its ops when librtcd loads (rtcd_backend_register), so the batch knows
 * backends by this table only and builds without them (RTCD_WITH_OPENCL=OFF). */
#ifndef RTCD_CORE_BACKEND_H
#define RTCD_CORE_BACKEND_H

#include <rtcd/rtcd_batch.h>

#include "narrowphase/pair_internal.h"
#include "task.h"

/* One call as the backends see it: the body form (rtcd_batch_collide_bodies).
 * rtcd_batch_collide's pairs arrive expanded, two bodies per pair
 * (rtcd_call_expand). */
typedef struct rtcd_call {
    const rtcd_body_desc* bodies;
    const rtcd_body_pair* pairs;
    uint32_t body_count, pair_count;
} rtcd_call;

static inline const rtcd_body_desc* rtcd_call_a(const rtcd_call* c, uint32_t i) { return &c->bodies[c->pairs[i].a]; }
static inline const rtcd_body_desc* rtcd_call_b(const rtcd_call* c, uint32_t i) { return &c->bodies[c->pairs[i].b]; }

/* Both meshes' vertex counts: the room pair i's rays take (see
 * rtcd_batch_collide), and a standard pass's items. The meshes a call's
 * pairs name are checked before a backend runs. */
static inline uint32_t rtcd_call_ray_room(const rtcd_call* c, uint32_t i)
{
    return rtcd_call_a(c, i)->mesh->vertex_count + rtcd_call_b(c, i)->mesh->vertex_count;
}

/* Pair i's motion into *m (rtcd_pair_motion_set): its backs when both bodies have one. */
static inline void rtcd_call_motion(const rtcd_call* c, uint32_t i, rtcd_pair_motion* m)
{
    const rtcd_body_desc *a = rtcd_call_a(c, i), *b = rtcd_call_b(c, i);
    int back = a->has_back && b->has_back;
    rtcd_pair_motion_set(m, c->pairs[i].motion, back ? &a->back : NULL, back ? &b->back : NULL);
}

/* Pairs in the body form, two bodies each, kept between calls (grown, never shrunk). */
typedef struct rtcd_call_scratch {
    rtcd_body_desc* bodies;
    rtcd_body_pair* pairs;
    size_t cap; /* pairs */
} rtcd_call_scratch;

/* pairs[0, n) as a call in scratch, on ts's workers. A NULL mesh refuses it:
 * RTCD_ERROR_INVALID_ARGUMENT, "<who>: pair %u has a NULL mesh". body_bad
 * (2 n bytes, or NULL): 1 for each body whose pose is not finite, and how
 * many in *bad_bodies, in the same pass. */
rtcd_error rtcd_call_expand(const rtcd_pair_desc* pairs, uint32_t n, const rtcd_task_system* ts,
                            rtcd_call_scratch* scratch, rtcd_call* out, const char* who, uint8_t* body_bad,
                            uint32_t* bad_bodies);
void rtcd_call_scratch_free(rtcd_call_scratch* scratch);

typedef struct rtcd_backend_ops {
    const char* name; /* "cpu", "opencl" */
    /* Opens the backend for def: *impl, or an error with *impl NULL. */
    rtcd_error (*create)(const rtcd_narrowphase_def* def, void** impl);
    /* The call's pairs, checked (rtcd_batch.c): indices in range, meshes
     * set, poses finite. */
    rtcd_error (*collide)(void* impl, const rtcd_call* call, rtcd_pair_result* results, rtcd_ray_hit* rays);
    /* A new def with the same backend settings (algorithm, traversal,
     * contact normal, culling); every pair forgets its state. */
    void (*set_def)(void* impl, const rtcd_narrowphase_def* def);
    void (*stats)(const void* impl, rtcd_batch_stats* out);
    uint32_t (*device_count)(const void* impl);
    const char* (*device_name)(const void* impl, uint32_t device);
    uint32_t (*thread_count)(const void* impl);
    /* The workers of the host's share of a call (its pool or the engine's
     * task system): rtcd_batch_parallel_for and the call's checks use them. */
    const rtcd_task_system* (*tasks)(void* impl);
    void (*destroy)(void* impl);
} rtcd_backend_ops;

/* core/batch/cpu_batch.c */
extern const rtcd_backend_ops rtcd_cpu_backend_ops;
rtcd_error rtcd_cpu_backend_create(const rtcd_narrowphase_def* def, void** out);

/* The table of backends (core/batch/batch.c): a backend's part of librtcd
 * registers itself from a constructor, before any rtcd call; one entry per
 * kind (RTCD_BACKEND_CPU is always there). NULL: not built in. */
void rtcd_backend_register(rtcd_backend kind, const rtcd_backend_ops* ops);
const rtcd_backend_ops* rtcd_backend_find(rtcd_backend kind);

#endif
