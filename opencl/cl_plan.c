/* The host's share of an OpenCL call, spread over the task system: each
 * pair's pass planned (rtcd_track_plan, as the CPU reference) and its device
 * record written before the launch, its result and kept-ray count taken
 * back after. Pairs touch only their own state, so any number of workers
 * gives the same records; what is shared (device choice, buffer and arena
 * positions) is settled in one cheap serial pass between the two parallel
 * ones. */
#include "cl_internal.h"
#include "batch/task.h"
#include "query/surface_overlap.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Pairs per piece of the parallel loops: a pair's planning costs about a
 * microsecond. */
#define PLAN_RANGE 64u

/* Pair i's state, once planned (NULL: a repeated key's copy). */
static cl_pair_info* pair_info(const rtcd_opencl* cl, uint32_t i)
{
    return cl->call.info_at[i] != RTCD_CL_NO_SLOT ? &cl->infos[cl->call.info_at[i]] : NULL;
}

static void pose12(const rtcd_transform* t, float out[RTCD_CL_BODY_FLOATS])
{
    memcpy(out, t->rotation, 9 * sizeof(float));
    memcpy(out + 9, t->translation, 3 * sizeof(float));
}

/* ---- before the launch ---- */

/* call.device[i] while planning: the pair has no device yet. */
#define NEW_ON_DEVICE 0xfeu

/* call.standard[i]: an iterative pass with no kept rays. It walks nothing
 * and finds nothing, and its result says so (every count 0), so no device
 * runs it: the host writes that result while planning. Most pairs of a
 * settled pile are these (82 % of the pair passes at 8192 blobs). */
#define PASS_EMPTY 2u

/* Estimated work of an iterative pass beyond its kept rays (a standard pass
 * costs both meshes' vertex counts). */
#define ITERATIVE_PASS_COST 16u

/* Where a device's pairs go: the next batch slot, output-arena entry and
 * ray (a running count of each), and its estimated work. */
typedef struct place_sums {
    uint32_t pairs;
    uint64_t keep, rays, load;
} place_sums;

static void add_to_sums(const rtcd_opencl* cl, uint32_t i, place_sums* t)
{
    t->pairs++;
    t->keep += cl->call.keep_room[i];
    t->load += cl->call.cost[i];
    if (cl->call.rays) t->rays += rtcd_call_ray_room(cl->call.request, i);
}

/* Pair i's device record (its state: info): meshes (registry indices),
 * bodies, and for the iterative algorithms its planned pass and where its
 * kept rays are read; where its kept and colliding rays are written is its
 * place's (place_pair). */
