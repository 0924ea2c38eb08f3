/* Device discovery through the ICD loader, selection, and the program build
 * (whose log is always surfaced on failure). */
#define _GNU_SOURCE /* sched_getaffinity: whether PoCL's workers may be pinned */
#include "cl_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sched.h>
#include <unistd.h>
#endif

const char* rtcd_cl_error_string(cl_int code)
{
    switch (code) {
    case CL_DEVICE_NOT_FOUND: return "CL_DEVICE_NOT_FOUND";
    case CL_DEVICE_NOT_AVAILABLE: return "CL_DEVICE_NOT_AVAILABLE";
    case CL_COMPILER_NOT_AVAILABLE: return "CL_COMPILER_NOT_AVAILABLE";
    case CL_MEM_OBJECT_ALLOCATION_FAILURE: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
    case CL_OUT_OF_RESOURCES: return "CL_OUT_OF_RESOURCES";
    case CL_OUT_OF_HOST_MEMORY: return "CL_OUT_OF_HOST_MEMORY";
    case CL_BUILD_PROGRAM_FAILURE: return "CL_BUILD_PROGRAM_FAILURE";
    case CL_INVALID_VALUE: return "CL_INVALID_VALUE";
    case CL_INVALID_PLATFORM: return "CL_INVALID_PLATFORM";
    case CL_INVALID_DEVICE: return "CL_INVALID_DEVICE";
    case CL_INVALID_CONTEXT: return "CL_INVALID_CONTEXT";
    case CL_INVALID_COMMAND_QUEUE: return "CL_INVALID_COMMAND_QUEUE";
    case CL_INVALID_MEM_OBJECT: return "CL_INVALID_MEM_OBJECT";
    case CL_INVALID_PROGRAM: return "CL_INVALID_PROGRAM";
    case CL_INVALID_KERNEL_NAME: return "CL_INVALID_KERNEL_NAME";
    case CL_INVALID_KERNEL_ARGS: return "CL_INVALID_KERNEL_ARGS";
    case CL_INVALID_ARG_INDEX: return "CL_INVALID_ARG_INDEX";
    case CL_INVALID_ARG_VALUE: return "CL_INVALID_ARG_VALUE";
    case CL_INVALID_ARG_SIZE: return "CL_INVALID_ARG_SIZE";
    case CL_INVALID_WORK_GROUP_SIZE: return "CL_INVALID_WORK_GROUP_SIZE";
    case CL_INVALID_WORK_ITEM_SIZE: return "CL_INVALID_WORK_ITEM_SIZE";
    case CL_INVALID_GLOBAL_WORK_SIZE: return "CL_INVALID_GLOBAL_WORK_SIZE";
    case CL_INVALID_BUFFER_SIZE: return "CL_INVALID_BUFFER_SIZE";
    case CL_INVALID_OPERATION: return "CL_INVALID_OPERATION";
    case CL_DEVICE_PARTITION_FAILED: return "CL_DEVICE_PARTITION_FAILED";
    case CL_INVALID_DEVICE_PARTITION_COUNT: return "CL_INVALID_DEVICE_PARTITION_COUNT";
    case CL_INVALID_PROPERTY: return "CL_INVALID_PROPERTY";
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR (no OpenCL driver installed)";
    default: return "unknown OpenCL error";
    }
}

typedef struct candidate {
    cl_platform_id platform;
    cl_device_id device;
    uint32_t platform_index, device_index;
    cl_device_type type;
} candidate;

/* One entry of a "p:d,p:d/n" list: device d of platform p, whole (split 0)
 * or split into `split` equal sub-devices. */
typedef struct spec_entry {
    uint32_t platform, device, split;
} spec_entry;

#define RTCD_CL_MAX_SPEC_ENTRIES 64

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* Decimal digits at *s (at least one, no sign or space), at most 999999. */
static int parse_index(const char** s, uint32_t* out)
{
    const char* p = *s;
    uint32_t v = 0;
    if (!is_digit(*p)) return 0;
    for (; is_digit(*p); ++p) {
        if (v > 99999) return 0;
        v = v * 10 + (uint32_t)(*p - '0');
    }
    *s = p;
    *out = v;
    return 1;
}

