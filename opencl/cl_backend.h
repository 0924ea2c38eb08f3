/* The OpenCL backend behind rtcd_batch (private; exported for tests and
 * benchmarks that drive the devices directly). Meshes are uploaded once per
 * device; per call only poses and the pair list go up and reduced contacts
 * come back; kept rays stay on the device that owns the pair. */
#ifndef RTCD_CL_BACKEND_H
#define RTCD_CL_BACKEND_H

#include <rtcd/rtcd_batch.h>

typedef struct rtcd_opencl rtcd_opencl;

/* Opens the devices def->devices (or RTCD_DEVICES) selects, at most
 * def->max_devices, and builds the kernels on each. RTCD_ERROR_NO_DEVICE
 * when none matches, RTCD_ERROR_KERNEL_BUILD with the build log; *out NULL
 * then. kernel_suffix (test hook, may be NULL; else the environment's
 * RTCD_CL_KERNEL_SUFFIX, which reaches worlds and dispatchers too) is
 * appended to the kernel source before it is built. */
RTCD_API rtcd_error rtcd_opencl_create(const rtcd_narrowphase_def* def, const char* kernel_suffix, rtcd_opencl** out);
RTCD_API void rtcd_opencl_destroy(rtcd_opencl* cl);
RTCD_API uint32_t rtcd_opencl_device_count(const rtcd_opencl* cl);
RTCD_API const char* rtcd_opencl_device_name(const rtcd_opencl* cl, uint32_t device); /* owned by cl */
/* The device's CL_DEVICE_MAX_MEM_ALLOC_SIZE in bytes (0: unknown or no such
 * device). The meshes share concatenated buffers on each device: a mesh
 * that would make one larger than this (or that the device refuses for
 * another lack of memory) stays on the CPU reference, which runs its pairs
 * in the same call (one warning names the mesh); the other meshes and pairs
 * stay on the device. */
RTCD_API uint64_t rtcd_opencl_device_max_alloc(const rtcd_opencl* cl, uint32_t device);
/* As rtcd_batch_collide. */
RTCD_API rtcd_error rtcd_opencl_collide(rtcd_opencl* cl, const rtcd_pair_desc* pairs, uint32_t pair_count,
                                        rtcd_pair_result* results, rtcd_ray_hit* rays);
/* A new algorithm, traversal or contact normal; every pair runs a standard pass next. */
RTCD_API void rtcd_opencl_set_def(rtcd_opencl* cl, const rtcd_narrowphase_def* def);
RTCD_API rtcd_batch_stats rtcd_opencl_last_stats(const rtcd_opencl* cl);

/* Mesh traffic since creation, all devices together (tests, benchmarks).
 * A deformed mesh (rtcd_mesh_update_vertices) whose sizes held is
 * rewritten in place, its ranges only; one whose BVH rebuild changed its
 * node count is registered again, which copies the whole registry. */
typedef struct rtcd_opencl_upload_stats {
    uint64_t full_uploads;    /* whole registry copies to a device (new meshes, registered again) */
    uint64_t mesh_refreshes;  /* deformed meshes rewritten in place on a device */
    uint64_t reregistrations; /* deformed meshes registered again (their sizes changed) */
    uint64_t bytes;           /* host to device, both kinds */
    double last_place_ms;     /* the last call's mesh work: finding deformed meshes, refreshing, uploading */
} rtcd_opencl_upload_stats;
RTCD_API rtcd_opencl_upload_stats rtcd_opencl_uploads(const rtcd_opencl* cl);

#endif