static void describe_pair(const rtcd_opencl* cl, uint32_t i, const cl_pair_info* info, const rtcd_xform* before,
                          int serial, rtcd_cl_pair* cp)
{
    const rtcd_body_pair* p = &cl->call.request->pairs[i];
    const rtcd_body_desc *a = rtcd_call_a(cl->call.request, i), *b = rtcd_call_b(cl->call.request, i);
    memset(cp, 0, sizeof *cp);
    cp->mesh_a = cl->call.where[2 * i];
    cp->mesh_b = cl->call.where[2 * i + 1];
    cp->body_a = p->a;
    cp->body_b = p->b;
    const rtcd_iterative_def* idef = &cl->def.iterative;
    int edges, deep;
    rtcd_pair_second_phase(&cl->def, a->mesh, b->mesh, &edges, &deep);
    uint32_t second = (edges ? RTCD_CL_EDGES : 0u) | (deep ? RTCD_CL_DEEP : 0u);
    int standard = !info || idef->algorithm == RTCD_ALGORITHM_STANDARD || cl->call.standard[i];
    /* For the pairs whose last standard pass had a second phase, a CPU
     * device runs the CPU reference's exact gate here, on the host's
     * workers: a pair that is provably apart skips it (its items would find
     * nothing), where the serial kernel would mark every vertex near the
     * other surface first. A GPU marks them in parallel; it skips only the
     * pairs whose reach balls are apart (most of them, at a few
     * nanoseconds each). */
    uint32_t apart = 0u;
    if (standard && second && info && info->second_phase) {
        rtcd_xform xa = rtcd_to_xform(&a->pose), xb = rtcd_to_xform(&b->pose);
        rtcd_xform b_in_a = xf_relative(&xa, &xb);
        if (rtcd_reach_balls_apart(a->mesh, b->mesh, &b_in_a)) {
            apart = RTCD_CL_APART;
        } else if (serial) {
            rtcd_xform a_in_b = xf_relative(&xb, &xa);
            if (rtcd_meshes_provably_apart(a->mesh, b->mesh, &a_in_b, &b_in_a)) apart = RTCD_CL_APART;
        }
    }
    if (!info || idef->algorithm == RTCD_ALGORITHM_STANDARD) {
        cp->flags = RTCD_CL_STANDARD_PASS | second | apart;
        return;
    }
    const rtcd_iterative_params* prm = &info->track.params;
    cp->flags = (uint32_t)idef->algorithm | (standard ? RTCD_CL_STANDARD_PASS : 0u) | second | apart;
    cp->entries_in = info->entries_at;
    cp->entry_count = standard ? 0u : info->entries;
    cp->max_iterations = prm->max_iterations;
    cp->threshold = prm->displacement_threshold;
    cp->extension = prm->distance_extension;
    cp->culling = prm->culling_distance;
    cp->speculative = info->track.speculative;
    cp->margin = cl->def.speculative_margin;
    if (info->track.has_motion) {
        cp->flags |= RTCD_CL_HAS_MOTION | info->track.deformed << RTCD_CL_DEFORMED_SHIFT;
        memcpy(cp->before, before->r, 9 * sizeof(float));
        memcpy(cp->before + 9, before->t, 3 * sizeof(float));
    }
}

/* Each pair's pass, and what placing it needs of its state (device, its
 * estimated work and room for kept rays), so that the places are settled
 * from dense arrays instead of the pairs' states all over the map. Adds the
 * piece's pairs to the totals of their devices, sums[0, device_count): a
 * pair that has a device keeps it, a new one (or a repeated key's copy) goes
 * to device 0 when there is one device, else to the list fresh (*fresh_count
 * of them) for the call's one serial choice. Returns the pairs off the
 * devices. */
