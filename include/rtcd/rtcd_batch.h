/* SPDX-License-Identifier: Zlib. Copyright (c) 2026 the rtcd authors (LICENSE). */
/* A batch of mesh pairs through rtcd's narrow phase on one backend: the CPU
 * reference (threaded) or one or several OpenCL devices. This is the seam
 * the Bullet plugin and the C world talk to; both backends run the same
 * per-vertex code (core/shared/) and give bit-identical results on the CPU
 * and on CPU OpenCL devices.
 *
 * Pairs are named by a key: a pair that keeps appearing under the same key
 * keeps its state (the iterative algorithms' kept rays, and its device);
 * a key missing from a call forgets its pair.
 *
 * Device faults (OpenCL): a mesh the devices cannot hold (larger than a
 * device's largest buffer, CL_DEVICE_MAX_MEM_ALLOC_SIZE, once added to the
 * meshes already there, or refused for lack of device memory) stays on the
 * CPU: its pairs run on the CPU reference inside the same call, with the
 * CPU backend's results bit for bit, and one RTCD_LOG_WARNING names the
 * mesh and the OpenCL error; the other meshes and pairs stay on the device
 * and later calls work as before. A key whose pair moves between the
 * devices and the CPU (its meshes changed) forgets its state, as a new key.
 *
 * Threading: one thread drives a batch at a time (it runs its own workers). */
#ifndef RTCD_BATCH_H
#define RTCD_BATCH_H

#include "rtcd_common.h"
#include "rtcd_iterative.h"
#include "rtcd_narrowphase.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rtcd_batch rtcd_batch;

typedef struct rtcd_pair_desc {
    const rtcd_mesh* a;            /* not owned; must live until the pair's key stops appearing */
    const rtcd_mesh* b;
    rtcd_transform pose_a, pose_b;
    uint64_t key;                  /* identifies the pair across calls */
    /* A bound, in metres, on how far any point of either mesh may move
     * relative to the other over the next step (e.g. from the bodies'
     * velocities and the time step); it widens the speculative contacts'
     * reach. 0: the pair's own motion over the last call. */
    float motion;
    /* Optional (has_back = 1): each body's pose one step back along its
     * present velocities (the plugin integrates Bullet's velocities over
     * -dt). With them the speculative contacts know where each vertex is
     * heading from the pair's first call; without, from the pair's motion
     * since its last call. Non-finite ones are ignored. */
    int has_back;
    rtcd_transform back_a, back_b;
} rtcd_pair_desc;

/* The body form of a call (rtcd_batch_collide_bodies): each body's mesh and
 * poses once, however many pairs it is in, and pairs that name two bodies.
 * Pair i of it is the rtcd_pair_desc {bodies[a].mesh, bodies[b].mesh, their
 * poses, key, motion, has_back = both bodies' has_back, their backs}, with
 * the same result bit for bit; what a call reads, and what crosses a
 * device's bus, then scales with bodies, not with pairs. On OpenCL every
 * body of the call goes up (its pose, 48 bytes), named by a pair or not:
 * give a call the bodies of its pairs, not a whole world of which few pair. */
typedef struct rtcd_body_desc {
    const rtcd_mesh* mesh;         /* not owned; must live until no key of its pairs appears */
    rtcd_transform pose;
    /* Optional (has_back = 1): the pose one step back along the body's
     * present velocities (as rtcd_pair_desc.back_a). A pair uses its
     * bodies' backs when both have one. */
    int has_back;
    rtcd_transform back;
} rtcd_body_desc;

typedef struct rtcd_body_pair {
    uint32_t a, b;                 /* indices into the call's bodies */
    float motion;                  /* as rtcd_pair_desc.motion */
    uint64_t key;                  /* as rtcd_pair_desc.key */
} rtcd_body_pair;

typedef struct rtcd_pair_result {
    rtcd_contact contacts[RTCD_MAX_MANIFOLD_POINTS]; /* reduced, as rtcd_reduce_contacts */
    uint32_t contact_count;
    uint32_t colliding_rays;
    uint32_t rays_cast;
    uint32_t device;               /* which device computed it (0 on the CPU reference, and for a pair
                                      whose mesh the devices could not hold) */
    uint32_t standard_pass;        /* 1: standard pass; 0: the kept rays were walked */
    uint32_t predictive_rays, walk_steps, kept_rays, kept_predictions; /* as rtcd_narrowphase_stats */
    float ray_length;              /* sum of the colliding rays' lengths */
    uint32_t crossing_contacts;    /* edge-crossing and deep-vertex contacts found (rtcd_narrowphase_stats) */
} rtcd_pair_result;

