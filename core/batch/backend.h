/* Private to rtcd: the seam between rtcd_batch (core/batch/batch.c) and the
 * backends that run a batch of pairs, the CPU reference (core/batch/cpu_batch.c)
 * and OpenCL (opencl/cl_backend.c). A backend other than the CPU's registers
 * its ops when librtcd loads (rtcd_backend_register), so the batch knows
 * backends by this table only and builds without them (RTCD_WITH_OPENCL=OFF). */
#ifndef RTCD_CORE_BACKEND_H
#define RTCD_CORE_BACKEND_H

#include <rtcd/rtcd_batch.h>

typedef struct rtcd_backend_ops {
    const char* name; /* "cpu", "opencl" */
    /* Opens the backend for def: *impl, or an error with *impl NULL. */
    rtcd_error (*create)(const rtcd_narrowphase_def* def, void** impl);
    rtcd_error (*collide)(void* impl, const rtcd_pair_desc* pairs, uint32_t n, rtcd_pair_result* results,
                          rtcd_ray_hit* rays);
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

/* Sum over pairs before i of both meshes' vertex counts: where pair i's rays go. */
static inline uint32_t rtcd_pair_ray_room(const rtcd_pair_desc* p)
{
    return rtcd_mesh_vertex_count(p->a) + rtcd_mesh_vertex_count(p->b);
}

#endif