static uint32_t plan_pairs(rtcd_opencl* cl, uint32_t begin, uint32_t end, place_sums* sums, uint32_t* fresh,
                           uint32_t* fresh_count)
{
    const rtcd_call* c = cl->call.request;
    uint32_t off = 0;
    int iterative = cl->def.iterative.algorithm != RTCD_ALGORITHM_STANDARD, one_device = cl->device_count == 1;
    place_sums local = {0, 0, 0, 0};
    for (uint32_t i = begin; i < end; ++i) {
        /* Its state, fetched ahead: the states lie all over the pool. */
        if (i + 16 < end) rtcd_cl_prefetch_info(cl, i + 16, 0);
        if (i + 8 < end) {
            rtcd_cl_prefetch_info(cl, i + 8, 1);
            /* Its bodies (pose, back pose): at thousands of bodies they
             * miss the cache, a pair's poses lie anywhere in the array. */
            rtcd_prefetch_read(rtcd_call_a(c, i + 8), sizeof(rtcd_body_desc));
            rtcd_prefetch_read(rtcd_call_b(c, i + 8), sizeof(rtcd_body_desc));
        }
        /* Its ends' registry indices, from its bodies'. */
        cl->call.where[2 * i] = cl->call.body_where[c->pairs[i].a];
        cl->call.where[2 * i + 1] = cl->call.body_where[c->pairs[i].b];
        cl_pair_info* info = rtcd_cl_take_info(cl, i);
        uint8_t standard = 1;
        rtcd_xform before; /* the pair's pose one step back, when its track has_motion */
        if (rtcd_cl_off_device(cl->call.where, i)) {
            cl->call.device[i] = RTCD_CL_OFF_DEVICE;
            cl->call.standard[i] = 1;
            off++;
            continue;
        }
        const rtcd_body_desc *a = rtcd_call_a(c, i), *b = rtcd_call_b(c, i);
        if (info && iterative) {
            rtcd_xform xa = rtcd_to_xform(&a->pose), xb = rtcd_to_xform(&b->pose);
            rtcd_pair_motion motion;
            rtcd_call_motion(c, i, &motion);
            standard = (uint8_t)rtcd_track_plan(&info->track, &cl->def, a->mesh, b->mesh, &xa, &xb, &motion, &before);
        }
        uint32_t items = standard ? rtcd_call_ray_room(c, i) : info->entries;
        cl->call.device[i] = info && info->device != 0xff ? info->device : NEW_ON_DEVICE;
        if (!standard && !items && cl->call.device[i] != NEW_ON_DEVICE) {
            rtcd_pair_result* r = &cl->call.results[i];
            memset(r, 0, sizeof *r);
            r->device = cl->call.device[i];
            cl->call.standard[i] = PASS_EMPTY;
            continue;
        }
        cl->call.standard[i] = standard;
        cl->call.cost[i] = standard ? items : items + ITERATIVE_PASS_COST;
        /* A pass keeps at most one ray per item (and the device at most RTCD_CL_STATE_ENTRIES). */
        cl->call.keep_room[i] = info && iterative ? (items < RTCD_CL_STATE_ENTRIES ? items : RTCD_CL_STATE_ENTRIES) : 0u;
        /* Its record now, while its state and bodies are in cache, in call
         * order; its places in the device's buffers come in the second pass. */
        int serial = cl->devices[info && info->device != 0xff ? info->device : 0].serial;
        describe_pair(cl, i, info, &before, serial, &cl->call.staged[i]);
        if (one_device)
            add_to_sums(cl, i, &local);
        else if (cl->call.device[i] != NEW_ON_DEVICE && !standard)
            add_to_sums(cl, i, &sums[cl->call.device[i]]); /* it walks the kept rays on its device */
        else
            fresh[(*fresh_count)++] = i; /* new, or a standard pass (it reads no kept rays): any device */
    }
    if (one_device) sums[0] = local; /* summed in registers: the usual case */
    return off;
}

/* Pair i's place: off the devices, it drops what it had there (its state
 * lives on the CPU now; a later return starts afresh); else, on device dv
 * (a new pair's), it takes the next place of *at, and its record there,
 * from the call-order staging array, with where its kept rays and its
 * colliding rays go. */
static void place_pair(rtcd_opencl* cl, uint32_t i, uint32_t dv, place_sums* at)
{
    cl_pair_info* info = pair_info(cl, i);
    if (cl->call.device[i] == RTCD_CL_OFF_DEVICE) {
        if (info) {
            rtcd_cl_reset_track(info);
            info->device = 0xff;
        }
        return;
    }
    if (cl->call.device[i] == NEW_ON_DEVICE) {
        if (info) info->device = (uint8_t)dv;
        cl->call.device[i] = (uint8_t)dv;
    }
    cl_device_state* d = &cl->devices[dv];
    uint32_t s = at->pairs++;
    cl->call.pos[i] = s;
    rtcd_cl_pair* cp = &d->host_pairs[s];
    *cp = cl->call.staged[i];
    if (cp->flags & RTCD_CL_ALGORITHM_MASK) cp->entries_out = (uint32_t)at->keep;
    at->keep += cl->call.keep_room[i];
    if (cl->call.rays) {
        cp->ray_offset = (uint32_t)at->rays;
        at->rays += rtcd_call_ray_room(cl->call.request, i);
    }
}

static void set_device_sums(rtcd_opencl* cl, uint32_t dv, const place_sums* at)
{
    cl->devices[dv].batch_count = at->pairs;
    cl->devices[dv].arena_used = at->keep;
    cl->devices[dv].rays_total = at->rays;
    cl->devices[dv].load = at->load;
}

/* A device's time per unit of estimated work, learned over the calls (a
 * moving average). Devices differ (a small GPU beside a large one, a CPU
 * core that also serves the host): on two pinned PoCL sub-devices device
 * 0's kernels took 3-4 % longer for the same estimate. */
