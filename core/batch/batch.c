/* rtcd_batch: the one way into the narrow phase for a batch of pairs. It
 * resolves the backend (AUTO's rule), validates defs and poses, and hands
 * the pairs to the backend behind core/batch/backend.h. */
#include "backend.h"
#include "hooks.h"
#include "task.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct rtcd_batch {
    int refcount;
    rtcd_narrowphase_def def;
    char* devices;                 /* def.devices, owned */
    const rtcd_backend_ops* ops;
    void* impl;
    rtcd_backend resolved;
    rtcd_call_scratch expanded;    /* rtcd_batch_collide's pairs in the body form */
    uint8_t* body_bad;             /* per body of a call: its pose is not finite */
    size_t body_bad_cap;
    /* pairs whose bodies' poses are finite, when some are not */
    rtcd_body_pair* valid;
    rtcd_pair_result* valid_results;
    uint32_t* valid_index;
    size_t valid_cap;
    double prep_ms;                /* the last call's checks (and expansion), before its backend ran */
};

/* Registered backends by rtcd_backend kind; zero-initialised, so a
 * constructor may register before this file's own initialisation runs. */
static const rtcd_backend_ops* g_backends[RTCD_BACKEND_OPENCL + 1];

void rtcd_backend_register(rtcd_backend kind, const rtcd_backend_ops* ops)
{
    if ((int)kind > RTCD_BACKEND_AUTO && (int)kind <= RTCD_BACKEND_OPENCL) g_backends[kind] = ops;
}

const rtcd_backend_ops* rtcd_backend_find(rtcd_backend kind)
{
    if (kind == RTCD_BACKEND_CPU) return &rtcd_cpu_backend_ops;
    return (int)kind > RTCD_BACKEND_AUTO && (int)kind <= RTCD_BACKEND_OPENCL ? g_backends[kind] : NULL;
}

static rtcd_error open_kind(rtcd_backend kind, const rtcd_narrowphase_def* def, rtcd_batch* b)
{
    const rtcd_backend_ops* ops = rtcd_backend_find(kind);
    if (!ops) return rtcd_fail(RTCD_ERROR_UNSUPPORTED, "rtcd was built without OpenCL (RTCD_WITH_OPENCL=OFF)");
    rtcd_error err = ops->create(def, &b->impl);
    if (err != RTCD_OK) return err;
    b->ops = ops;
    b->resolved = kind;
    return RTCD_OK;
}

static rtcd_error open_cpu(const rtcd_narrowphase_def* def, rtcd_batch* b)
{
    return open_kind(RTCD_BACKEND_CPU, def, b);
}

static rtcd_error open_opencl(const rtcd_narrowphase_def* def, rtcd_batch* b)
{
    return open_kind(RTCD_BACKEND_OPENCL, def, b);
}

static void say_choice(const rtcd_batch* b, const char* why)
{
    char line[512];
    if (b->resolved == RTCD_BACKEND_CPU)
        snprintf(line, sizeof line, "rtcd: backend cpu, %u thread(s)%s%s", b->ops->thread_count(b->impl),
                 why ? ": " : "", why ? why : "");
    else
        snprintf(line, sizeof line, "rtcd: backend opencl, %u device(s), first %s%s%s", b->ops->device_count(b->impl),
                 b->ops->device_name(b->impl, 0), why ? ": " : "", why ? why : "");
    rtcd_log_message(RTCD_LOG_INFO, line);
}

/* AUTO: a GPU when there is one; devices named by the def or RTCD_DEVICES
 * when given; otherwise the CPU reference on every core. Without a GPU an
 * OpenCL CPU device (PoCL) runs the same code on the same cores and adds
 * its kernel builds (measured: 512-blob avalanche 14.6-16.8 ms per step on
 * PoCL against 14.1-14.6 on one CPU-reference thread, worst step 131-152 ms
 * while the kernels build), so the CPU reference is the better choice. */
