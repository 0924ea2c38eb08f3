/* The batch on one or several devices: a pair keeps its device while it
 * walks kept rays; new pairs and standard passes go to the device expected
 * to finish first (cl_plan.c). A call goes to the devices in segments, each
 * uploaded and launched once planned (one on CPU devices), then one
 * download per device, and the host waits once for all of them. For
 * the iterative algorithms the host plans each pair's pass (rtcd_track_plan,
 * as the CPU reference) and the kept rays stay on the pair's device (cl_state.c).
 *
 * A pair with a mesh the devices could not take (cl_meshes.c) runs on the
 * CPU reference backend, owned here, in the same call and while the devices
 * work: its result is the CPU backend's, bit for bit. Such a pair keeps its
 * state there; a key that moves between the devices and the CPU (its meshes
 * changed) forgets its state on the way, as a new key would: its first call
 * on either side is a standard pass. */
#define _GNU_SOURCE /* sched_getcpu */
#include "cl_internal.h"
#include "batch/backend.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

_Static_assert(sizeof(rtcd_world_ray) == sizeof(rtcd_ray_hit), "device rays are copied into rtcd_ray_hit");

void rtcd_opencl_set_def(rtcd_opencl* cl, const rtcd_narrowphase_def* def)
{
    if (!cl || !def) return;
    cl->def = *def;
    cl->def.devices = NULL; /* read at creation only; not owned */
    rtcd_cl_reset_tracks(cl);
    if (cl->cpu) rtcd_cpu_backend_ops.set_def(cl->cpu, &cl->def);
}

static void free_call(cl_call* c)
{
    rtcd_free(c->ray_offset);
    rtcd_free(c->info_of);
    rtcd_free(c->info_at);
    rtcd_free(c->where);
    rtcd_free(c->standard);
    rtcd_free(c->cost);
    rtcd_free(c->device);
    rtcd_free(c->pos);
    rtcd_free(c->keep_room);
    rtcd_free(c->overflow);
    rtcd_free(c->body_where);
    rtcd_free(c->staged);
    memset(c, 0, sizeof *c);
}

/* This call's per-pair arrays (cl->call), grown to n pairs (contents not kept). */
static int grow_call(cl_call* c, uint32_t n)
{
    size_t want = n ? n : 1;
    if (c->cap >= want) return 1;
    size_t cap = c->cap ? c->cap : 1024;
    while (cap < want) cap *= 2;
    free_call(c);
    c->ray_offset = rtcd_alloc(cap * sizeof *c->ray_offset);
    c->info_of = rtcd_alloc(cap * sizeof *c->info_of);
    c->info_at = rtcd_alloc(cap * sizeof *c->info_at);
    c->where = rtcd_alloc(2 * cap * sizeof *c->where);
    c->standard = rtcd_alloc(cap * sizeof *c->standard);
    c->cost = rtcd_alloc(cap * sizeof *c->cost);
    c->device = rtcd_alloc(cap * sizeof *c->device);
    c->pos = rtcd_alloc(cap * sizeof *c->pos);
    c->keep_room = rtcd_alloc(cap * sizeof *c->keep_room);
    c->overflow = rtcd_alloc(cap * sizeof *c->overflow);
    int ok = c->ray_offset && c->info_of && c->info_at && c->where && c->standard && c->cost && c->device && c->pos &&
             c->keep_room && c->overflow;
    if (!ok) free_call(c);
    else c->cap = cap;
    return ok;
}