#define PACE_WEIGHT 0.1

void rtcd_cl_learn_speeds(rtcd_opencl* cl, const double* kernel_ms)
{
    for (uint32_t dv = 0; dv < cl->device_count; ++dv) {
        cl_device_state* d = &cl->devices[dv];
        if (!d->load || !(kernel_ms[dv] > 0.0)) continue;
        double pace = kernel_ms[dv] / (double)d->load;
        d->pace = d->pace > 0.0 ? (1.0 - PACE_WEIGHT) * d->pace + PACE_WEIGHT * pace : pace;
    }
}

/* The call's host passes run over pieces of at most PLACE_CHUNK pairs (and,
 * in the second, BODY_CHUNK bodies): a device's places are prefix sums over
 * the pieces' totals, so each pass is one parallel loop and the serial part
 * between them touches one total per piece and device, and the new pairs
 * when there are several devices. A segment is a run of whole pieces. */
#define PLACE_CHUNK 256u
#define BODY_CHUNK 1024u

typedef struct cl_plan_job {
    rtcd_opencl* cl;
    uint32_t n, chunks, body_chunks, devices;
    uint32_t* chunk_first; /* [chunks + 1]: piece c holds pairs [chunk_first[c], chunk_first[c + 1]) */
    uint32_t seg_chunk[RTCD_CL_MAX_SEGMENTS + 1]; /* segment s holds pieces [seg_chunk[s], seg_chunk[s + 1]) */
    uint32_t planned;      /* segments planned so far */
    uint32_t base, count;  /* the pieces the parallel loops run over now (and, in the second, bodies) */
    place_sums* sums;      /* [piece][device]: the piece's totals, then where it starts */
    uint32_t* fresh;       /* several devices: each piece's new pairs, at its first pair's index */
    uint32_t* fresh_count; /* how many, per piece */
    place_sums run[RTCD_CL_MAX_DEVICES];  /* each device's totals over the segments planned */
    uint64_t load[RTCD_CL_MAX_DEVICES];   /* several devices: the estimated work handed out so far */
    _Atomic uint32_t off;  /* pairs with a mesh off the devices */
} cl_plan_job;

/* First pass: each piece's pairs planned, and its totals per device. */
static void plan_range(uint32_t begin, uint32_t end, uint32_t worker, void* ctx)
{
    (void)worker;
    cl_plan_job* job = ctx;
    for (uint32_t c = job->base + begin; c < job->base + end; ++c) {
        uint32_t first = job->chunk_first[c], fresh = 0;
        place_sums* sums = job->sums + (size_t)c * job->devices;
        memset(sums, 0, job->devices * sizeof *sums);
        uint32_t off = plan_pairs(job->cl, first, job->chunk_first[c + 1], sums,
                                  job->fresh ? job->fresh + first : NULL, &fresh);
        if (job->fresh_count) job->fresh_count[c] = fresh;
        if (off) atomic_fetch_add_explicit(&job->off, off, memory_order_relaxed);
    }
}

/* Between the passes, serial, over the segment's pieces: with several
 * devices, each pair free to go anywhere (a new pair, a repeated key's
 * copy, a standard pass: none reads kept rays), in call order, goes to the
 * device expected to finish first: the least estimated work, counting
 * every pair bound to its device so far, times the device's measured time
 * per unit of it (rtcd_cl_learn_speeds). Then each device's places are
 * prefix sums over the pieces, after the earlier segments'. Touches the
 * pieces' totals and the free pairs only. */