static rtcd_error open_backend(const rtcd_narrowphase_def* def, rtcd_batch* b)
{
    if (def->backend == RTCD_BACKEND_CPU) {
        rtcd_error err = open_cpu(def, b);
        if (err == RTCD_OK) say_choice(b, NULL);
        return err;
    }
    if (def->backend == RTCD_BACKEND_OPENCL) {
        rtcd_error err = open_opencl(def, b);
        if (err == RTCD_OK) say_choice(b, NULL);
        return err;
    }
    const char* spec = def->devices ? def->devices : getenv("RTCD_DEVICES");
    char why[400] = "";
    if (!spec || strcmp(spec, "cpu") != 0) {
        rtcd_narrowphase_def gpu = *def;
        if (!spec) gpu.devices = "gpu";
        if (open_opencl(&gpu, b) == RTCD_OK) {
            say_choice(b, spec ? "AUTO took the devices RTCD_DEVICES / def.devices name" : "AUTO found a GPU");
            return RTCD_OK;
        }
        snprintf(why, sizeof why, "AUTO found no usable OpenCL %s (%s)", spec ? "device" : "GPU",
                 rtcd_last_error_message());
        char* cut = strchr(why, '\n'); /* a build log: its first line */
        if (cut) *cut = '\0';
    } else {
        snprintf(why, sizeof why, "%s is \"cpu\"", def->devices ? "def.devices" : "RTCD_DEVICES");
    }
    rtcd_error err = open_cpu(def, b);
    if (err == RTCD_OK) say_choice(b, why);
    return err;
}

rtcd_error rtcd_batch_create(const rtcd_narrowphase_def* def, rtcd_batch** out)
{
    if (out) *out = NULL;
    if (!def || !out) return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_batch_create: NULL argument");
    rtcd_error err = rtcd_narrowphase_def_validate(def);
    if (err != RTCD_OK) return err;
    rtcd_batch* b = rtcd_calloc(1, sizeof *b);
    if (!b) return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_batch_create: out of memory");
    b->refcount = 1;
    b->def = *def;
    b->devices = rtcd_strdup(def->devices);
    b->def.devices = b->devices;
    if (def->devices && !b->devices) err = rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_batch_create: out of memory");
    if (err == RTCD_OK) err = open_backend(def, b);
    if (err != RTCD_OK) {
        rtcd_batch_release(b);
        return err;
    }
    *out = b;
    return RTCD_OK;
}

void rtcd_batch_retain(rtcd_batch* b)
{
    if (b) b->refcount++;
}

void rtcd_batch_release(rtcd_batch* b)
{
    if (!b || --b->refcount > 0) return;
    if (b->ops) b->ops->destroy(b->impl);
    rtcd_free(b->devices);
    rtcd_call_scratch_free(&b->expanded);
    rtcd_free(b->body_bad);
    rtcd_free(b->valid);
    rtcd_free(b->valid_results);
    rtcd_free(b->valid_index);
    rtcd_free(b);
}

static rtcd_task_system batch_tasks(rtcd_batch* b);

/* The argument checks of a call, on the batch's workers: a large call's
 * descriptors are megabytes, and this is their first reading. First the
 * bodies (a non-finite pose), then the pairs (indices in range, meshes set;
 * how many have a body of non-finite pose). A body no pair names is not
 * looked at further. */
typedef struct check_job {
    const rtcd_call* call;
    uint8_t* body_bad;           /* per body: its pose is not finite */
    int pairs_trusted;           /* rtcd_call_expand's: indices in range, meshes set */
    _Atomic uint32_t first_out;  /* the first pair with an index past body_count or a body without mesh */
    _Atomic uint32_t bad_bodies, bad_pairs;
} check_job;

#define CHECK_RANGE 1024u

static void check_bodies(uint32_t begin, uint32_t end, uint32_t worker, void* ctx)
{
    (void)worker;
    check_job* job = ctx;
    uint32_t bad = 0;
    for (uint32_t i = begin; i < end; ++i) {
        job->body_bad[i] = (uint8_t)!rtcd_transform_finite(&job->call->bodies[i].pose);
        bad += job->body_bad[i];
    }
    if (bad) atomic_fetch_add_explicit(&job->bad_bodies, bad, memory_order_relaxed);
}

/* Pairs [begin, end): with pairs_trusted 0, the first that names a body
 * past the call's or one without a mesh; with count_bad, how many have a
 * body with a non-finite pose. */