rtcd_error rtcd_opencl_create(const rtcd_narrowphase_def* def, const char* kernel_suffix, rtcd_opencl** out)
{
    if (out) *out = NULL;
    if (!def || !out) return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_opencl_create: NULL argument");
    rtcd_error err = rtcd_narrowphase_def_validate(def);
    if (err != RTCD_OK) return err;
    rtcd_opencl* cl = rtcd_calloc(1, sizeof *cl);
    if (!cl) return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_opencl_create: out of memory");
    cl->def = *def;
    atomic_init(&cl->info_free_count, 0u);
    atomic_init(&cl->info_high, 0u);
    const char* segments = getenv("RTCD_CL_SEGMENTS");
    cl->segments = segments ? (uint32_t)strtoul(segments, NULL, 10) : 0u;
    /* Test hook for whole worlds: a suffix that breaks the kernels. */
    if (!kernel_suffix) kernel_suffix = getenv("RTCD_CL_KERNEL_SUFFIX");
    if (kernel_suffix && !(cl->kernel_suffix = rtcd_strdup(kernel_suffix))) {
        rtcd_free(cl);
        return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_opencl_create: out of memory");
    }
    /* The host's share of each call: the engine's task system, or a pool. */
    if (def->tasks.enqueue) {
        cl->tasks = def->tasks;
    } else {
        uint32_t threads = def->threads ? def->threads : rtcd_cpu_count();
        if (threads > 1 && (err = rtcd_thread_pool_create(threads, &cl->pool)) != RTCD_OK) {
            rtcd_opencl_destroy(cl);
            return err;
        }
        cl->tasks = rtcd_thread_pool_system(cl->pool);
    }
    err = rtcd_cl_open_devices(cl);
    cl->def.devices = NULL; /* read at creation only; not owned */
    if (err != RTCD_OK) {
        rtcd_opencl_destroy(cl);
        return err;
    }
    *out = cl;
    return RTCD_OK;
}

void rtcd_opencl_destroy(rtcd_opencl* cl)
{
    if (!cl) return;
    rtcd_cl_close_devices(cl);
    rtcd_cl_registry_free(&cl->registry);
    rtcd_key_map_free(&cl->map);
    rtcd_free(cl->infos);
    rtcd_free(cl->info_free);
    if (cl->cpu) rtcd_cpu_backend_ops.destroy(cl->cpu);
    rtcd_thread_pool_destroy(cl->pool);
    free_call(&cl->call);
    rtcd_call_scratch_free(&cl->expanded);
    rtcd_free(cl->cpu_pairs);
    rtcd_free(cl->cpu_results);
    rtcd_free(cl->cpu_index);
    rtcd_free(cl->cpu_rays);
    rtcd_free(cl->kernel_suffix);
    rtcd_free(cl);
}

uint32_t rtcd_opencl_device_count(const rtcd_opencl* cl) { return cl ? cl->device_count : 0; }

const char* rtcd_opencl_device_name(const rtcd_opencl* cl, uint32_t i)
{
    return cl && i < cl->device_count ? cl->devices[i].name : "";
}

uint64_t rtcd_opencl_device_max_alloc(const rtcd_opencl* cl, uint32_t i)
{
    return cl && i < cl->device_count ? (uint64_t)cl->devices[i].max_alloc : 0;
}

rtcd_batch_stats rtcd_opencl_last_stats(const rtcd_opencl* cl)
{
    rtcd_batch_stats none;
    memset(&none, 0, sizeof none);
    return cl ? cl->stats : none;
}

rtcd_opencl_upload_stats rtcd_opencl_uploads(const rtcd_opencl* cl)
{
    rtcd_opencl_upload_stats s;
    memset(&s, 0, sizeof s);
    if (!cl) return s;
    for (uint32_t d = 0; d < cl->device_count; ++d) {
        s.full_uploads += cl->devices[d].full_uploads;
        s.mesh_refreshes += cl->devices[d].mesh_refreshes;
        s.bytes += cl->devices[d].upload_bytes;
    }
    s.reregistrations = cl->registry.reregistrations;
    s.last_place_ms = cl->place_ms;
    return s;
}

/* ---- per-device batch ---- */