static void settle_places(cl_plan_job* job)
{
    rtcd_opencl* cl = job->cl;
    uint32_t nd = job->devices, first = job->base, last = job->base + job->count;
    if (job->fresh) {
        /* Equal paces until every device's is known. */
        double pace[RTCD_CL_MAX_DEVICES];
        int known = 1;
        for (uint32_t d = 0; d < nd; ++d) known &= cl->devices[d].pace > 0.0;
        for (uint32_t d = 0; d < nd; ++d) pace[d] = known ? cl->devices[d].pace : 1.0;
        for (uint32_t c = first; c < last; ++c)
            for (uint32_t d = 0; d < nd; ++d) job->load[d] += job->sums[(size_t)c * nd + d].load;
        for (uint32_t c = first; c < last; ++c) {
            const uint32_t* fresh = job->fresh + job->chunk_first[c];
            for (uint32_t k = 0; k < job->fresh_count[c]; ++k) {
                uint32_t i = fresh[k], best = 0;
                for (uint32_t d = 1; d < nd; ++d)
                    if ((double)job->load[d] * pace[d] < (double)job->load[best] * pace[best]) best = d;
                cl_pair_info* info = pair_info(cl, i);
                if (info) info->device = (uint8_t)best;
                cl->call.device[i] = (uint8_t)best;
                job->load[best] += cl->call.cost[i];
                add_to_sums(cl, i, &job->sums[(size_t)c * nd + best]);
            }
        }
    }
    for (uint32_t d = 0; d < nd; ++d) {
        place_sums run = job->run[d];
        for (uint32_t c = first; c < last; ++c) {
            place_sums* t = &job->sums[(size_t)c * nd + d];
            place_sums here = *t;
            *t = run;
            run.pairs += here.pairs, run.keep += here.keep, run.rays += here.rays, run.load += here.load;
        }
        cl->devices[d].seg_begin = job->run[d].pairs;
        job->run[d] = run;
        set_device_sums(cl, d, &run);
    }
}

/* Second pass: each piece's pairs placed (one device) with their records,
 * and, in the first segment, the bodies' poses written, pieces of both in
 * one loop. Reads the dense per-pair arrays and writes the records' places:
 * the records' content is the first pass's. */
static void write_range(uint32_t begin, uint32_t end, uint32_t worker, void* ctx)
{
    (void)worker;
    cl_plan_job* job = ctx;
    rtcd_opencl* cl = job->cl;
    for (uint32_t k = begin; k < end; ++k) {
        if (k >= job->count) {
            const rtcd_body_desc* bodies = cl->call.request->bodies;
            uint32_t first = (k - job->count) * BODY_CHUNK, count = cl->call.request->body_count;
            uint32_t last = first + BODY_CHUNK < count ? first + BODY_CHUNK : count;
            /* With segments, a device's pairs may all come later: every device's. */
            for (uint32_t i = first; i < last; ++i)
                for (uint32_t dv = 0; dv < cl->device_count; ++dv)
                    if (cl->devices[dv].batch_count || cl->call.segments > 1)
                        pose12(&bodies[i].pose, cl->devices[dv].host_bodies + RTCD_CL_BODY_FLOATS * (size_t)i);
            continue;
        }
        uint32_t c = job->base + k;
        place_sums at[RTCD_CL_MAX_DEVICES];
        memcpy(at, job->sums + (size_t)c * job->devices, job->devices * sizeof *at);
        for (uint32_t i = job->chunk_first[c], last = job->chunk_first[c + 1]; i < last; ++i) {
            uint32_t dv = cl->call.device[i];
            if (cl->call.standard[i] == PASS_EMPTY) continue;
            if (dv == NEW_ON_DEVICE) dv = 0; /* one device: every new pair's */
            place_pair(cl, i, dv, dv != RTCD_CL_OFF_DEVICE ? &at[dv] : NULL);
        }
    }
}

/* Device d's host arrays for `pairs` records and the call's bodies (contents not kept). */
static rtcd_error grow_device_batch(rtcd_opencl* cl, cl_device_state* d, uint32_t pairs)
{
    size_t body_bytes = ((size_t)cl->call.request->body_count + 1) * RTCD_CL_BODY_FLOATS * sizeof(float);
    size_t need = (size_t)pairs + 1;
    rtcd_error err;
    if ((err = rtcd_cl_host_array(d, &d->pinned_pairs, need * sizeof(rtcd_cl_pair))) != RTCD_OK ||
        (err = rtcd_cl_host_array(d, &d->pinned_results, need * sizeof(rtcd_cl_result))) != RTCD_OK ||
        (err = rtcd_cl_host_array(d, &d->pinned_bodies, body_bytes)) != RTCD_OK)
        return err;
    d->host_pairs = d->pinned_pairs.data;
    d->host_results = d->pinned_results.data;
    d->host_bodies = d->pinned_bodies.data;
    return RTCD_OK;
}