static void check_pair_range(check_job* job, uint32_t begin, uint32_t end, int count_bad)
{
    const rtcd_call* call = job->call;
    uint32_t out = UINT32_MAX, bad = 0;
    for (uint32_t i = begin; i < end; ++i) {
        const rtcd_body_pair* p = &call->pairs[i];
        if (!job->pairs_trusted && (p->a >= call->body_count || p->b >= call->body_count ||
                                    !call->bodies[p->a].mesh || !call->bodies[p->b].mesh)) {
            if (out == UINT32_MAX) out = i;
            continue;
        }
        if (count_bad) bad += job->body_bad[p->a] | job->body_bad[p->b];
    }
    if (bad) atomic_fetch_add_explicit(&job->bad_pairs, bad, memory_order_relaxed);
    rtcd_atomic_min_u32(&job->first_out, out);
}

/* The pairs' references only. */
static void check_pair_refs(uint32_t begin, uint32_t end, uint32_t worker, void* ctx)
{
    (void)worker;
    check_pair_range(ctx, begin, end, 0);
}

/* The pairs with a non-finite body counted (references trusted by now). */
static void count_bad_pairs(uint32_t begin, uint32_t end, uint32_t worker, void* ctx)
{
    (void)worker;
    check_pair_range(ctx, begin, end, 1);
}

/* One loop over a call's bodies, then its pairs (items past body_count):
 * poses and references checked together; pairs with a bad body are
 * counted after, only when there is one. */
static void check_bodies_and_pairs(uint32_t begin, uint32_t end, uint32_t worker, void* ctx)
{
    check_job* job = ctx;
    uint32_t bodies = job->call->body_count;
    if (begin < bodies) check_bodies(begin, end < bodies ? end : bodies, worker, ctx);
    if (end > bodies) check_pair_range(job, (begin > bodies ? begin : bodies) - bodies, end - bodies, 0);
}

/* The pairs of a call whose bodies are finite run; the others get zeroed
 * results, and the call one warning. */