static rtcd_error bad_spec(const char* spec, const char* at, const char* reason)
{
    return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT,
                     "OpenCL: device selection '%s' is malformed at character %u: %s (expected \"gpu\", \"all\", "
                     "\"cpu\" or a comma list of platform:device or platform:device/N, e.g. \"0:0/2,0:1\")",
                     spec, (unsigned)(at - spec) + 1u, reason);
}

/* Parses a "p:d[/n],..." list into entries. */
static rtcd_error parse_spec(const char* spec, spec_entry* entries, uint32_t* count)
{
    const char* s = spec;
    uint32_t n = 0;
    for (;;) {
        spec_entry e = {0, 0, 0};
        if (!parse_index(&s, &e.platform)) return bad_spec(spec, s, "expected a platform index");
        if (*s != ':') return bad_spec(spec, s, "expected ':' after the platform index");
        ++s;
        if (!parse_index(&s, &e.device)) return bad_spec(spec, s, "expected a device index after ':'");
        if (*s == '/') {
            ++s;
            if (!parse_index(&s, &e.split)) return bad_spec(spec, s, "expected the number of sub-devices after '/'");
            if (e.split == 0) return bad_spec(spec, s - 1, "the number of sub-devices must be at least 1");
        }
        for (uint32_t i = 0; i < n; ++i)
            if (entries[i].platform == e.platform && entries[i].device == e.device && (e.split || entries[i].split))
                return bad_spec(spec, s, "a split device is named twice");
        if (n == RTCD_CL_MAX_SPEC_ENTRIES) return bad_spec(spec, s, "too many entries");
        entries[n++] = e;
        if (*s == '\0') break;
        if (*s != ',') return bad_spec(spec, s, "expected ',' or the end of the list");
        ++s;
    }
    *count = n;
    return RTCD_OK;
}

/* "gpu", "all", the default (NULL or empty), or the parsed list: the entry
 * naming c (NULL: not selected; a keyword selects with split 0). */
static const spec_entry* selected(const char* spec, const spec_entry* entries, uint32_t count, const candidate* c,
                                  int any_gpu)
{
    static const spec_entry whole = {0, 0, 0};
    if (!spec || !*spec) return (!any_gpu || (c->type & CL_DEVICE_TYPE_GPU)) ? &whole : NULL;
    if (!strcmp(spec, "all")) return &whole;
    if (!strcmp(spec, "gpu")) return (c->type & CL_DEVICE_TYPE_GPU) ? &whole : NULL;
    for (uint32_t i = 0; i < count; ++i)
        if (entries[i].platform == c->platform_index && entries[i].device == c->device_index) return &entries[i];
    return NULL;
}

