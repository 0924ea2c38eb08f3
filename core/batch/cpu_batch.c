/* The CPU reference backend behind rtcd_batch: every pair of the batch runs
 * rtcd_pair_step (the shared per-vertex pipeline) and the shared contact
 * reduction, spread over a task system (rtcd's own pool, or the engine's).
 * Each pair writes its own result and keeps its own state, so the results
 * are bit-identical whatever the number of threads. */
#include "backend.h"
#include "narrowphase/pair_internal.h"
#include "key_map.h"
#include "task.h"

#include <stdatomic.h>
#include <string.h>
#include <time.h>

/* A pair's entry in the backend's map: its state, made by the worker of the
 * pair's first call. */
typedef struct cpu_pair {
    rtcd_pair_state* state;
} cpu_pair;

/* Scratch of one worker, on its own cache lines. */
typedef struct cpu_worker {
    rtcd_ray_rec* recs;
    rtcd_contact_v* contacts;
    float* scores; /* the reduction's (reduce_contacts_in) */
    uint32_t cap;
    double standard_ms, iterative_ms, reduce_ms;
    rtcd_error err;
    uint32_t err_pair;
    char pad[64];
} cpu_worker;

typedef struct cpu_backend {
    rtcd_narrowphase_def def;
    rtcd_thread_pool* pool; /* NULL: the engine's task system, or one thread */
    rtcd_task_system tasks;
    uint32_t workers;
    cpu_worker* work;       /* per worker index; scratch made on the index's first use (worker_scratch) */
    _Atomic uint64_t bad_worker; /* a worker index at or above workers; UINT64_MAX: none */
    /* key -> cpu_pair, kept across calls: each call claims its pairs'
     * entries before the workers run (new keys get one), and drops the
     * entries it did not see after. */
    rtcd_key_map map;
    rtcd_batch_stats stats;
    /* this call */
    const rtcd_call* call;
    rtcd_pair_result* results;
    rtcd_ray_hit* rays;
    size_t* ray_offset;
    uint32_t* slot_of;      /* pair i's slot in the map (rtcd_key_map_claim_all) */
    int keeps_states;       /* this call's pairs have entries (not the STANDARD algorithm) */
    size_t offset_cap, slot_cap;
} cpu_backend;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static cpu_pair* pair_at(const rtcd_key_map* m, uint32_t slot) { return rtcd_key_map_value(m, slot); }

/* Pair i's entry; NULL: a repeated key's copy, or the STANDARD algorithm. */
static cpu_pair* entry_of(const cpu_backend* b, uint32_t i)
{
    uint32_t s = b->slot_of[i];
    return b->keeps_states && s != RTCD_KEY_MAP_REPEATED ? pair_at(&b->map, s) : NULL;
}

static int drop_all(void* value, int claimed, void* ctx)
{
    (void)claimed;
    (void)ctx;
    rtcd_pair_state_release(((cpu_pair*)value)->state);
    return 1;
}

/* Every pair forgets its state. */
static void forget_states(cpu_backend* b)
{
    if (b->map.cap) rtcd_key_map_end(&b->map, NULL, drop_all, NULL);
    rtcd_key_map_free(&b->map);
}

static void cpu_destroy(void* impl)
{
    cpu_backend* b = impl;
    if (!b) return;
    rtcd_thread_pool_destroy(b->pool);
    for (uint32_t w = 0; b->work && w < b->workers; ++w) {
        rtcd_free(b->work[w].recs);
        rtcd_free(b->work[w].contacts);
        rtcd_free(b->work[w].scores);
    }
    rtcd_free(b->work);
    forget_states(b);
    rtcd_free(b->ray_offset);
    rtcd_free(b->slot_of);
    rtcd_free(b);
}