static rtcd_error collide_finite(rtcd_batch* b, const rtcd_call* call, const uint8_t* body_bad, uint32_t bad,
                                 rtcd_pair_result* results, rtcd_ray_hit* rays)
{
    uint32_t n = call->pair_count;
    if (b->valid_cap < n) {
        rtcd_free(b->valid);
        rtcd_free(b->valid_results);
        rtcd_free(b->valid_index);
        b->valid = rtcd_alloc(n * sizeof *b->valid);
        b->valid_results = rtcd_alloc(n * sizeof *b->valid_results);
        b->valid_index = rtcd_alloc(n * sizeof *b->valid_index);
        b->valid_cap = b->valid && b->valid_results && b->valid_index ? n : 0;
        if (!b->valid_cap) return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_batch_collide: out of memory");
    }
    uint32_t m = 0, first_bad = UINT32_MAX;
    size_t offset = 0;
    for (uint32_t i = 0; i < n; ++i) {
        memset(&results[i], 0, sizeof results[i]);
        const rtcd_body_pair* p = &call->pairs[i];
        if (!body_bad[p->a] && !body_bad[p->b]) {
            b->valid[m] = *p;
            b->valid_index[m++] = i;
        } else if (first_bad == UINT32_MAX) {
            first_bad = i;
        }
        offset += rtcd_call_ray_room(call, i);
    }
    char line[200];
    snprintf(line, sizeof line, "rtcd: %u pair(s) with a non-finite pose get no contacts (first: pair %u, key %llu)",
             bad, first_bad, (unsigned long long)call->pairs[first_bad].key);
    rtcd_log_message(RTCD_LOG_WARNING, line);
    /* Rays, when asked for, go through a compacted buffer laid out for the valid pairs. */
    rtcd_ray_hit* compact = NULL;
    if (rays && !(compact = rtcd_alloc((offset ? offset : 1) * sizeof *compact)))
        return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_batch_collide: out of memory");
    rtcd_call valid = {call->bodies, b->valid, call->body_count, m};
    rtcd_error err = b->ops->collide(b->impl, &valid, b->valid_results, compact);
    size_t from = 0, to = 0;
    for (uint32_t i = 0, k = 0; i < n && err == RTCD_OK; ++i) {
        if (k < m && b->valid_index[k] == i) {
            results[i] = b->valid_results[k];
            if (rays) memcpy(rays + to, compact + from, results[i].colliding_rays * sizeof *rays);
            from += rtcd_call_ray_room(call, i);
            k++;
        }
        to += rtcd_call_ray_room(call, i);
    }
    rtcd_free(compact);
    return err;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static int grow_body_flags(rtcd_batch* b, uint32_t bodies)
{
    return rtcd_grow((void**)&b->body_bad, &b->body_bad_cap, (size_t)bodies + 1, 1);
}

/* Checks a call and runs it. From rtcd_call_expand (expanded = 1) its
 * indices are in range, its meshes set and b->body_bad filled
 * (`bad_bodies` of them); `start`: when the call began (its profile counts
 * the checks). */
static rtcd_error collide_call(rtcd_batch* b, const rtcd_call* call, int expanded, uint32_t bad_bodies,
                               rtcd_pair_result* results, rtcd_ray_hit* rays, double start)
{
    if (!expanded && !grow_body_flags(b, call->body_count))
        return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_batch_collide: out of memory for %u bodies", call->body_count);
    check_job job = {.call = call, .body_bad = b->body_bad, .pairs_trusted = expanded};
    atomic_init(&job.first_out, UINT32_MAX);
    atomic_init(&job.bad_bodies, bad_bodies);
    atomic_init(&job.bad_pairs, 0u);
    rtcd_task_system ts = batch_tasks(b);
    if (!expanded && call->body_count <= UINT32_MAX - call->pair_count) {
        rtcd_parallel_for(&ts, call->body_count + call->pair_count, CHECK_RANGE, check_bodies_and_pairs, &job);
    } else if (!expanded) {
        rtcd_parallel_for(&ts, call->body_count, CHECK_RANGE, check_bodies, &job);
        rtcd_parallel_for(&ts, call->pair_count, CHECK_RANGE, check_pair_refs, &job);
    }
    if (atomic_load(&job.first_out) == UINT32_MAX && atomic_load(&job.bad_bodies)) {
        job.pairs_trusted = 1;
        rtcd_parallel_for(&ts, call->pair_count, CHECK_RANGE, count_bad_pairs, &job);
    }
    uint32_t out = atomic_load(&job.first_out), bad = atomic_load(&job.bad_pairs);
    if (out != UINT32_MAX) {
        const rtcd_body_pair* p = &call->pairs[out];
        uint32_t body = p->a >= call->body_count   ? p->a
                        : p->b >= call->body_count ? p->b
                        : !call->bodies[p->a].mesh ? p->a
                                                   : p->b;
        if (body >= call->body_count)
            return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT,
                             "rtcd_batch_collide_bodies: pair %u names body %u, past the call's %u bodies", out, body,
                             call->body_count);
        return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_batch_collide_bodies: pair %u names body %u, which has a NULL mesh",
                         out, body);
    }
    b->prep_ms = now_ms() - start;
    if (!bad) return b->ops->collide(b->impl, call, results, rays);
    return collide_finite(b, call, b->body_bad, bad, results, rays);
}

rtcd_error rtcd_batch_collide(rtcd_batch* b, const rtcd_pair_desc* pairs, uint32_t n, rtcd_pair_result* results,
                              rtcd_ray_hit* rays)
{
    if (!b || (n && (!pairs || !results)))
        return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_batch_collide: NULL argument");
    double start = now_ms();
    if (n > UINT32_MAX / 2)
        return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_batch_collide: %u pairs are more than a call takes (%u)", n,
                         UINT32_MAX / 2);
    if (!grow_body_flags(b, 2 * n))
        return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_batch_collide: out of memory for %u pairs", n);
    rtcd_task_system ts = batch_tasks(b);
    rtcd_call call;
    uint32_t bad = 0;
    rtcd_error err = rtcd_call_expand(pairs, n, &ts, &b->expanded, &call, "rtcd_batch_collide", b->body_bad, &bad);
    return err == RTCD_OK ? collide_call(b, &call, 1, bad, results, rays, start) : err;
}