static rtcd_error build_program(cl_device_state* d, const char* suffix)
{
    cl_int err;
    size_t base = strlen(rtcd_kernel_source), extra = suffix ? strlen(suffix) : 0;
    char* source = rtcd_alloc(base + extra + 2);
    if (!source) return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "OpenCL: no memory for the kernel source");
    memcpy(source, rtcd_kernel_source, base);
    source[base] = '\n';
    if (extra) memcpy(source + base + 1, suffix, extra);
    source[base + 1 + extra] = '\0';
    const char* sources[1] = {source};
    d->program = clCreateProgramWithSource(d->context, 1, sources, NULL, &err);
    rtcd_free(source);
    RTCD_CL_CHECK(err, "clCreateProgramWithSource");
    /* The CPU reference divides and takes square roots correctly rounded;
     * OpenCL lets a device be 2.5-3 ulp off unless asked, so ask wherever
     * the device can: its results then match the CPU's bit for bit. */
    cl_device_fp_config fp = 0;
    clGetDeviceInfo(d->device, CL_DEVICE_SINGLE_FP_CONFIG, sizeof fp, &fp, NULL);
    /* The serial kernel's devices (CPUs) walk the 4-wide copy of the BVH
     * (float4 slab tests, as the CPU reference's SSE walk), and meshes
     * without one the binary tree nearer child first with a small stack;
     * GPUs the stackless walk. All give the same hits (shared/mesh_view.h). */
    /* Tuning hook: RTCD_CL_BUILD_OPTIONS is appended (e.g. -cl-nv-verbose,
     * or -DRTCD_CL_LOCAL_RAYS=512), RTCD_CL_BUILD_LOG=1 logs the build log.
     * -DRTCD_CL_WALK4=1 or =0 there picks the 4-wide walk on any device. */
    const char* user = getenv("RTCD_CL_BUILD_OPTIONS");
    int walk4_set = user && strstr(user, "RTCD_CL_WALK4");
    /* The serial kernel's sweep tests four vertices at a time
     * (shared/candidates4.h), whose divisions equal the scalar test's only
     * when both are correctly rounded. -DRTCD_CL_SWEEP4=0/1 overrides. */
    /* The 4-wide walk's leaves four triangles at a time (shared/bvh.h), by
     * the same rule: their divisions are lane by lane. -DRTCD_CL_LEAF4=0/1 overrides. */
    int lanes_exact = d->serial && (fp & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT);
    int sweep4 = lanes_exact && !(user && strstr(user, "RTCD_CL_SWEEP4"));
    int leaf4 = lanes_exact && !(user && strstr(user, "RTCD_CL_LEAF4"));
    char options[512];
    snprintf(options, sizeof options, "-cl-std=CL1.2%s%s%s%s%s%s%s",
             (fp & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) ? " -cl-fp32-correctly-rounded-divide-sqrt" : "",
             d->serial ? " -DRTCD_CL_STACK_WALK" : "", d->serial && !walk4_set ? " -DRTCD_CL_WALK4=1" : "",
             sweep4 ? " -DRTCD_CL_SWEEP4=1" : "", leaf4 ? " -DRTCD_CL_LEAF4=1" : "", user ? " " : "",
             user ? user : "");
    err = clBuildProgram(d->program, 1, &d->device, options, NULL, NULL);
    const char* show = getenv("RTCD_CL_BUILD_LOG");
    if (err == CL_SUCCESS && show && *show == '1') {
        char log[8192] = "";
        clGetProgramBuildInfo(d->program, d->device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        log[sizeof log - 1] = '\0';
        rtcd_log(RTCD_LOG_WARNING, "OpenCL build on %s with '%s':", d->name, options);
        for (size_t at = 0, len = strlen(log); at < len; at += 900) /* rtcd_log's lines are short */
            rtcd_log(RTCD_LOG_WARNING, "%.900s", log + at);
    }
    if (err != CL_SUCCESS) {
        char log[6144] = "";
        size_t len = 0;
        clGetProgramBuildInfo(d->program, d->device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, &len);
        log[sizeof log - 1] = '\0';
        return rtcd_fail(RTCD_ERROR_KERNEL_BUILD, "OpenCL program build failed on %s (%s); build log:\n%s", d->name,
                         rtcd_cl_error_string(err), log);
    }
    /* CPU devices run a pair per work item: work-groups with barriers only add cost there. */
    const char* entry = d->serial ? "rtcd_collide_pairs_serial" : "rtcd_collide_pairs";
    d->kernel = clCreateKernel(d->program, entry, &err);
    if (err == CL_SUCCESS && !d->serial) d->retry_kernel = clCreateKernel(d->program, entry = "rtcd_collide_retry", &err);
    if (err != CL_SUCCESS)
        return rtcd_fail(RTCD_ERROR_DEVICE, "OpenCL clCreateKernel(%s) failed on %s: %s (%d)", entry, d->name,
                         rtcd_cl_error_string(err), (int)err);
    return RTCD_OK;
}