static rtcd_error ensure_buffer(cl_device_state* d, cl_mem* buf, size_t* cap, size_t bytes, cl_mem_flags flags)
{
    if (bytes <= *cap && *buf) return RTCD_OK;
    size_t c = *cap ? *cap : 4096;
    while (c < bytes) c *= 2;
    if (*buf) clReleaseMemObject(*buf);
    *buf = NULL;
    cl_int err;
    *buf = clCreateBuffer(d->context, flags, c, NULL, &err);
    RTCD_CL_CHECK(err, "clCreateBuffer(batch)");
    *cap = c;
    return RTCD_OK;
}

/* Every argument of kernel k; pair_count: the slots it may run below. */
static rtcd_error set_args(rtcd_opencl* cl, cl_device_state* d, cl_kernel k, cl_uint pair_count, int want_rays)
{
    cl_uint brute = cl->def.traversal == RTCD_TRAVERSAL_BRUTE_FORCE, mode = (cl_uint)cl->def.contact_normal,
            rays_flag = (cl_uint)want_rays;
    for (cl_uint a = 0; a < RTCD_CL_MESH_BUFFERS; ++a)
        RTCD_CL_CHECK(clSetKernelArg(k, RTCD_KARG_MESHES + a, sizeof(cl_mem), &d->mesh_buffers[a]),
                      "clSetKernelArg(meshes)");
    RTCD_CL_CHECK(clSetKernelArg(k, RTCD_KARG_BODIES, sizeof(cl_mem), &d->bodies), "clSetKernelArg(bodies)");
    RTCD_CL_CHECK(clSetKernelArg(k, RTCD_KARG_PAIRS, sizeof(cl_mem), &d->pairs), "clSetKernelArg(pairs)");
    RTCD_CL_CHECK(clSetKernelArg(k, RTCD_KARG_PAIR_COUNT, sizeof pair_count, &pair_count), "clSetKernelArg(count)");
    RTCD_CL_CHECK(clSetKernelArg(k, RTCD_KARG_BRUTE_FORCE, sizeof brute, &brute), "clSetKernelArg(brute_force)");
    RTCD_CL_CHECK(clSetKernelArg(k, RTCD_KARG_MODE, sizeof mode, &mode), "clSetKernelArg(mode)");
    RTCD_CL_CHECK(clSetKernelArg(k, RTCD_KARG_RESULTS, sizeof(cl_mem), &d->results), "clSetKernelArg(results)");
    RTCD_CL_CHECK(clSetKernelArg(k, RTCD_KARG_RAYS, sizeof(cl_mem), &d->rays), "clSetKernelArg(rays)");
    RTCD_CL_CHECK(clSetKernelArg(k, RTCD_KARG_WANT_RAYS, sizeof rays_flag, &rays_flag), "clSetKernelArg(want_rays)");
    /* No arena yet (nothing kept so far): a NULL buffer, never read. The
     * one written may have grown since the last segment (cl_state.c). */
    RTCD_CL_CHECK(clSetKernelArg(k, RTCD_KARG_STATE, sizeof(cl_mem), &d->arena[d->arena_in]), "clSetKernelArg(state)");
    RTCD_CL_CHECK(clSetKernelArg(k, RTCD_KARG_STATE_OUT, sizeof(cl_mem), &d->arena[d->arena_in ^ 1u]),
                  "clSetKernelArg(state_out)");
    if (d->retry_kernel)
        RTCD_CL_CHECK(clSetKernelArg(k, RTCD_KARG_RETRY, sizeof(cl_mem), &d->retry), "clSetKernelArg(retry)");
    return RTCD_OK;
}

/* A device's first segment with pairs: its meshes, the call's buffers
 * (for the whole call: every slot and ray the call may give it), the
 * bodies' poses, the retry list emptied. */
