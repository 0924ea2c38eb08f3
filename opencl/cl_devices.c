/* Device discovery through the ICD loader, selection, and the program build
 * (whose log is always surfaced on failure). */
#include "cl_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* "gpu", "all", or "p:d,p:d". */
static int selected(const char* spec, const candidate* c, int any_gpu)
{
    if (!spec || !*spec) return any_gpu ? (c->type & CL_DEVICE_TYPE_GPU) != 0 : 1;
    if (!strcmp(spec, "all")) return 1;
    if (!strcmp(spec, "gpu")) return (c->type & CL_DEVICE_TYPE_GPU) != 0;
    const char* s = spec;
    while (*s) {
        char* end;
        unsigned long p = strtoul(s, &end, 10);
        if (*end != ':') return 0;
        unsigned long d = strtoul(end + 1, &end, 10);
        if (p == c->platform_index && d == c->device_index) return 1;
        s = *end == ',' ? end + 1 : end;
        if (*end != ',' && *end != '\0') return 0;
    }
    return 0;
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
    err = clBuildProgram(d->program, 1, &d->device, "-cl-std=CL1.2", NULL, NULL);
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
    if (err != CL_SUCCESS)
        return rtcd_fail(RTCD_ERROR_DEVICE, "OpenCL clCreateKernel(%s) failed on %s: %s (%d)", entry, d->name,
                         rtcd_cl_error_string(err), (int)err);
    return RTCD_OK;
}

static rtcd_error open_device(cl_device_state* d, const candidate* c, const char* suffix)
{
    cl_int err;
    char dev_name[200] = "", plat_name[48] = "";
    RTCD_CL_CHECK(clGetDeviceInfo(c->device, CL_DEVICE_NAME, sizeof dev_name - 1, dev_name, NULL), "clGetDeviceInfo");
    RTCD_CL_CHECK(clGetPlatformInfo(c->platform, CL_PLATFORM_NAME, sizeof plat_name - 1, plat_name, NULL),
                  "clGetPlatformInfo");
    snprintf(d->name, sizeof d->name, "%u:%u %s (%s)", c->platform_index, c->device_index, dev_name, plat_name);
    d->device = c->device;
    d->serial = (c->type & CL_DEVICE_TYPE_CPU) != 0 && !(c->type & CL_DEVICE_TYPE_GPU);
    /* Test hook: RTCD_CL_KERNEL=group|serial runs that kernel on any device,
     * so CI (PoCL) checks the work-group kernel too. */
    const char* kernel = getenv("RTCD_CL_KERNEL");
    if (kernel && !strcmp(kernel, "group")) d->serial = 0;
    if (kernel && !strcmp(kernel, "serial")) d->serial = 1;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)c->platform, 0};
    d->context = clCreateContext(props, 1, &c->device, NULL, NULL, &err);
    RTCD_CL_CHECK(err, "clCreateContext");
    d->queue = clCreateCommandQueue(d->context, c->device, 0, &err);
    RTCD_CL_CHECK(err, "clCreateCommandQueue");
    return build_program(d, suffix);
}

rtcd_error rtcd_cl_open_devices(rtcd_opencl* cl)
{
    const char* spec = cl->def.devices ? cl->def.devices : getenv("RTCD_DEVICES");
    if (spec && !strcmp(spec, "cpu"))
        return rtcd_fail(RTCD_ERROR_UNSUPPORTED, "OpenCL: device selection 'cpu' asks for the CPU reference backend");
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
        for (cl_uint i = 0; i < nd && n < 64; ++i) {
            candidate* c = &all[n++];
            c->platform = platforms[p];
            c->device = ids[i];
            c->platform_index = p;
            c->device_index = i;
            RTCD_CL_CHECK(clGetDeviceInfo(ids[i], CL_DEVICE_TYPE, sizeof c->type, &c->type, NULL), "clGetDeviceInfo");
            any_gpu |= (c->type & CL_DEVICE_TYPE_GPU) != 0;
        }
    }
    uint32_t limit = cl->def.max_devices ? cl->def.max_devices : RTCD_CL_MAX_DEVICES;
    if (limit > RTCD_CL_MAX_DEVICES) limit = RTCD_CL_MAX_DEVICES;
    for (uint32_t i = 0; i < n && cl->device_count < limit; ++i) {
        if (!selected(spec, &all[i], any_gpu)) continue;
        cl_device_state* d = &cl->devices[cl->device_count++];
        rtcd_error e = open_device(d, &all[i], cl->kernel_suffix);
        if (e != RTCD_OK) return e;
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
        if (d->state) clReleaseMemObject(d->state);
        rtcd_free(d->free_slots);
        if (d->pairs) clReleaseMemObject(d->pairs);
        if (d->results) clReleaseMemObject(d->results);
        if (d->rays) clReleaseMemObject(d->rays);
        if (d->kernel) clReleaseKernel(d->kernel);
        if (d->program) clReleaseProgram(d->program);
        if (d->queue) clReleaseCommandQueue(d->queue);
        if (d->context) clReleaseContext(d->context);
        rtcd_free(d->host_pairs);
        rtcd_free(d->host_results);
        rtcd_free(d->host_rays);
        rtcd_free(d->batch_index);
        memset(d, 0, sizeof *d);
    }
    cl->device_count = 0;
}