/* `tag` ("" for a whole device) follows the name: sub-devices say which they are. */
static rtcd_error open_device(cl_device_state* d, const candidate* c, const char* suffix, const char* tag)
{
    cl_int err;
    char dev_name[200] = "", plat_name[48] = "";
    RTCD_CL_CHECK(clGetDeviceInfo(c->device, CL_DEVICE_NAME, sizeof dev_name - 1, dev_name, NULL), "clGetDeviceInfo");
    RTCD_CL_CHECK(clGetPlatformInfo(c->platform, CL_PLATFORM_NAME, sizeof plat_name - 1, plat_name, NULL),
                  "clGetPlatformInfo");
    snprintf(d->name, sizeof d->name, "%u:%u %s (%s)%s", c->platform_index, c->device_index, dev_name, plat_name,
             tag);
    d->device = c->device;
    /* The most one buffer may hold: the concatenated meshes are checked against it (cl_meshes.c). */
    if (clGetDeviceInfo(c->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof d->max_alloc, &d->max_alloc, NULL) !=
        CL_SUCCESS)
        d->max_alloc = 0;
    d->serial = (c->type & CL_DEVICE_TYPE_CPU) != 0 && !(c->type & CL_DEVICE_TYPE_GPU);
    d->on_host_cores = d->serial;
    /* Test hook: RTCD_CL_KERNEL=group|serial runs that kernel on any device,
     * so CI (PoCL) checks the work-group kernel too. */
    const char* kernel = getenv("RTCD_CL_KERNEL");
    if (kernel && !strcmp(kernel, "group")) d->serial = 0;
    if (kernel && !strcmp(kernel, "serial")) d->serial = 1;
    /* Test hook: a device that runs out of memory for the meshes (cl_meshes.c). */
    const char* fail_bytes = getenv("RTCD_CL_FAIL_BUFFER_BYTES");
    d->fail_bytes = fail_bytes ? (size_t)strtoull(fail_bytes, NULL, 10) : 0;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)c->platform, 0};
    d->context = clCreateContext(props, 1, &c->device, NULL, NULL, &err);
    RTCD_CL_CHECK(err, "clCreateContext");
    /* Profiling events time the uploads, kernels and downloads (rtcd_batch_stats). */
    d->queue = clCreateCommandQueue(d->context, c->device, CL_QUEUE_PROFILING_ENABLE, &err);
    RTCD_CL_CHECK(err, "clCreateCommandQueue");
    return build_program(d, suffix);
}

static void release_sub_devices(cl_device_id* ids, cl_uint from, cl_uint to)
{
    for (cl_uint i = from; i < to; ++i)
        if (ids[i]) clReleaseDevice(ids[i]);
}

/* Splits c into e->split equal sub-devices (CL_DEVICE_PARTITION_EQUALLY) and
 * opens the first ones, up to `limit` devices in all, each with its own
 * context, queue and program. Every sub-device not handed to a device slot
 * (which releases it on close) is released here, on success and on failure. */