static void free_job(cl_plan_job* job)
{
    if (!job) return;
    rtcd_free(job->chunk_first), rtcd_free(job->sums), rtcd_free(job->fresh), rtcd_free(job->fresh_count);
    rtcd_free(job);
}

rtcd_error rtcd_cl_plan_begin(rtcd_opencl* cl, uint32_t n, uint32_t segments, size_t ray_bound)
{
    for (uint32_t d = 0; d < cl->device_count; ++d) {
        cl_device_state* dev = &cl->devices[d];
        dev->batch_count = dev->seg_begin = 0;
        dev->rays_total = 0;
        dev->arena_used = 0;
        dev->launched = 0;
    }
    cl->call.segments = segments;
    cl->call.ray_bound = ray_bound;
    rtcd_error err = rtcd_cl_reserve_infos(cl, n);
    if (err != RTCD_OK) return err;
    cl_plan_job* job = rtcd_calloc(1, sizeof *job);
    if (!job) return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_opencl_collide: out of memory for %u pairs", n);
    job->cl = cl;
    job->n = n;
    job->devices = cl->device_count;
    job->body_chunks = (cl->call.request->body_count + BODY_CHUNK - 1) / BODY_CHUNK;
    atomic_init(&job->off, 0u);
    /* Segment s: pairs [n s / S, n (s + 1) / S), in pieces. */
    uint32_t most = (n + PLACE_CHUNK - 1) / PLACE_CHUNK + segments;
    int several = cl->device_count > 1;
    job->chunk_first = rtcd_alloc(((size_t)most + 1) * sizeof *job->chunk_first);
    job->sums = rtcd_alloc(((size_t)most + 1) * job->devices * sizeof *job->sums);
    if (several) {
        job->fresh = rtcd_alloc(((size_t)n + 1) * sizeof *job->fresh);
        job->fresh_count = rtcd_alloc(((size_t)most + 1) * sizeof *job->fresh_count);
    }
    cl->plan = job;
    if (!job->chunk_first || !job->sums || (several && (!job->fresh || !job->fresh_count)) ||
        !rtcd_grow((void**)&cl->call.staged, &cl->call.staged_cap, (size_t)n + 1, sizeof(rtcd_cl_pair)))
        return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_opencl_collide: out of memory for %u pairs", n);
    uint32_t c = 0;
    for (uint32_t s = 0; s < segments; ++s) {
        uint32_t from = (uint32_t)((uint64_t)n * s / segments), to = (uint32_t)((uint64_t)n * (s + 1) / segments);
        job->seg_chunk[s] = c;
        for (uint32_t i = from; i < to; i += PLACE_CHUNK) job->chunk_first[c++] = i;
    }
    job->seg_chunk[segments] = job->chunks = c;
    job->chunk_first[c] = n;
    /* Segments go while later ones are planned: the arrays they are sent
     * from are sized for the whole call now, not grown under them. */
    for (uint32_t d = 0; d < cl->device_count && err == RTCD_OK && segments > 1; ++d)
        err = grow_device_batch(cl, &cl->devices[d], n);
    return err;
}