rtcd_error rtcd_cpu_backend_create(const rtcd_narrowphase_def* def, void** out)
{
    *out = NULL;
    cpu_backend* b = rtcd_calloc(1, sizeof *b);
    if (!b) return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "CPU backend: out of memory");
    b->def = *def;
    b->def.devices = NULL;
    if (def->tasks.enqueue) {
        b->tasks = def->tasks;
    } else {
        uint32_t threads = def->threads ? def->threads : rtcd_cpu_count();
        if (threads > 1) {
            rtcd_error err = rtcd_thread_pool_create(threads, &b->pool);
            if (err != RTCD_OK) {
                cpu_destroy(b);
                return err;
            }
            b->tasks = rtcd_thread_pool_system(b->pool);
        } else {
            b->tasks.worker_count = 1;
        }
    }
    b->workers = b->tasks.worker_count ? b->tasks.worker_count : 1; /* at most RTCD_MAX_WORKERS (validated) */
    atomic_init(&b->bad_worker, UINT64_MAX);
    b->work = rtcd_calloc(b->workers, sizeof *b->work);
    if (!b->work) {
        cpu_destroy(b);
        return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "CPU backend: out of memory");
    }
    *out = b;
    return RTCD_OK;
}

/* Worker `worker`'s scratch: NULL (the call fails) for an index beyond
 * worker_count. Only the thread running as `worker` touches its entry. */
static cpu_worker* worker_scratch(cpu_backend* b, uint32_t worker)
{
    if (worker >= b->workers) {
        atomic_store(&b->bad_worker, worker);
        return NULL;
    }
    return &b->work[worker];
}

/* Room for `need` records in w's scratch, grown when a pair first needs it:
 * memory follows the threads that run and the pairs they get, with no pass
 * over the call beforehand. 0 when out of memory (pair i then fails). */
static int worker_room(cpu_worker* w, uint32_t need, uint32_t i)
{
    if (w->cap >= need) return 1;
    uint32_t cap = w->cap * 2 > need ? w->cap * 2 : need;
    rtcd_free(w->recs);
    rtcd_free(w->contacts);
    rtcd_free(w->scores);
    w->recs = rtcd_alloc((size_t)cap * sizeof *w->recs);
    w->contacts = rtcd_alloc((size_t)cap * sizeof *w->contacts);
    w->scores = rtcd_alloc((size_t)cap * sizeof *w->scores);
    w->cap = w->recs && w->contacts && w->scores ? cap : 0;
    if (w->cap) return 1;
    if (w->err == RTCD_OK || i < w->err_pair) {
        w->err = RTCD_ERROR_OUT_OF_MEMORY;
        w->err_pair = i;
    }
    return 0;
}

/* Pair i (its map entry e) on worker w: its pass, its contacts, its reduction. */
static void run_pair(cpu_backend* b, cpu_worker* w, uint32_t i, cpu_pair* e)
{
    const rtcd_body_desc *ba = rtcd_call_a(b->call, i), *bb = rtcd_call_b(b->call, i);
    rtcd_pair_result* r = &b->results[i];
    memset(r, 0, sizeof *r);
    if (!worker_room(w, rtcd_pair_record_room(ba->mesh, bb->mesh), i)) return;
    rtcd_xform pa = rtcd_to_xform(&ba->pose), pb = rtcd_to_xform(&bb->pose);
    rtcd_pair_ctx ctx;
    rtcd_narrowphase_stats st;
    uint32_t n = 0;
    rtcd_error err = RTCD_OK;
    /* Only this pair owns its entry: a new one gets its state here. */
    if (e && !e->state) err = rtcd_pair_state_create(&e->state);
    rtcd_pair_state* state = e ? e->state : NULL;
    rtcd_pair_motion motion;
    rtcd_call_motion(b->call, i, &motion);
    if (err == RTCD_OK)
        err = rtcd_pair_step(&b->def, state, ba->mesh, &pa, bb->mesh, &pb, &motion, &ctx, w->recs, &n, &st);
    if (err != RTCD_OK) {
        if (w->err == RTCD_OK || i < w->err_pair) {
            w->err = err;
            w->err_pair = i;
        }
        return;
    }
    /* Records (and ctx) only when the pass found something; the reduction's
     * time goes to the profile. */
    if (n) {
        int mode = (int)b->def.contact_normal;
        double reduce_start = now_ms();
        for (uint32_t k = 0; k < n; ++k) {
            w->contacts[k] = pair_contact(&ctx, w->recs[k], mode);
            if (rec_is_ray(w->recs[k])) r->ray_length += w->recs[k].t;
        }
        uint32_t chosen[RTCD_MANIFOLD_POINTS];
        r->contact_count = reduce_contacts_in(w->contacts, n, ctx.margin, chosen, w->scores);
        for (uint32_t k = 0; k < r->contact_count; ++k) r->contacts[k] = rtcd_contact_to_public(w->contacts[chosen[k]]);
        w->reduce_ms += now_ms() - reduce_start;
        if (b->rays) rtcd_recs_to_rays(&ctx, w->recs, n, b->rays + b->ray_offset[i]);
    }
    r->colliding_rays = st.colliding_rays;
    r->rays_cast = st.rays_cast;
    r->standard_pass = st.standard_pass;
    r->predictive_rays = st.predictive_rays;
    r->walk_steps = st.walk_steps;
    r->kept_rays = st.kept_rays;
    r->kept_predictions = st.kept_predictions;
    r->crossing_contacts = st.crossing_contacts;
}