static rtcd_error launch_begin(rtcd_opencl* cl, cl_device_state* d, int want_rays)
{
    rtcd_error err = rtcd_cl_upload_meshes(d, &cl->registry);
    if (err != RTCD_OK) return err;
    int several = cl->call.segments > 1;
    uint32_t slots = several ? cl->call.request->pair_count : d->batch_count;
    size_t rays = want_rays ? (several ? cl->call.ray_bound : d->rays_total) : 0;
    if (want_rays && !rtcd_grow((void**)&d->host_rays, &d->host_rays_cap, rays + 1, sizeof(rtcd_world_ray)))
        return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_opencl_collide: out of memory for rays");
    size_t body_bytes = (size_t)cl->call.request->body_count * RTCD_CL_BODY_FLOATS * sizeof(float);
    if ((err = ensure_buffer(d, &d->pairs, &d->pairs_cap, slots * sizeof(rtcd_cl_pair), CL_MEM_READ_ONLY)) != RTCD_OK ||
        (err = ensure_buffer(d, &d->bodies, &d->bodies_cap, body_bytes ? body_bytes : 1, CL_MEM_READ_ONLY)) != RTCD_OK ||
        (d->retry_kernel &&
         (err = ensure_buffer(d, &d->retry, &d->retry_cap, (slots + 1u) * sizeof(cl_uint), CL_MEM_READ_WRITE)) !=
             RTCD_OK) ||
        (err = ensure_buffer(d, &d->results, &d->results_cap, slots * sizeof(rtcd_cl_result), CL_MEM_WRITE_ONLY)) !=
            RTCD_OK ||
        (err = ensure_buffer(d, &d->rays, &d->rays_cap, (rays ? rays : 1) * sizeof(rtcd_world_ray),
                             CL_MEM_WRITE_ONLY)) != RTCD_OK)
        return err;
    if (body_bytes) {
        RTCD_CL_CHECK(clEnqueueWriteBuffer(d->queue, d->bodies, CL_FALSE, 0, body_bytes, d->host_bodies, 0, NULL,
                                           &d->ev_bodies),
                      "clEnqueueWriteBuffer(bodies)");
        d->sent_bytes += body_bytes;
    }
    if (d->retry_kernel) {
        /* The retry list starts empty; the zero must outlive the call (the write is not blocking). */
        static const cl_uint zero = 0;
        RTCD_CL_CHECK(clEnqueueWriteBuffer(d->queue, d->retry, CL_FALSE, 0, sizeof zero, &zero, 0, NULL, NULL),
                      "clEnqueueWriteBuffer(retry)");
    }
    d->launched = 1;
    return RTCD_OK;
}

/* Segment s on one device: its records up and its kernel queued over its
 * slots [seg_begin, batch_count) (a global offset: the kernels take their
 * pair from the global id); nothing here blocks. Each command leaves an
 * event for the profile (read once the device is done). */
static rtcd_error launch_segment(rtcd_opencl* cl, cl_device_state* d, uint32_t s, int want_rays)
{
    uint32_t first = d->seg_begin, end = d->batch_count;
    if (end == first) return RTCD_OK;
    rtcd_error err = d->launched ? RTCD_OK : launch_begin(cl, d, want_rays);
    if (err != RTCD_OK) return err;
    RTCD_CL_CHECK(clEnqueueWriteBuffer(d->queue, d->pairs, CL_FALSE, first * sizeof(rtcd_cl_pair),
                                       (end - first) * sizeof(rtcd_cl_pair), d->host_pairs + first, 0, NULL,
                                       &d->ev_upload[s]),
                  "clEnqueueWriteBuffer(pairs)");
    d->sent_bytes += (end - first) * sizeof(rtcd_cl_pair);
    if ((err = set_args(cl, d, d->kernel, end, want_rays)) != RTCD_OK) return err;
    size_t local = RTCD_CL_GROUP_SIZE, offset = (size_t)first * RTCD_CL_GROUP_SIZE,
           global = (size_t)(end - first) * RTCD_CL_GROUP_SIZE;
    if (d->serial) {
        /* One work item per pair, alone in its group: its private ray store
         * (24 KB) then never multiplies by a group size on a worker's stack. */
        offset = first;
        global = end - first;
        local = 1;
    }
    RTCD_CL_CHECK(clEnqueueNDRangeKernel(d->queue, d->kernel, 1, &offset, &global, &local, 0, NULL, &d->ev_kernel[s]),
                  "clEnqueueNDRangeKernel(rtcd_collide_pairs)");
    RTCD_CL_CHECK(clFlush(d->queue), "clFlush");
    return RTCD_OK;
}