rtcd_error rtcd_cl_plan_segment(rtcd_opencl* cl, uint32_t s)
{
    cl_plan_job* job = cl->plan;
    job->base = job->seg_chunk[s];
    job->count = job->seg_chunk[s + 1] - job->base;
    rtcd_parallel_for(&cl->tasks, job->count, 1, plan_range, job);
    job->planned = s + 1;
    size_t kept[RTCD_CL_MAX_DEVICES];
    for (uint32_t d = 0; d < cl->device_count; ++d) kept[d] = cl->devices[d].arena_used;
    settle_places(job);
    rtcd_error err = RTCD_OK;
    for (uint32_t d = 0; d < cl->device_count && err == RTCD_OK && cl->call.segments == 1; ++d)
        err = grow_device_batch(cl, &cl->devices[d], cl->devices[d].batch_count);
    for (uint32_t d = 0; d < cl->device_count && err == RTCD_OK; ++d)
        err = rtcd_cl_arena_reserve(&cl->devices[d], cl->devices[d].arena_used, kept[d]);
    if (err == RTCD_OK) rtcd_parallel_for(&cl->tasks, job->count + (s ? 0 : job->body_chunks), 1, write_range, job);
    return err;
}

void rtcd_cl_plan_end(rtcd_opencl* cl, uint32_t* off_pairs)
{
    cl_plan_job* job = cl->plan;
    *off_pairs = 0;
    if (!job) return;
    /* A call that stopped after some segments left its unplanned pairs'
     * states where they were (the caller then resets every track); a new
     * key among them gets its state when next planned. */
    *off_pairs = atomic_load(&job->off);
    for (uint32_t dv = 0; dv < cl->device_count && dv < 16; ++dv)
        cl->stats.pairs_per_device[dv] = cl->devices[dv].batch_count;
    free_job(job);
    cl->plan = NULL;
}

/* ---- after the wait ---- */

/* A pair whose colliding rays overflowed the on-chip store: the CPU reference
 * (a standard pass; an iterative pair's state is reset by the caller). */
static rtcd_error cpu_pair(const rtcd_opencl* cl, uint32_t i, rtcd_pair_result* r, rtcd_ray_hit* rays)
{
    const rtcd_body_desc *a = rtcd_call_a(cl->call.request, i), *b = rtcd_call_b(cl->call.request, i);
    uint32_t cap = rtcd_call_ray_room(cl->call.request, i), n = 0;
    rtcd_ray_hit* buf = rays ? rays : rtcd_alloc(cap * sizeof *buf);
    rtcd_contact* contacts = rtcd_alloc(cap * sizeof *contacts);
    rtcd_error err = RTCD_OK;
    if (!buf || !contacts) {
        err = rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "OpenCL: no memory for the CPU fallback");
    } else {
        const rtcd_narrowphase_def* nd = &cl->def;
        rtcd_narrowphase_stats st;
        err = rtcd_collide_standard(nd, a->mesh, &a->pose, b->mesh, &b->pose, buf, cap, &n, &st);
        if (err == RTCD_OK) {
            for (uint32_t i = 0; i < n; ++i) {
                contacts[i] = rtcd_contact_from_ray(&buf[i], nd->contact_normal);
                r->ray_length += buf[i].length;
            }
            r->contact_count = rtcd_reduce_contacts(contacts, n, r->contacts);
            r->colliding_rays = n;
            r->rays_cast = st.rays_cast;
            r->standard_pass = 1;
        }
    }
    if (!rays) rtcd_free(buf);
    rtcd_free(contacts);
    return err;
}

/* Counters the finishing workers share. */
typedef struct finish_counts {
    atomic_uint state_resets, overflows;
} finish_counts;

/* Pair i's result from its device record; its kept rays become the current
 * half. A pair whose rays overflowed the device's store is only listed
 * (cl->call.overflow): the CPU redoes it after the loop. */