static rtcd_error open_split(rtcd_opencl* cl, const char* spec, const candidate* c, const spec_entry* e,
                             uint32_t limit)
{
    char name[200] = "";
    clGetDeviceInfo(c->device, CL_DEVICE_NAME, sizeof name - 1, name, NULL);
    cl_device_partition_property kinds[16];
    size_t kinds_size = 0;
    int equally = 0;
    if (clGetDeviceInfo(c->device, CL_DEVICE_PARTITION_PROPERTIES, sizeof kinds, kinds, &kinds_size) == CL_SUCCESS)
        for (size_t i = 0; i < kinds_size / sizeof kinds[0] && i < 16; ++i)
            equally |= kinds[i] == CL_DEVICE_PARTITION_EQUALLY;
    if (!equally)
        return rtcd_fail(RTCD_ERROR_NO_DEVICE,
                         "OpenCL: device selection '%s': device %u:%u (%s) does not support partitioning into equal "
                         "sub-devices (CL_DEVICE_PARTITION_EQUALLY)",
                         spec, e->platform, e->device, name);
    cl_uint max_sub = 0, units = 0;
    RTCD_CL_CHECK(clGetDeviceInfo(c->device, CL_DEVICE_PARTITION_MAX_SUB_DEVICES, sizeof max_sub, &max_sub, NULL),
                  "clGetDeviceInfo(CL_DEVICE_PARTITION_MAX_SUB_DEVICES)");
    RTCD_CL_CHECK(clGetDeviceInfo(c->device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL),
                  "clGetDeviceInfo(CL_DEVICE_MAX_COMPUTE_UNITS)");
    if (e->split > max_sub || e->split > units)
        return rtcd_fail(RTCD_ERROR_NO_DEVICE,
                         "OpenCL: device selection '%s': device %u:%u (%s) splits into at most %u sub-devices "
                         "(%u compute units), not %u",
                         spec, e->platform, e->device, name, max_sub < units ? max_sub : units, units, e->split);
    if (units % e->split)
        return rtcd_fail(RTCD_ERROR_NO_DEVICE,
                         "OpenCL: device selection '%s': the %u compute units of device %u:%u (%s) do not split into "
                         "%u equal sub-devices",
                         spec, units, e->platform, e->device, name, e->split);
    /* EQUALLY takes the compute units per sub-device. */
    cl_device_partition_property props[] = {CL_DEVICE_PARTITION_EQUALLY,
                                            (cl_device_partition_property)(units / e->split), 0};
    cl_uint made = 0;
    cl_int err = clCreateSubDevices(c->device, props, 0, NULL, &made);
    if (err == CL_SUCCESS && made < e->split) err = CL_DEVICE_PARTITION_FAILED;
    if (err != CL_SUCCESS)
        return rtcd_fail(RTCD_ERROR_NO_DEVICE,
                         "OpenCL: device selection '%s': clCreateSubDevices could not split device %u:%u (%s) into %u: "
                         "%s (%d)",
                         spec, e->platform, e->device, name, e->split, rtcd_cl_error_string(err), (int)err);
    cl_device_id* ids = rtcd_calloc(made, sizeof *ids);
    if (!ids) return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "OpenCL: no memory for %u sub-devices", made);
    cl_uint got = 0;
    err = clCreateSubDevices(c->device, props, made, ids, &got);
    if (err != CL_SUCCESS || got < e->split) {
        if (err == CL_SUCCESS) release_sub_devices(ids, 0, got < made ? got : made);
        rtcd_free(ids);
        if (err == CL_SUCCESS) err = CL_DEVICE_PARTITION_FAILED;
        return rtcd_fail(RTCD_ERROR_NO_DEVICE,
                         "OpenCL: device selection '%s': clCreateSubDevices could not split device %u:%u (%s) into %u: "
                         "%s (%d)",
                         spec, e->platform, e->device, name, e->split, rtcd_cl_error_string(err), (int)err);
    }
    if (got > made) got = made;
    rtcd_error result = RTCD_OK;
    cl_uint used = 0;
    for (; used < e->split && cl->device_count < limit && result == RTCD_OK; ++used) {
        cl_device_state* d = &cl->devices[cl->device_count++];
        d->device = ids[used]; /* the slot owns it from here: rtcd_cl_close_devices releases it */
        cl_uint sub_units = 0;
        clGetDeviceInfo(ids[used], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof sub_units, &sub_units, NULL);
        char tag[64];
        snprintf(tag, sizeof tag, " [sub %u/%u, %u CU]", used + 1, e->split, sub_units);
        candidate sub = *c;
        sub.device = ids[used];
        result = open_device(d, &sub, cl->kernel_suffix, tag);
    }
    release_sub_devices(ids, used, got);
    rtcd_free(ids);
    return result;
}