/* After the last segment: the retry kernel and the downloads; nothing blocks. */
static rtcd_error launch_end(rtcd_opencl* cl, cl_device_state* d, int want_rays)
{
    uint32_t n = d->batch_count; /* launched: n > 0 */
    if (!d->launched) return RTCD_OK;
    if (d->retry_kernel) {
        rtcd_error err = set_args(cl, d, d->retry_kernel, n, want_rays);
        if (err != RTCD_OK) return err;
        /* A fixed number of groups: the host never waits to learn how many pairs are listed. */
        size_t local = RTCD_CL_GROUP_SIZE, groups = n < RTCD_CL_RETRY_GROUPS ? n : RTCD_CL_RETRY_GROUPS,
               retry_global = groups * local;
        RTCD_CL_CHECK(clEnqueueNDRangeKernel(d->queue, d->retry_kernel, 1, NULL, &retry_global, &local, 0, NULL,
                                             &d->ev_retry),
                      "clEnqueueNDRangeKernel(rtcd_collide_retry)");
    }
    RTCD_CL_CHECK(clEnqueueReadBuffer(d->queue, d->results, CL_FALSE, 0, n * sizeof(rtcd_cl_result), d->host_results,
                                      0, NULL, &d->ev_download),
                  "clEnqueueReadBuffer(results)");
    d->got_bytes += n * sizeof(rtcd_cl_result);
    if (want_rays) {
        RTCD_CL_CHECK(clEnqueueReadBuffer(d->queue, d->rays, CL_FALSE, 0, d->rays_total * sizeof(rtcd_world_ray),
                                          d->host_rays, 0, NULL, &d->ev_rays),
                      "clEnqueueReadBuffer(rays)");
        d->got_bytes += d->rays_total * sizeof(rtcd_world_ray);
    }
    RTCD_CL_CHECK(clFlush(d->queue), "clFlush");
    return RTCD_OK;
}

/* A finished command's device time in ms, and the event released (NULL: 0). */
static double event_ms(cl_event* ev)
{
    if (!*ev) return 0.0;
    cl_ulong t0 = 0, t1 = 0;
    double ms = 0.0;
    if (clGetEventProfilingInfo(*ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL) == CL_SUCCESS &&
        clGetEventProfilingInfo(*ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL) == CL_SUCCESS && t1 >= t0)
        ms = (double)(t1 - t0) * 1e-6;
    clReleaseEvent(*ev);
    *ev = NULL;
    return ms;
}

