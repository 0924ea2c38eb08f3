/* Host arrays a device copies from and to every call (the pairs' records,
 * their results): pinned where the device gives such memory (a mapped
 * CL_MEM_ALLOC_HOST_PTR buffer, which drivers copy at the bus's full speed
 * instead of staging pageable memory), else ordinary memory. */
#include "cl_internal.h"

#include <string.h>

void rtcd_cl_host_array_free(cl_device_state* d, cl_host_array* a)
{
    if (a->pinned) {
        if (a->data && d->queue) {
            clEnqueueUnmapMemObject(d->queue, a->pinned, a->data, 0, NULL, NULL);
            clFinish(d->queue);
        }
        clReleaseMemObject(a->pinned);
    } else {
        rtcd_free(a->data);
    }
    memset(a, 0, sizeof *a);
}

rtcd_error rtcd_cl_host_array(cl_device_state* d, cl_host_array* a, size_t bytes)
{
    if (bytes <= a->cap && a->data) return RTCD_OK;
    size_t cap = a->cap ? a->cap : 65536;
    while (cap < bytes) cap *= 2;
    rtcd_cl_host_array_free(d, a);
    cl_int err = CL_INVALID_DEVICE_TYPE;
    /* A CPU device's memory is the host's: nothing to pin. */
    cl_mem buf = d->serial ? NULL : clCreateBuffer(d->context, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, cap, NULL, &err);
    if (buf) {
        void* p = clEnqueueMapBuffer(d->queue, buf, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, cap, 0, NULL, NULL, &err);
        if (err == CL_SUCCESS && p) {
            a->pinned = buf;
            a->data = p;
            a->cap = cap;
            return RTCD_OK;
        }
        clReleaseMemObject(buf);
    }
    /* No pinned memory: pageable, copied more slowly but the same. */
    a->data = rtcd_alloc(cap);
    if (!a->data) return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "OpenCL: no host memory for %zu bytes of pair records", cap);
    a->cap = cap;
    return RTCD_OK;
}