static void run_range(uint32_t begin, uint32_t end, uint32_t worker, void* context)
{
    cpu_backend* b = context;
    cpu_worker* w = worker_scratch(b, worker);
    if (!w) { /* the call fails; these results say nothing */
        memset(&b->results[begin], 0, (size_t)(end - begin) * sizeof *b->results);
        return;
    }
    /* Pairs' map entries are fetched eight ahead and their states four
     * ahead: cache misses on the states were half the iterative pass's
     * time, and then reading the entry (a map slot at the key's hash) to
     * find the state was 95 % of this loop's own time at 8192 blobs (perf),
     * most passes being short. */
    /* The loop fetches ahead within its range only, and a range is a
     * chunk of a few pairs when several workers share the call: the first
     * pairs' entries and states are fetched here, side by side (unfetched,
     * the first reading of a state in rtcd_track_plan was a third of that
     * function's time on 2 threads, perf, and none on one). */
    for (uint32_t i = begin; i < end && i < begin + 8; ++i) {
        const cpu_pair* e = entry_of(b, i);
        if (e) __builtin_prefetch(e);
    }
    for (uint32_t i = begin; i < end && i < begin + 4; ++i) {
        const cpu_pair* e = entry_of(b, i);
        if (e) rtcd_pair_state_prefetch(e->state);
        rtcd_prefetch_write(&b->results[i], sizeof *b->results);
    }
    /* One clock read per pair: each pair's time goes to the kind of pass it ran. */
    double last = now_ms();
    for (uint32_t i = begin; i < end; ++i) {
        if (i + 8 < end) {
            const cpu_pair* later = entry_of(b, i + 8); /* its address: nothing read yet */
            if (later) __builtin_prefetch(later);
        }
        cpu_pair* ahead = i + 4 < end ? entry_of(b, i + 4) : NULL;
        if (ahead) rtcd_pair_state_prefetch(ahead->state);
        /* Its result too, for writing: a store that misses stalls every
         * later load that reads a store just made (the poses' copies). */
        if (i + 4 < end) rtcd_prefetch_write(&b->results[i + 4], sizeof *b->results);
        run_pair(b, w, i, entry_of(b, i));
        double t = now_ms();
        if (b->results[i].standard_pass)
            w->standard_ms += t - last;
        else
            w->iterative_ms += t - last;
        last = t;
    }
}

/* Before a call: each pair claims its entry (a new key gets one, with its
 * state still to make); a key given twice runs its later copies without
 * state, as on the OpenCL backend. */
static rtcd_error claim_entries(cpu_backend* b, const rtcd_body_pair* pairs, uint32_t n)
{
    b->keeps_states = b->def.iterative.algorithm != RTCD_ALGORITHM_STANDARD;
    if (!b->keeps_states) {
        forget_states(b);
        return RTCD_OK;
    }
    if (!rtcd_key_map_begin(&b->map, n, sizeof(cpu_pair)))
        return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "CPU backend: no memory for the pair map");
    if (n) rtcd_key_map_claim_all(&b->map, &b->tasks, &pairs[0].key, sizeof *pairs, n, b->slot_of);
    return RTCD_OK;
}

/* After a call: the pairs it did not see, and those whose state could not
 * be made, leave the map. */
static int drop_unseen(void* value, int claimed, void* ctx)
{
    (void)ctx;
    cpu_pair* e = value;
    if (claimed && e->state) return 0;
    rtcd_pair_state_release(e->state);
    return 1;
}

