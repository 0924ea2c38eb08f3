/* The OpenCL backend: the narrow phase (standard, iterative or predictive)
 * for a batch of mesh pairs on one or several OpenCL devices. Meshes are
 * uploaded once per device; per call only poses and the pair list go up and
 * reduced contacts come back; kept rays stay on the device that owns the
 * pair. Results equal the CPU reference's (rtcd_collide_iterative with one
 * rtcd_pair_state per key, + rtcd_reduce_contacts) within float tolerance. */
#ifndef RTCD_OPENCL_H
#define RTCD_OPENCL_H

#include "rtcd.h"
#include "rtcd_iterative.h"
#include "rtcd_narrowphase.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rtcd_opencl rtcd_opencl;

typedef struct rtcd_opencl_def {
    /* Which devices: "gpu" (every GPU of every platform), "all", "cpu" (no
     * OpenCL: rtcd_opencl_create fails with RTCD_ERROR_UNSUPPORTED so callers
     * use the CPU reference), or a comma list of platform:device indices
     * ("0:0,0:1"). NULL: the RTCD_DEVICES environment variable, else the
     * default: every GPU, and with none the CPU OpenCL devices (PoCL). */
    const char* devices;
    uint32_t max_devices;          /* 0: no limit */
    rtcd_traversal traversal;      /* BVH (stackless walk on the device) or brute force */
    rtcd_contact_normal contact_normal;
    /* The algorithm; per-pair state (kept rays) lives on the device that
     * owns the pair, keyed by rtcd_pair_desc.key. Default predictive. */
    rtcd_iterative_def iterative;
    /* Test hook: appended to the kernel source before it is built. */
    const char* kernel_source_suffix;
} rtcd_opencl_def;

RTCD_API rtcd_opencl_def rtcd_default_opencl_def(void);

/* Fails with RTCD_ERROR_NO_DEVICE when no platform or device matches, and
 * with RTCD_ERROR_KERNEL_BUILD (message = the build log) when the kernels do
 * not build; *out is NULL then. */
RTCD_API rtcd_error rtcd_opencl_create(const rtcd_opencl_def* def, rtcd_opencl** out);
RTCD_API void rtcd_opencl_destroy(rtcd_opencl* cl);
RTCD_API uint32_t rtcd_opencl_device_count(const rtcd_opencl* cl);
RTCD_API const char* rtcd_opencl_device_name(const rtcd_opencl* cl, uint32_t device); /* owned by cl */

typedef struct rtcd_pair_desc {
    const rtcd_mesh* a;            /* retained by the backend while it keeps device copies */
    const rtcd_mesh* b;
    rtcd_transform pose_a, pose_b;
    /* Identifies the pair across calls: a pair keeps the device that first
     * took it while its key keeps appearing (its state lives there). */
    uint64_t key;
} rtcd_pair_desc;

typedef struct rtcd_pair_result {
    rtcd_contact contacts[RTCD_MAX_MANIFOLD_POINTS]; /* reduced, as rtcd_reduce_contacts */
    uint32_t contact_count;
    uint32_t colliding_rays;
    uint32_t rays_cast;
    uint32_t device;               /* which device computed it */
    uint32_t standard_pass;        /* 1: standard pass; 0: the kept rays were walked */
    uint32_t predictive_rays, walk_steps, kept_rays, kept_predictions; /* as rtcd_narrowphase_stats */
    float ray_length;              /* sum of the colliding rays' lengths */
} rtcd_pair_result;

/* Runs the batch: results[i] for pairs[i]. When rays is not NULL, every
 * colliding ray is also returned (for tests and tools): rays_per_pair[i]
 * entries at rays + ray_offsets[i], where the caller sizes the regions with
 * vertex_count(a) + vertex_count(b) per pair, in pair order. */
RTCD_API rtcd_error rtcd_opencl_collide(rtcd_opencl* cl, const rtcd_pair_desc* pairs, uint32_t pair_count,
                                        rtcd_pair_result* results, rtcd_ray_hit* rays);

/* Changes the algorithm (rtcd_opencl_def.iterative) and resets every pair:
 * each runs a standard pass at its next call. */
RTCD_API void rtcd_opencl_set_iterative(rtcd_opencl* cl, const rtcd_iterative_def* def);

typedef struct rtcd_opencl_stats {
    uint32_t pairs_per_device[16];
    uint32_t cpu_fallback_pairs;   /* pairs past the on-chip ray capacity, computed on the CPU instead */
    /* Pairs whose kept rays outgrew their device slot (or that fell back to
     * the CPU): their state was reset, so their next call is a standard pass. */
    uint32_t state_resets;
    double ms;                     /* wall time of the last call */
} rtcd_opencl_stats;
RTCD_API rtcd_opencl_stats rtcd_opencl_last_stats(const rtcd_opencl* cl);

#ifdef __cplusplus
}
#endif
#endif