/* Whether PoCL may pin its workers: it pins worker k to CPU k, for as many
 * workers as POCL_MAX_PTHREAD_COUNT (or POCL_PTHREAD_MIN_THREADS) asks, else
 * one per CPU, and aborts the process when the system refuses a CPU (one
 * outside this process's affinity, as in a container given CPUs 2-3, or
 * past the last). So every CPU from 0 to that count must be ours. */
static int workers_may_be_pinned(void)
{
#ifdef __linux__
    cpu_set_t mask;
    CPU_ZERO(&mask);
    if (sched_getaffinity(0, sizeof mask, &mask) != 0) return 0;
    const char* max = getenv("POCL_MAX_PTHREAD_COUNT");
    const char* min = getenv("POCL_PTHREAD_MIN_THREADS");
    long workers = max ? strtol(max, NULL, 10) : 0, at_least = min ? strtol(min, NULL, 10) : 0;
    if (workers <= 0) workers = sysconf(_SC_NPROCESSORS_ONLN);
    if (at_least > workers) workers = at_least;
    if (workers < 1 || workers > CPU_SETSIZE) return 0;
    for (long c = 0; c < workers; ++c)
        if (!CPU_ISSET((int)c, &mask)) return 0;
    return 1;
#else
    return 0;
#endif
}

/* A split CPU device (PoCL) runs sub-device k's commands on its worker
 * thread k only. Unpinned, the OS sometimes queues two workers on one core
 * for a whole time slice, and one sub-device's kernel waits up to 4 ms for
 * the other's (`perf sched` on the avalanche: 0.8 ms mean scheduling delay
 * a wake-up). PoCL pins worker k to core k when POCL_AFFINITY is set; it
 * reads it when its workers start (the process's first OpenCL call), so it
 * is set before ours, only for a split, only where every worker's CPU is
 * ours (workers_may_be_pinned), and never over the user's own. */
static void pin_cpu_workers(const spec_entry* entries, uint32_t count)
{
    for (uint32_t k = 0; k < count; ++k)
        if (entries[k].split > 1) {
            if (!getenv("POCL_AFFINITY") && workers_may_be_pinned() && setenv("POCL_AFFINITY", "1", 0) == 0)
                rtcd_log(RTCD_LOG_INFO, "OpenCL: POCL_AFFINITY=1 (a split device: one core per PoCL worker)");
            return;
        }
}