static rtcd_error cpu_collide(void* impl, const rtcd_call* call, rtcd_pair_result* results, rtcd_ray_hit* rays)
{
    cpu_backend* b = impl;
    uint32_t n = call->pair_count;
    const rtcd_body_pair* pairs = call->pairs;
    double start = now_ms();
    memset(&b->stats, 0, sizeof b->stats);
    if (!rtcd_grow((void**)&b->slot_of, &b->slot_cap, n + 1, sizeof *b->slot_of) ||
        !rtcd_grow((void**)&b->ray_offset, &b->offset_cap, n + 1, sizeof *b->ray_offset))
        return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "CPU backend: out of memory for %u pairs", n);
    rtcd_error err = claim_entries(b, pairs, n);
    if (err != RTCD_OK) return err;
    /* Where each pair's rays go, when they are asked for. */
    size_t offset = 0;
    for (uint32_t i = 0; i < n && rays; ++i) {
        b->ray_offset[i] = offset;
        offset += rtcd_call_ray_room(call, i);
    }
    for (uint32_t w = 0; w < b->workers; ++w) {
        b->work[w].err = RTCD_OK;
        b->work[w].standard_ms = b->work[w].iterative_ms = b->work[w].reduce_ms = 0.0;
    }
    atomic_store(&b->bad_worker, UINT64_MAX);
    b->call = call;
    b->results = results;
    b->rays = rays;
    double run_start = now_ms();
    b->stats.plan_ms = run_start - start;
    /* Pair costs differ a hundredfold: small ranges balance the workers. */
    rtcd_parallel_for(&b->tasks, n, 4, run_range, b);
    double finish_start = now_ms();
    b->stats.run_ms = finish_start - run_start;
    if (b->map.cap) rtcd_key_map_end(&b->map, &b->tasks, drop_unseen, NULL);
    uint32_t first = UINT32_MAX;
    for (uint32_t w = 0; w < b->workers; ++w) {
        cpu_worker* wk = &b->work[w];
        b->stats.standard_ms += wk->standard_ms;
        b->stats.iterative_ms += wk->iterative_ms;
        b->stats.reduce_ms += wk->reduce_ms;
        if (wk->err != RTCD_OK && wk->err_pair < first) {
            first = wk->err_pair;
            err = wk->err;
        }
    }
    b->stats.pairs_per_device[0] = n;
    double end = now_ms();
    b->stats.finish_ms = end - finish_start;
    b->stats.ms = end - start;
    uint64_t bad = atomic_load(&b->bad_worker);
    if (bad != UINT64_MAX)
        return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT,
                         "CPU backend: the task system ran worker %llu, not below its worker_count %u; "
                         "the pairs of that range have no result",
                         (unsigned long long)bad, b->workers);
    if (err != RTCD_OK)
        return rtcd_fail(err, "CPU backend: pair %u (key %llu) failed: %s", first,
                         (unsigned long long)pairs[first].key, rtcd_error_name(err));
    return RTCD_OK;
}

static void cpu_set_def(void* impl, const rtcd_narrowphase_def* def)
{
    cpu_backend* b = impl;
    b->def = *def;
    b->def.devices = NULL;
    forget_states(b);
}

static void cpu_stats(const void* impl, rtcd_batch_stats* out) { *out = ((const cpu_backend*)impl)->stats; }
static uint32_t cpu_device_count(const void* impl)
{
    (void)impl;
    return 0;
}
static const char* cpu_device_name(const void* impl, uint32_t device)
{
    (void)impl;
    (void)device;
    return "";
}
static uint32_t cpu_thread_count(const void* impl) { return ((const cpu_backend*)impl)->workers; }

static const rtcd_task_system* cpu_tasks(void* impl) { return &((cpu_backend*)impl)->tasks; }

const rtcd_backend_ops rtcd_cpu_backend_ops = {.name = "cpu",
                                               .create = rtcd_cpu_backend_create,
                                               .collide = cpu_collide,
                                               .set_def = cpu_set_def,
                                               .stats = cpu_stats,
                                               .device_count = cpu_device_count,
                                               .device_name = cpu_device_name,
                                               .thread_count = cpu_thread_count,
                                               .tasks = cpu_tasks,
                                               .destroy = cpu_destroy};