rtcd_error rtcd_batch_collide_bodies(rtcd_batch* b, const rtcd_body_desc* bodies, uint32_t body_count,
                                     const rtcd_body_pair* pairs, uint32_t pair_count, rtcd_pair_result* results,
                                     rtcd_ray_hit* rays)
{
    if (!b || (pair_count && (!pairs || !results || !bodies)) || (body_count && !bodies))
        return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_batch_collide_bodies: NULL argument");
    rtcd_call call = {bodies, pairs, body_count, pair_count};
    return collide_call(b, &call, 0, 0, results, rays, now_ms());
}

static int same_string(const char* x, const char* y) { return (!x && !y) || (x && y && !strcmp(x, y)); }

rtcd_error rtcd_batch_set_def(rtcd_batch* b, const rtcd_narrowphase_def* def)
{
    if (!b || !def) return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_batch_set_def: NULL argument");
    rtcd_error err = rtcd_narrowphase_def_validate(def);
    if (err != RTCD_OK) return err;
    int same_place = def->backend == b->def.backend && same_string(def->devices, b->devices) &&
                     def->max_devices == b->def.max_devices && def->threads == b->def.threads &&
                     !memcmp(&def->tasks, &b->def.tasks, sizeof def->tasks);
    if (same_place) {
        b->ops->set_def(b->impl, def);
        char* devices = b->devices;
        b->def = *def;
        b->def.devices = devices;
        return RTCD_OK;
    }
    rtcd_batch fresh;
    memset(&fresh, 0, sizeof fresh);
    fresh.devices = rtcd_strdup(def->devices);
    if (def->devices && !fresh.devices) return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_batch_set_def: out of memory");
    if ((err = open_backend(def, &fresh)) != RTCD_OK) {
        rtcd_free(fresh.devices);
        return err;
    }
    b->ops->destroy(b->impl);
    rtcd_free(b->devices);
    b->ops = fresh.ops;
    b->impl = fresh.impl;
    b->resolved = fresh.resolved;
    b->devices = fresh.devices;
    b->def = *def;
    b->def.devices = b->devices;
    return RTCD_OK;
}

rtcd_narrowphase_def rtcd_batch_def(const rtcd_batch* b) { return b ? b->def : rtcd_default_narrowphase_def(); }
rtcd_backend rtcd_batch_backend(const rtcd_batch* b) { return b ? b->resolved : RTCD_BACKEND_CPU; }
uint32_t rtcd_batch_device_count(const rtcd_batch* b) { return b ? b->ops->device_count(b->impl) : 0; }
const char* rtcd_batch_device_name(const rtcd_batch* b, uint32_t device)
{
    return b ? b->ops->device_name(b->impl, device) : "";
}
uint32_t rtcd_batch_thread_count(const rtcd_batch* b) { return b ? b->ops->thread_count(b->impl) : 0; }

rtcd_batch_stats rtcd_batch_last_stats(const rtcd_batch* b)
{
    rtcd_batch_stats s;
    memset(&s, 0, sizeof s);
    if (!b) return s;
    b->ops->stats(b->impl, &s);
    /* The batch's own checks came first: part of the call's planning. */
    s.ms += b->prep_ms;
    s.plan_ms += b->prep_ms;
    return s;
}

/* The task system the batch's work runs on (see rtcd_batch_parallel_for):
 * its backend's workers, so a batch has one pool. */
static rtcd_task_system batch_tasks(rtcd_batch* b)
{
    rtcd_task_system none;
    memset(&none, 0, sizeof none);
    none.worker_count = 1;
    const rtcd_task_system* ts = b && b->ops->tasks ? b->ops->tasks(b->impl) : NULL;
    return ts ? *ts : none;
}

void rtcd_batch_parallel_for(rtcd_batch* b, uint32_t count, uint32_t min_range, rtcd_task_fn* fn, void* ctx)
{
    rtcd_task_system ts = batch_tasks(b);
    rtcd_parallel_for(&ts, count, min_range, fn, ctx);
}

uint32_t rtcd_batch_worker_count(rtcd_batch* b)
{
    rtcd_task_system ts = batch_tasks(b);
    return ts.worker_count ? ts.worker_count : 1;
}