typedef struct rtcd_batch_stats {
    double ms;                     /* wall time of the last call */
    /* CPU reference: time spent in each kind of pass, summed over threads
     * (0 on OpenCL, where both kinds run in one launch). */
    double standard_ms, iterative_ms;
    uint32_t pairs_per_device[16]; /* OpenCL: the pairs each device ran (an iterative pass with nothing kept
                                      finds nothing: the host answers it, on no device) */
    uint32_t cpu_fallback_pairs;   /* OpenCL: pairs computed on the CPU: past the on-chip ray store, or
                                      with a mesh the devices could not hold (see above) */
    uint32_t state_resets;         /* pairs whose kept rays were dropped (their next call is a standard pass) */
    uint32_t segments;             /* OpenCL: the runs of pairs the call went to the devices in, each
                                      launched once planned (1 on CPU devices; RTCD_CL_SEGMENTS sets it) */
    /* The call's profile. Its host parts follow one another and add up to
     * ms:
     * - plan_ms: the argument checks (and rtcd_batch_collide's pairs put in
     *   the body form), pair states claimed, meshes placed (OpenCL: new and
     *   deformed meshes' uploads queued), passes planned, descriptors written
     *   (OpenCL with several segments: the launches of all but the last
     *   too, so the devices' work on the earlier segments overlaps it);
     * - run_ms: CPU reference: the workers' passes and reductions (wall);
     *   OpenCL: submitting what is left to the devices and waiting for
     *   them, with the CPU fallback's pairs run meanwhile (fallback_ms of it);
     * - finish_ms: results written back, kept-ray counts and states updated.
     * The device parts (OpenCL, from profiling events, summed over devices)
     * overlap run_ms: upload_ms (the pairs' descriptors; new meshes go up
     * inside plan_ms), device_ms (the kernels), download_ms (results). reduce_ms: CPU reference, the contact
     * reduction, summed over threads (inside run_ms). */
    double plan_ms, run_ms, finish_ms;
    double upload_ms, device_ms, download_ms;
    double fallback_ms, reduce_ms;
    uint64_t upload_bytes, download_bytes; /* OpenCL: what crossed the bus this call */
} rtcd_batch_stats;

/* Resolves def->backend (AUTO: see rtcd_backend) and opens it. Fails with
 * RTCD_ERROR_INVALID_ARGUMENT (a bad def), RTCD_ERROR_UNSUPPORTED (OPENCL in
 * a build without OpenCL), RTCD_ERROR_NO_DEVICE or RTCD_ERROR_KERNEL_BUILD
 * (OPENCL only; AUTO falls back to the CPU and logs why). *out is NULL on
 * failure; the caller owns one reference. */
RTCD_API rtcd_error rtcd_batch_create(const rtcd_narrowphase_def* def, rtcd_batch** out);
RTCD_API void rtcd_batch_retain(rtcd_batch* batch);
RTCD_API void rtcd_batch_release(rtcd_batch* batch); /* NULL is fine */

/* Runs the pairs: results[i] for pairs[i]. When rays is not NULL every
 * colliding ray is returned too (tests, check mode): pair i's at
 * rays + sum over j < i of (vertex_count(a_j) + vertex_count(b_j)),
 * results[i].colliding_rays of them, in no particular order. */
RTCD_API rtcd_error rtcd_batch_collide(rtcd_batch* batch, const rtcd_pair_desc* pairs, uint32_t pair_count,
                                       rtcd_pair_result* results, rtcd_ray_hit* rays);

/* The same in the body form: results[i] (and rays, laid out as above) for
 * pairs[i]. A pair that names a body past body_count, or one with a NULL mesh,
 * refuses the call (RTCD_ERROR_INVALID_ARGUMENT, nothing runs); a body no
 * pair names may have none (only its pose is read). A body whose pose is
 * not finite gives its pairs zeroed results and the call one RTCD_LOG_WARNING,
 * as rtcd_batch_collide does for a pair with a non-finite pose. */
RTCD_API rtcd_error rtcd_batch_collide_bodies(rtcd_batch* batch, const rtcd_body_desc* bodies, uint32_t body_count,
                                              const rtcd_body_pair* pairs, uint32_t pair_count,
                                              rtcd_pair_result* results, rtcd_ray_hit* rays);

/* Validates and takes a new def; every pair forgets its state (its next
 * call is a standard pass). A change of backend, devices or threads
 * reopens the backend, which may fail as rtcd_batch_create does (the batch
 * keeps its old def then). */
RTCD_API rtcd_error rtcd_batch_set_def(rtcd_batch* batch, const rtcd_narrowphase_def* def);
RTCD_API rtcd_narrowphase_def rtcd_batch_def(const rtcd_batch* batch);

RTCD_API rtcd_backend rtcd_batch_backend(const rtcd_batch* batch); /* CPU or OPENCL, as resolved */
RTCD_API uint32_t rtcd_batch_device_count(const rtcd_batch* batch); /* OpenCL devices; 0 on the CPU */
RTCD_API const char* rtcd_batch_device_name(const rtcd_batch* batch, uint32_t device); /* owned by the batch */
RTCD_API uint32_t rtcd_batch_thread_count(const rtcd_batch* batch); /* CPU workers; 0 on OpenCL */
RTCD_API rtcd_batch_stats rtcd_batch_last_stats(const rtcd_batch* batch);

/* The work around a batch call on the batch's own workers (the Bullet
 * plugin's gathering and write-back): fn over items [0, count) in ranges of
 * at least min_range, then waits. The CPU backend's threads, or the
 * engine's task system (def.tasks) when it has one; on OpenCL without one,
 * a pool of def.threads (0: all cores) made on first use, or the calling
 * thread alone if none can be made. As with rtcd_task.h, results must not
 * depend on the split; worker indices are below rtcd_batch_worker_count.
 * Not from inside fn, nor while rtcd_batch_collide runs. */
RTCD_API void rtcd_batch_parallel_for(rtcd_batch* batch, uint32_t count, uint32_t min_range, rtcd_task_fn* fn,
                                      void* ctx);
RTCD_API uint32_t rtcd_batch_worker_count(rtcd_batch* batch); /* >= 1; NULL batch: 1 */

#ifdef __cplusplus
}
#endif
#endif