rtcd_error rtcd_cl_open_devices(rtcd_opencl* cl)
{
    const char* spec = cl->def.devices ? cl->def.devices : getenv("RTCD_DEVICES");
    if (spec && !strcmp(spec, "cpu"))
        return rtcd_fail(RTCD_ERROR_UNSUPPORTED, "OpenCL: device selection 'cpu' asks for the CPU reference backend");
    /* A list is checked before any OpenCL call: malformed text fails the same with or without a platform. */
    spec_entry entries[RTCD_CL_MAX_SPEC_ENTRIES];
    uint32_t entry_count = 0;
    if (spec && *spec && strcmp(spec, "all") && strcmp(spec, "gpu")) {
        rtcd_error e = parse_spec(spec, entries, &entry_count);
        if (e != RTCD_OK) return e;
    }
    pin_cpu_workers(entries, entry_count);
    cl_platform_id platforms[16];
    cl_uint np = 0;
    cl_int err = clGetPlatformIDs(16, platforms, &np);
    if (err == -1001 || (err == CL_SUCCESS && np == 0))
        return rtcd_fail(RTCD_ERROR_NO_DEVICE, "OpenCL: no platform (no ICD found by the loader)");
    RTCD_CL_CHECK(err, "clGetPlatformIDs");
    candidate all[64];
    uint32_t n = 0;
    int any_gpu = 0;
    for (cl_uint p = 0; p < np && p < 16; ++p) {
        cl_device_id ids[16];
        cl_uint nd = 0;
        if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 16, ids, &nd) != CL_SUCCESS) continue;
        for (cl_uint i = 0; i < nd && i < 16 && n < 64; ++i) {
            candidate* c = &all[n++];
            c->platform = platforms[p];
            c->device = ids[i];
            c->platform_index = p;
            c->device_index = i;
            RTCD_CL_CHECK(clGetDeviceInfo(ids[i], CL_DEVICE_TYPE, sizeof c->type, &c->type, NULL), "clGetDeviceInfo");
            any_gpu |= (c->type & CL_DEVICE_TYPE_GPU) != 0;
        }
    }
    /* A device to split must exist (a plain entry naming none is skipped, as before). */
    for (uint32_t k = 0; k < entry_count; ++k) {
        if (!entries[k].split) continue;
        int found = 0;
        for (uint32_t i = 0; i < n && !found; ++i)
            found = all[i].platform_index == entries[k].platform && all[i].device_index == entries[k].device;
        if (!found)
            return rtcd_fail(RTCD_ERROR_NO_DEVICE,
                             "OpenCL: device selection '%s': no device %u:%u to split (%u device(s) found)", spec,
                             entries[k].platform, entries[k].device, n);
    }
    uint32_t limit = cl->def.max_devices ? cl->def.max_devices : RTCD_CL_MAX_DEVICES;
    if (limit > RTCD_CL_MAX_DEVICES) limit = RTCD_CL_MAX_DEVICES;
    for (uint32_t i = 0; i < n && cl->device_count < limit; ++i) {
        const spec_entry* e = selected(spec, entries, entry_count, &all[i], any_gpu);
        if (!e) continue;
        rtcd_error r;
        if (e->split) {
            r = open_split(cl, spec, &all[i], e, limit);
        } else {
            cl_device_state* d = &cl->devices[cl->device_count++];
            r = open_device(d, &all[i], cl->kernel_suffix, "");
        }
        if (r != RTCD_OK) return r;
    }
    if (cl->device_count == 0)
        return rtcd_fail(RTCD_ERROR_NO_DEVICE, "OpenCL: %u device(s) found, none matches the selection '%s'", n,
                         spec ? spec : "(default: GPUs, else any)");
    return RTCD_OK;
}

void rtcd_cl_close_devices(rtcd_opencl* cl)
{
    for (uint32_t i = 0; i < cl->device_count; ++i) {
        cl_device_state* d = &cl->devices[i];
        for (int b = 0; b < RTCD_CL_MESH_BUFFERS; ++b)
            if (d->mesh_buffers[b]) clReleaseMemObject(d->mesh_buffers[b]);
        for (int a = 0; a < 2; ++a)
            if (d->arena[a]) clReleaseMemObject(d->arena[a]);
        if (d->pairs) clReleaseMemObject(d->pairs);
        if (d->results) clReleaseMemObject(d->results);
        if (d->bodies) clReleaseMemObject(d->bodies);
        rtcd_cl_host_array_free(d, &d->pinned_pairs); /* unmapped through the queue: before it goes */
        rtcd_cl_host_array_free(d, &d->pinned_results);
        rtcd_cl_host_array_free(d, &d->pinned_bodies);
        if (d->rays) clReleaseMemObject(d->rays);
        if (d->retry) clReleaseMemObject(d->retry);
        if (d->kernel) clReleaseKernel(d->kernel);
        if (d->retry_kernel) clReleaseKernel(d->retry_kernel);
        if (d->program) clReleaseProgram(d->program);
        if (d->queue) clReleaseCommandQueue(d->queue);
        if (d->context) clReleaseContext(d->context);
        /* A sub-device (one with a parent) is ours to release; root devices are not counted. */
        cl_device_id parent = NULL;
        if (d->device &&
            clGetDeviceInfo(d->device, CL_DEVICE_PARENT_DEVICE, sizeof parent, &parent, NULL) == CL_SUCCESS && parent)
            clReleaseDevice(d->device);
        rtcd_free(d->host_rays);
        memset(d, 0, sizeof *d);
    }
    cl->device_count = 0;
}