/* The devices' part of the profile, once they are done (events released). */
static void device_profile(rtcd_opencl* cl)
{
    double kernel_ms[RTCD_CL_MAX_DEVICES];
    for (uint32_t dv = 0; dv < cl->device_count; ++dv) {
        cl_device_state* d = &cl->devices[dv];
        cl->stats.upload_ms += event_ms(&d->ev_bodies);
        kernel_ms[dv] = event_ms(&d->ev_retry);
        for (uint32_t s = 0; s < RTCD_CL_MAX_SEGMENTS; ++s) {
            cl->stats.upload_ms += event_ms(&d->ev_upload[s]);
            kernel_ms[dv] += event_ms(&d->ev_kernel[s]);
        }
        cl->stats.device_ms += kernel_ms[dv];
        cl->stats.download_ms += event_ms(&d->ev_download) + event_ms(&d->ev_rays);
        cl->stats.upload_bytes += d->sent_bytes;
        cl->stats.download_bytes += d->got_bytes;
        d->sent_bytes = d->got_bytes = 0;
    }
    if (cl->device_count > 1) rtcd_cl_learn_speeds(cl, kernel_ms);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* ---- pairs with a mesh off the devices: the CPU reference ---- */

/* The CPU backend's view of this call: the pairs with a mesh off the
 * devices, in call order (*count of them). Makes the backend on first need,
 * with this backend's def (its threads or the engine's task system). */
static rtcd_error cpu_gather(rtcd_opencl* cl, const rtcd_call* c, const uint32_t* where, uint32_t m, int want_rays,
                             uint32_t* count)
{
    uint32_t n = c->pair_count;
    *count = 0;
    if (!m) return RTCD_OK; /* the usual case: no pass over the pairs */
    size_t room = 0;
    for (uint32_t i = 0; i < n && want_rays; ++i)
        if (rtcd_cl_off_device(where, i)) room += rtcd_call_ray_room(c, i);
    if (!rtcd_grow((void**)&cl->cpu_pairs, &cl->cpu_pairs_cap, m, sizeof *cl->cpu_pairs) ||
        !rtcd_grow((void**)&cl->cpu_results, &cl->cpu_results_cap, m, sizeof *cl->cpu_results) ||
        !rtcd_grow((void**)&cl->cpu_index, &cl->cpu_index_cap, m, sizeof *cl->cpu_index) ||
        (want_rays && !rtcd_grow((void**)&cl->cpu_rays, &cl->cpu_rays_cap, room + 1, sizeof *cl->cpu_rays)))
        return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_opencl_collide: out of memory for %u pair(s) on the CPU", m);
    if (!cl->cpu) {
        /* On the same workers as the host's share of the call. */
        rtcd_narrowphase_def cpu_def = cl->def;
        if (cl->tasks.enqueue) cpu_def.tasks = cl->tasks;
        rtcd_error err = rtcd_cpu_backend_create(&cpu_def, &cl->cpu);
        if (err != RTCD_OK) return err;
    }
    for (uint32_t i = 0, k = 0; i < n; ++i)
        if (rtcd_cl_off_device(where, i)) {
            cl->cpu_pairs[k] = c->pairs[i];
            cl->cpu_index[k++] = i;
        }
    *count = m;
    return RTCD_OK;
}

/* Runs the gathered pairs (over the call's bodies) and puts their results
 * (and rays) where the caller expects them. */
static rtcd_error cpu_run(rtcd_opencl* cl, uint32_t m, const rtcd_call* c, rtcd_pair_result* results,
                          rtcd_ray_hit* rays, const size_t* ray_offset)
{
    rtcd_call sub = {c->bodies, cl->cpu_pairs, c->body_count, m};
    rtcd_error err = rtcd_cpu_backend_ops.collide(cl->cpu, &sub, cl->cpu_results, rays ? cl->cpu_rays : NULL);
    if (err != RTCD_OK) return err;
    size_t from = 0;
    for (uint32_t k = 0; k < m; ++k) {
        uint32_t i = cl->cpu_index[k];
        results[i] = cl->cpu_results[k];
        if (rays) memcpy(rays + ray_offset[i], cl->cpu_rays + from, results[i].colliding_rays * sizeof *rays);
        from += rtcd_call_ray_room(c, i);
    }
    return RTCD_OK;
}

/* How many segments a call of n pairs goes in: one on a CPU device (its
 * workers share the host's cores, so planning beside its kernels gains
 * nothing), else one per RTCD_CL_SEGMENT_PAIRS pairs, at most
 * RTCD_CL_MAX_SEGMENTS; RTCD_CL_SEGMENTS sets it for every call. */
static uint32_t call_segments(const rtcd_opencl* cl, uint32_t n)
{
    uint32_t s = cl->segments;
    if (!s) {
        s = n / RTCD_CL_SEGMENT_PAIRS;
        for (uint32_t dv = 0; dv < cl->device_count; ++dv)
            if (cl->devices[dv].on_host_cores) s = 1;
    }
    if (s > RTCD_CL_MAX_SEGMENTS) s = RTCD_CL_MAX_SEGMENTS;
    if (s > n) s = n;
    return s ? s : 1;
}

/* A call in the body form, checked (core/batch/batch.c). */
static rtcd_error collide_call(rtcd_opencl* cl, const rtcd_call* c, rtcd_pair_result* results, rtcd_ray_hit* rays)
{
    uint32_t n = c->pair_count;
    double start = now_ms();
    memset(&cl->stats, 0, sizeof cl->stats);
    cl_call* call = &cl->call;
    if (!grow_call(call, n) ||
        !rtcd_grow((void**)&call->body_where, &call->body_cap, (size_t)c->body_count + 1, sizeof *call->body_where))
        return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_opencl_collide: out of memory for %u pairs", n);
    call->request = c;
    call->results = results;
    call->rays = rays;
    size_t caller_rays = 0;
    for (uint32_t i = 0; i < n && rays; ++i) {
        call->ray_offset[i] = caller_rays;
        caller_rays += rtcd_call_ray_room(c, i);
    }
    /* Meshes first: those the devices cannot take send their pairs to the CPU. */
    double place_start = now_ms();
    rtcd_error err = rtcd_cl_place_meshes(cl, c->bodies, c->body_count, call->body_where);
    cl->place_ms = now_ms() - place_start;
    if (err == RTCD_OK) err = rtcd_cl_assign_pairs(cl, c->pairs, n, call->info_of);
    uint32_t off = 0, on_cpu = 0, segments = call_segments(cl, n);
    cl->stats.segments = segments;
    /* Each segment goes to the devices as soon as it is planned: they work
     * on it while the host plans the next. The last goes in run_ms: with
     * one segment, the profile is planning, then the devices (run_ms holds
     * their work). */
    if (err == RTCD_OK) {
        err = rtcd_cl_plan_begin(cl, n, segments, caller_rays);
        for (uint32_t s = 0; s < segments && err == RTCD_OK; ++s) {
            err = rtcd_cl_plan_segment(cl, s);
            for (uint32_t dv = 0; dv < cl->device_count && err == RTCD_OK && s + 1 < segments; ++dv)
                err = launch_segment(cl, &cl->devices[dv], s, rays != NULL);
        }
        rtcd_cl_plan_end(cl, &off);
    }
    if (err == RTCD_OK) err = cpu_gather(cl, c, call->where, off, rays != NULL, &on_cpu);
    cl->stats.cpu_fallback_pairs = on_cpu;
    double run_start = now_ms();
    cl->stats.plan_ms = run_start - start;
    /* A split CPU device's worker k runs on core k only (cl_devices.c).
     * Woken on this thread's core it takes the core, and this thread waits
     * for a time slice before its next launch (a late start of 0.3-4 ms in
     * a quarter of the calls with two sub-devices, 2 cores): that device
     * goes last. Elsewhere the order changes nothing. */
    int core = sched_getcpu();
    for (uint32_t k = 0; k < cl->device_count && err == RTCD_OK; ++k) {
        uint32_t dv = core >= 0 && (uint32_t)core < cl->device_count ? (k + (uint32_t)core + 1u) % cl->device_count : k;
        if ((err = launch_segment(cl, &cl->devices[dv], segments - 1, rays != NULL)) == RTCD_OK)
            err = launch_end(cl, &cl->devices[dv], rays != NULL);
    }
    /* The CPU's pairs while the devices work. */
    if (err == RTCD_OK && on_cpu) {
        double fallback_start = now_ms();
        err = cpu_run(cl, on_cpu, c, results, rays, call->ray_offset);
        cl->stats.fallback_ms = now_ms() - fallback_start;
    }
    /* The one wait of the step: every queue was flushed, all devices run together. */
    for (uint32_t dv = 0; dv < cl->device_count; ++dv) {
        cl_int st = clFinish(cl->devices[dv].queue);
        if (st != CL_SUCCESS && err == RTCD_OK)
            err = rtcd_fail(RTCD_ERROR_DEVICE, "OpenCL clFinish failed on %s: %s (%d)", cl->devices[dv].name,
                            rtcd_cl_error_string(st), (int)st);
    }
    double finish_start = now_ms();
    cl->stats.run_ms = finish_start - run_start;
    device_profile(cl);
    if (err == RTCD_OK) err = rtcd_cl_finish_call(cl, n);
    /* The rays this call kept are what the next one walks. */
    for (uint32_t dv = 0; dv < cl->device_count && err == RTCD_OK; ++dv) cl->devices[dv].arena_in ^= 1u;
    if (err != RTCD_OK) {
        /* A failed call may have planned passes whose rays never came back. */
        rtcd_cl_reset_tracks(cl);
        if (cl->cpu) rtcd_cpu_backend_ops.set_def(cl->cpu, &cl->def);
        cl->cpu_pairs_last = 0;
    } else if (!on_cpu && cl->cpu_pairs_last) {
        /* No pair on the CPU this call: the keys it held were not seen there. */
        rtcd_cpu_backend_ops.set_def(cl->cpu, &cl->def);
        cl->cpu_pairs_last = 0;
    } else {
        cl->cpu_pairs_last = on_cpu > 0;
    }
    call->request = NULL;
    call->results = NULL;
    call->rays = NULL;
    double end = now_ms();
    cl->stats.finish_ms = end - finish_start;
    cl->stats.ms = end - start;
    return err;
}

rtcd_error rtcd_opencl_collide(rtcd_opencl* cl, const rtcd_pair_desc* pairs, uint32_t n, rtcd_pair_result* results,
                               rtcd_ray_hit* rays)
{
    if (!cl || (n && (!pairs || !results)))
        return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_opencl_collide: NULL argument");
    /* In the body form, two bodies a pair; a NULL mesh refuses the call before anything changes. */
    rtcd_call c;
    rtcd_error err = rtcd_call_expand(pairs, n, &cl->tasks, &cl->expanded, &c, "rtcd_opencl_collide", NULL, NULL);
    return err == RTCD_OK ? collide_call(cl, &c, results, rays) : err;
}

/* ---- the seam (core/batch/backend.h) ---- */

static rtcd_error ops_collide(void* impl, const rtcd_call* call, rtcd_pair_result* results, rtcd_ray_hit* rays)
{
    return collide_call(impl, call, results, rays);
}
static void ops_set_def(void* impl, const rtcd_narrowphase_def* def) { rtcd_opencl_set_def(impl, def); }
static void ops_stats(const void* impl, rtcd_batch_stats* out) { *out = rtcd_opencl_last_stats(impl); }
static uint32_t ops_device_count(const void* impl) { return rtcd_opencl_device_count(impl); }
static const char* ops_device_name(const void* impl, uint32_t i) { return rtcd_opencl_device_name(impl, i); }
static uint32_t ops_thread_count(const void* impl)
{
    (void)impl;
    return 0;
}
static const rtcd_task_system* ops_tasks(void* impl) { return &((rtcd_opencl*)impl)->tasks; }
static void ops_destroy(void* impl) { rtcd_opencl_destroy(impl); }
static rtcd_error ops_create(const rtcd_narrowphase_def* def, void** impl)
{
    rtcd_opencl* cl = NULL;
    rtcd_error err = rtcd_opencl_create(def, NULL, &cl);
    *impl = cl;
    return err;
}

static const rtcd_backend_ops opencl_backend_ops = {.name = "opencl",
                                                    .create = ops_create,
                                                    .collide = ops_collide,
                                                    .set_def = ops_set_def,
                                                    .stats = ops_stats,
                                                    .device_count = ops_device_count,
                                                    .device_name = ops_device_name,
                                                    .thread_count = ops_thread_count,
                                                    .tasks = ops_tasks,
                                                    .destroy = ops_destroy};

/* Into the batch's table when librtcd loads: the core never names this file. */
__attribute__((constructor)) static void register_opencl_backend(void)
{
    rtcd_backend_register(RTCD_BACKEND_OPENCL, &opencl_backend_ops);
}