static void finish_pair(rtcd_opencl* cl, uint32_t i, finish_counts* fc)
{
    uint32_t dv = cl->call.device[i], s = cl->call.pos[i];
    cl_device_state* d = &cl->devices[dv];
    const rtcd_cl_pair* cp = &d->host_pairs[s];
    const rtcd_cl_result* cr = &d->host_results[s];
    rtcd_pair_result* r = &cl->call.results[i];
    cl_pair_info* info = pair_info(cl, i);
    int keeps = (cp->flags & RTCD_CL_ALGORITHM_MASK) != 0u;
    memset(r, 0, sizeof *r);
    r->device = dv;
    if (cr->overflow) {
        if (keeps) {
            /* It kept more rays than a pair may too: start again. */
            rtcd_cl_reset_track(info);
            atomic_fetch_add_explicit(&fc->state_resets, 1u, memory_order_relaxed);
        }
        cl->call.overflow[atomic_fetch_add_explicit(&fc->overflows, 1u, memory_order_relaxed)] = i;
        return;
    }
    r->contact_count = cr->contact_count;
    r->colliding_rays = cr->colliding_rays;
    r->rays_cast = cr->rays_cast;
    r->standard_pass = (cp->flags & RTCD_CL_STANDARD_PASS) != 0u;
    r->predictive_rays = cr->predictive_rays;
    r->walk_steps = cr->walk_steps;
    r->kept_rays = cr->kept_rays;
    r->kept_predictions = cr->kept_predictions;
    r->ray_length = cr->ray_length;
    r->crossing_contacts = cr->crossings;
    if (info && r->standard_pass) info->second_phase = (uint8_t)cr->second_phase;
    for (uint32_t c = 0; c < cr->contact_count; ++c) {
        memcpy(r->contacts[c].point_on_b, cr->point[c], sizeof r->contacts[c].point_on_b);
        memcpy(r->contacts[c].normal_on_b, cr->normal[c], sizeof r->contacts[c].normal_on_b);
        r->contacts[c].depth = cr->depth[c];
        r->contacts[c].feature = cr->feature[c];
    }
    if (cl->call.rays)
        memcpy(cl->call.rays + cl->call.ray_offset[i], d->host_rays + cp->ray_offset,
               cr->colliding_rays * sizeof(rtcd_ray_hit));
    if (keeps) {
        if (cr->state_overflow) {
            /* Some kept rays did not fit: this call's result is whole, the
             * next one runs a standard pass rather than walk a partial set. */
            rtcd_cl_reset_track(info);
            atomic_fetch_add_explicit(&fc->state_resets, 1u, memory_order_relaxed);
        } else {
            info->entries_at = cp->entries_out; /* in the arena the next call reads */
            info->entries = cr->kept_rays + cr->kept_predictions;
            info->track.refresh = cr->crossings > 0; /* not kept: a standard pass next, as on the CPU */
        }
    }
}

typedef struct finish_job {
    rtcd_opencl* cl;
    finish_counts counts;
} finish_job;

static void finish_range(uint32_t begin, uint32_t end, uint32_t worker, void* ctx)
{
    (void)worker;
    finish_job* job = ctx;
    for (uint32_t i = begin; i < end; ++i)
        if (job->cl->call.device[i] != RTCD_CL_OFF_DEVICE && job->cl->call.standard[i] != PASS_EMPTY)
            finish_pair(job->cl, i, &job->counts);
}

static int by_pair(const void* x, const void* y)
{
    uint32_t a = *(const uint32_t*)x, b = *(const uint32_t*)y;
    return (a > b) - (a < b);
}

rtcd_error rtcd_cl_finish_call(rtcd_opencl* cl, uint32_t n)
{
    finish_job job;
    job.cl = cl;
    atomic_init(&job.counts.state_resets, 0u);
    atomic_init(&job.counts.overflows, 0u);
    rtcd_parallel_for(&cl->tasks, n, PLAN_RANGE, finish_range, &job);
    uint32_t overflows = atomic_load(&job.counts.overflows);
    cl->stats.state_resets += atomic_load(&job.counts.state_resets);
    cl->stats.cpu_fallback_pairs += overflows;
    /* The CPU redoes the overflowed pairs, in call order (the first error wins). */
    qsort(cl->call.overflow, overflows, sizeof *cl->call.overflow, by_pair);
    for (uint32_t k = 0; k < overflows; ++k) {
        uint32_t i = cl->call.overflow[k];
        rtcd_pair_result* r = &cl->call.results[i];
        rtcd_error err = cpu_pair(cl, i, r, cl->call.rays ? cl->call.rays + cl->call.ray_offset[i] : NULL);
        if (err != RTCD_OK) return err;
    }
    return RTCD_OK;
}
