/* rtcd_batch, the seam between the narrow phase and its callers, against
 * independent references: the CPU reference on one thread (every other
 * thread count, an engine's task system and the OpenCL serial kernel must
 * match it bit for bit over a sequence of moving pairs), the public
 * single-pair API (rtcd_collide_iterative + rtcd_contact_from_ray +
 * rtcd_reduce_contacts), def validation, set_def, non-finite poses, the
 * AUTO rule and reference counting.
 *
 * Only the public API: this test also runs in a build without OpenCL
 * (RTCD_WITH_OPENCL=OFF), where the OpenCL parts are skipped with a notice
 * (rtcd_batch_create(OPENCL) answers RTCD_ERROR_UNSUPPORTED there). */
#include "test_util.h"

#include <rtcd/rtcd_batch.h>
#include <rtcd/rtcd_world.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- the log hook ---- */

typedef struct log_capture {
    int infos, warnings, errors;
    char last_info[512], last_warning[512];
} log_capture;

static void capture_log(rtcd_log_level level, const char* message, void* user)
{
    log_capture* c = user;
    if (level == RTCD_LOG_INFO) {
        c->infos++;
        snprintf(c->last_info, sizeof c->last_info, "%s", message);
    } else if (level == RTCD_LOG_WARNING) {
        c->warnings++;
        snprintf(c->last_warning, sizeof c->last_warning, "%s", message);
    } else {
        c->errors++;
    }
}

/* Keeps the batches' "backend cpu" INFO lines out of the test's output. */
static void quiet_log(rtcd_log_level level, const char* message, void* user)
{
    (void)user;
    if (level != RTCD_LOG_INFO) fprintf(stderr, "%s\n", message);
}

/* ---- OpenCL, when this build and machine have it ---- */

/* The OpenCL backend with its serial kernel (one work-item per pair, what
 * CPU devices run) through the backend's test hook RTCD_CL_KERNEL. */
static rtcd_batch* create_opencl_serial(const rtcd_narrowphase_def* base)
{
    rtcd_narrowphase_def def = *base;
    def.backend = RTCD_BACKEND_OPENCL;
    def.max_devices = 1;
    return test_create_batch(&def, "serial");
}

/* ---- engines' task systems ---- */

typedef struct user_tasks {
    uint32_t worker_count;
    uint32_t enqueues, finishes, ranges;
} user_tasks;

/* Runs everything at once, inside enqueue: the ranges are chunks of 3
 * items, the last chunk first (a short one when the count is not a
 * multiple of 3), each on another worker index. rtcd asks for ranges of at
 * least min_range (4 today): these are shorter on purpose, no result may
 * depend on how the items are split. */
static void* reverse_enqueue(rtcd_task_fn* task, uint32_t count, uint32_t min_range, void* task_context,
                             void* user_context)
{
    user_tasks* u = user_context;
    (void)min_range;
    u->enqueues++;
    uint32_t chunks = (count + 2) / 3;
    for (uint32_t c = chunks; c-- > 0;) {
        uint32_t begin = 3 * c, end = begin + 3 < count ? begin + 3 : count;
        task(begin, end, (chunks - 1 - c) % u->worker_count, task_context);
        u->ranges++;
    }
    return NULL;
}

static void reverse_finish(void* user_task, void* user_context)
{
    user_tasks* u = user_context;
    (void)user_task;
    u->finishes++; /* never: enqueue returned NULL */
}

/* Runs nothing in enqueue: finish runs the ranges (min_range items each,
 * workers taking turns) and frees the handle. */
typedef struct deferred_task {
    rtcd_task_fn* task;
    uint32_t count, min_range;
    void* context;
} deferred_task;

static void* deferred_enqueue(rtcd_task_fn* task, uint32_t count, uint32_t min_range, void* task_context,
                              void* user_context)
{
    user_tasks* u = user_context;
    u->enqueues++;
    deferred_task* d = malloc(sizeof *d);
    assert_non_null(d);
    d->task = task;
    d->count = count;
    d->min_range = min_range ? min_range : 1;
    d->context = task_context;
    return d;
}

static void deferred_finish(void* user_task, void* user_context)
{
    user_tasks* u = user_context;
    deferred_task* d = user_task;
    u->finishes++;
    for (uint32_t begin = 0, k = 0; begin < d->count; begin += d->min_range, ++k) {
        uint32_t end = d->count - begin > d->min_range ? begin + d->min_range : d->count;
        d->task(begin, end, k % u->worker_count, d->context);
        u->ranges++;
    }
    free(d);
}

/* ---- a sequence of moving pairs ---- */

enum { PAIRS = 10, MAX_CALL = PAIRS + 2, KEY0 = 1000 };

typedef struct moving_pair {
    rtcd_pair_desc desc;
    float toward[3];   /* unit, from a to b */
    float velocity[3]; /* of b, per step */
    float spin[3];     /* axis * angle of b, per step */
} moving_pair;

/* When things happen in a sequence. */
typedef struct schedule {
    int arrive7;             /* pair 7 arrives, its key twice in that call */
    int dup_from, dup_to;    /* pair 2 twice: a later copy (moved a little after the first step) */
    int away_from, away_to;  /* pair 3 leaves, then comes back */
    int leave8;              /* pair 8 leaves for good */
    int jump1, jump2;        /* fast moves of every pair (standard passes) */
    int apart;               /* pair 5 jumps apart for one step */
    int dup_front;           /* pair 2 twice: a moved copy in front of the original */
} schedule;

static const schedule k_long = {10, 15, 17, 20, 24, 40, 20, 44, 30, 50};
static const schedule k_short = {3, 5, 6, 8, 10, 12, 7, 9, 4, 11}; /* 13 steps */

typedef struct scenario {
    rtcd_mesh* meshes[3];
    moving_pair mps[PAIRS];
    schedule when;
} scenario;

/* Avalanche blobs (453 vertices) and, with `big`, a larger spawner blob
 * (1067), all of bounding radius 0.5. */
static void scenario_init(scenario* s, const schedule* when, int big)
{
    memset(s, 0, sizeof *s);
    s->when = *when;
    s->meshes[0] = test_make_blob(RTCD_AVALANCHE_BLOB_VERTICES, 0.5f, 1);
    s->meshes[1] = test_make_blob(RTCD_AVALANCHE_BLOB_VERTICES, 0.5f, 4);
    s->meshes[2] = big ? test_make_blob(rtcd_spawner_mesh_vertices(1), 0.5f, 2)
                       : test_make_blob(RTCD_AVALANCHE_BLOB_VERTICES, 0.5f, 3);
    static const int mesh_a[PAIRS] = {0, 0, 1, 2, 0, 1, 2, 0, 1, 0}, mesh_b[PAIRS] = {0, 1, 1, 0, 2, 0, 2, 0, 1, 1};
    test_rng rng = {2024};
    for (int i = 0; i < PAIRS; ++i) {
        moving_pair* mp = &s->mps[i];
        mp->desc.a = s->meshes[mesh_a[i]];
        mp->desc.b = s->meshes[mesh_b[i]];
        mp->desc.key = KEY0 + (uint64_t)i;
        mp->desc.pose_a = test_random_pose(&rng, 2.0f);
        mp->desc.pose_b = test_random_pose(&rng, 0.0f);
        float side[3], overlap = 0.1f + 0.02f * (float)i;
        test_rng_unit_vector(&rng, mp->toward);
        test_rng_unit_vector(&rng, side);
        test_rng_unit_vector(&rng, mp->spin);
        for (int k = 0; k < 3; ++k) {
            mp->desc.pose_b.translation[k] = mp->desc.pose_a.translation[k] + (1.0f - overlap) * mp->toward[k];
            mp->velocity[k] = -0.0006f * mp->toward[k] + 0.0004f * side[k]; /* closing in, sliding */
            mp->spin[k] *= 0.002f;
        }
    }
}

static void scenario_free(scenario* s)
{
    for (int k = 0; k < 3; ++k) rtcd_mesh_release(s->meshes[k]);
}

/* Pairs come and go: 3 leaves for a while and comes back, 7 arrives late,
 * 8 leaves for good, 9 misses every seventh step. */
static int present(const schedule* w, int i, int step)
{
    if (i == 3) return step < w->away_from || step >= w->away_to;
    if (i == 7) return step >= w->arrive7;
    if (i == 8) return step < w->leave8;
    if (i == 9) return step % 7 != 3;
    return 1;
}

/* The pairs of call `step`, in the call's order (shuffled every fourth
 * step), with the schedule's duplicated keys. */
static uint32_t scenario_call(const scenario* s, int step, rtcd_pair_desc* out)
{
    const schedule* w = &s->when;
    uint32_t n = 0;
    for (int i = 0; i < PAIRS; ++i)
        if (present(w, i, step)) out[n++] = s->mps[i].desc;
    if (step % 4 == 1) {
        test_rng rng = {(uint64_t)step * 7919u + 1u};
        for (uint32_t i = n - 1; i > 0; --i) {
            uint32_t j = (uint32_t)(test_rng_next(&rng) % (i + 1));
            rtcd_pair_desc t = out[i];
            out[i] = out[j];
            out[j] = t;
        }
    }
    if (step == w->arrive7) out[n++] = s->mps[7].desc;
    if (step >= w->dup_from && step <= w->dup_to) {
        rtcd_pair_desc copy = s->mps[2].desc;
        if (step > w->dup_from)
            for (int k = 0; k < 3; ++k) copy.pose_b.translation[k] += 0.01f * s->mps[2].toward[k];
        out[n++] = copy;
    }
    if (step == w->dup_front) {
        rtcd_pair_desc copy = s->mps[2].desc;
        for (int k = 0; k < 3; ++k) copy.pose_b.translation[k] -= 0.008f * s->mps[2].toward[k];
        memmove(out + 1, out, n * sizeof *out);
        out[0] = copy;
        n++;
    }
    return n;
}

/* After call `step`: slow motion, the schedule's fast moves, pair 5 apart
 * for a step. */
static void scenario_advance(scenario* s, int step)
{
    const schedule* w = &s->when;
    float jump = step == w->jump1 ? 0.03f : (step == w->jump2 ? -0.04f : 0.0f);
    for (int i = 0; i < PAIRS; ++i) {
        moving_pair* mp = &s->mps[i];
        float j = i % 2 ? jump : 0.5f * jump;
        if (i == 5 && step == w->apart) j += 0.6f;
        if (i == 5 && step == w->apart + 1) j -= 0.6f;
        for (int k = 0; k < 3; ++k) mp->desc.pose_b.translation[k] += mp->velocity[k] + j * mp->toward[k];
        test_rotate_by(&mp->desc.pose_b, mp->spin);
    }
}

static size_t ray_room(const rtcd_pair_desc* p)
{
    return (size_t)rtcd_mesh_vertex_count(p->a) + rtcd_mesh_vertex_count(p->b);
}

static size_t call_room(const rtcd_pair_desc* pairs, uint32_t n)
{
    size_t total = 0;
    for (uint32_t i = 0; i < n; ++i) total += ray_room(&pairs[i]);
    return total;
}

/* ---- comparisons ---- */

static char g_where[256]; /* what is being compared, for failure messages */

static void same_u32(const char* field, uint32_t want, uint32_t got)
{
    if (want != got) fail_msg("%s: %s is %u, the reference has %u", g_where, field, got, want);
}

/* Sorts every pair's rays of a call by (direction, vertex). */
static void sort_rays(const rtcd_pair_desc* pairs, uint32_t n, const rtcd_pair_result* res, rtcd_ray_hit* rays)
{
    size_t offset = 0;
    for (uint32_t i = 0; i < n; ++i) {
        qsort(rays + offset, res[i].colliding_rays, sizeof *rays, test_by_ray);
        offset += ray_room(&pairs[i]);
    }
}

/* ---- the public single-pair API, one state per key ---- */

typedef struct single_pair_reference {
    rtcd_pair_state* states[PAIRS];
    rtcd_ray_hit* rays;
    rtcd_contact* contacts;
    size_t cap;
} single_pair_reference;

static void reference_init(single_pair_reference* r)
{
    memset(r, 0, sizeof *r);
    for (int k = 0; k < PAIRS; ++k) assert_int_equal(rtcd_pair_state_create(&r->states[k]), RTCD_OK);
    r->cap = 2u * 4096u;
    r->rays = calloc(r->cap, sizeof *r->rays);
    r->contacts = calloc(r->cap, sizeof *r->contacts);
    assert_non_null(r->rays);
    assert_non_null(r->contacts);
}

static void reference_free(single_pair_reference* r)
{
    for (int k = 0; k < PAIRS; ++k) rtcd_pair_state_release(r->states[k]);
    free(r->rays);
    free(r->contacts);
}

/* rtcd_collide_iterative on every pair of the call, in order: the first
 * copy of a key with the key's state, a later copy with a fresh state of
 * its own (its contacts only are compared: the batch runs it without
 * state); keys missing from the call are reset. The batch's (sorted) rays
 * and contacts must be these, bit for bit. */
static void reference_check(single_pair_reference* r, const rtcd_narrowphase_def* def, const rtcd_pair_desc* pairs,
                            uint32_t n, const rtcd_pair_result* res, const rtcd_ray_hit* rays, const char* name,
                            int step)
{
    int seen[PAIRS] = {0};
    size_t offset = 0;
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t k = (uint32_t)(pairs[i].key - KEY0);
        assert_true(k < PAIRS);
        int copy = seen[k];
        seen[k] = 1;
        rtcd_pair_state* state = r->states[k];
        if (copy) assert_int_equal(rtcd_pair_state_create(&state), RTCD_OK);
        uint32_t cap = (uint32_t)ray_room(&pairs[i]), count = 0;
        assert_true(cap <= r->cap);
        rtcd_narrowphase_stats st;
        assert_int_equal(rtcd_collide_iterative(def, state, pairs[i].a, &pairs[i].pose_a, pairs[i].b, &pairs[i].pose_b,
                                                r->rays, cap, &count, &st),
                         RTCD_OK);
        if (copy) rtcd_pair_state_release(state);
        snprintf(g_where, sizeof g_where, "%s: single-pair reference, step %d, pair %u (key %llu%s)", name, step, i,
                 (unsigned long long)pairs[i].key, copy ? ", a second copy" : "");
        same_u32("colliding_rays", count, res[i].colliding_rays);
        for (uint32_t c = 0; c < count; ++c) r->contacts[c] = rtcd_contact_from_ray(&r->rays[c], def->contact_normal);
        rtcd_contact reduced[RTCD_MAX_MANIFOLD_POINTS];
        uint32_t m = rtcd_reduce_contacts(r->contacts, count, reduced);
        /* Speculative, edge and deep contacts have no ray in the single-pair
         * API: pairs that may have them are compared between the batch
         * variants only (bit for bit, below). */
        int rays_only = res[i].crossing_contacts == 0 &&
                        !(def->speculative && def->iterative.algorithm != RTCD_ALGORITHM_STANDARD);
        if (rays_only) test_same_contacts(g_where, reduced, m, &res[i]);
        if (!copy) {
            same_u32("standard_pass", st.standard_pass, res[i].standard_pass);
            same_u32("rays_cast", st.rays_cast, res[i].rays_cast);
            same_u32("kept_rays", st.kept_rays, res[i].kept_rays);
            same_u32("kept_predictions", st.kept_predictions, res[i].kept_predictions);
            same_u32("walk_steps", st.walk_steps, res[i].walk_steps);
            same_u32("predictive_rays", st.predictive_rays, res[i].predictive_rays);
        }
        qsort(r->rays, count, sizeof *r->rays, test_by_ray);
        test_same_rays(g_where, r->rays, rays + offset, count);
        offset += cap;
    }
    for (int k = 0; k < PAIRS; ++k)
        if (!seen[k]) rtcd_pair_state_reset(r->states[k]);
}

/* ---- bit identity over the sequence ---- */

enum { VARIANTS_MAX = 8 };

typedef struct variant {
    char name[64];
    rtcd_batch* batch;
    int exact; /* the CPU reference: ray_length and rays_cast compared too */
    double seconds;
    rtcd_pair_result res[MAX_CALL];
    rtcd_ray_hit* rays;
} variant;

typedef struct totals {
    uint32_t pair_steps, standard, iterative, colliding, walk_steps, kept, predictions, touching;
} totals;

static rtcd_batch* create_cpu(const rtcd_narrowphase_def* base, uint32_t threads, const rtcd_task_system* tasks)
{
    rtcd_narrowphase_def def = *base;
    def.backend = RTCD_BACKEND_CPU;
    def.threads = threads;
    if (tasks) def.tasks = *tasks;
    rtcd_batch* b = NULL;
    assert_int_equal(rtcd_batch_create(&def, &b), RTCD_OK);
    assert_non_null(b);
    assert_int_equal(rtcd_batch_backend(b), RTCD_BACKEND_CPU);
    assert_int_equal(rtcd_batch_device_count(b), 0);
    return b;
}

static void bit_identity(rtcd_algorithm algorithm, rtcd_traversal traversal, rtcd_contact_normal normal,
                         const schedule* when, int big, int steps)
{
    double start = now_s();
    rtcd_set_log(quiet_log, NULL);
    scenario scn;
    scenario_init(&scn, when, big);
    rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
    def.traversal = traversal;
    def.contact_normal = normal;
    def.iterative.algorithm = algorithm;
    user_tasks reverse = {3, 0, 0, 0}, deferred = {2, 0, 0, 0};
    rtcd_task_system reverse_ts = {reverse_enqueue, reverse_finish, &reverse, 3};
    rtcd_task_system deferred_ts = {deferred_enqueue, deferred_finish, &deferred, 2};

    variant* v = calloc(VARIANTS_MAX, sizeof *v);
    assert_non_null(v);
    int nv = 0;
    /* v[0]: the reference, one thread. */
    /* Brute force is slow: 1 and 2 threads only there. */
    uint32_t max_threads = traversal == RTCD_TRAVERSAL_BRUTE_FORCE ? 2 : 4;
    for (uint32_t t = 1; t <= max_threads; ++t) {
        snprintf(v[nv].name, sizeof v[nv].name, "cpu, %u thread(s)%s", t, t == 1 ? " (reference)" : "");
        v[nv].batch = create_cpu(&def, t, NULL);
        assert_int_equal(rtcd_batch_thread_count(v[nv].batch), t);
        v[nv++].exact = 1;
    }
    if (traversal != RTCD_TRAVERSAL_BRUTE_FORCE) {
        snprintf(v[nv].name, sizeof v[nv].name, "cpu, 1 thread again");
        v[nv].batch = create_cpu(&def, 1, NULL);
        v[nv++].exact = 1;
    }
    snprintf(v[nv].name, sizeof v[nv].name, "cpu, tasks in reverse chunks of 3");
    v[nv].batch = create_cpu(&def, 0, &reverse_ts);
    assert_int_equal(rtcd_batch_thread_count(v[nv].batch), 3);
    v[nv++].exact = 1;
    snprintf(v[nv].name, sizeof v[nv].name, "cpu, tasks run in finish");
    v[nv].batch = create_cpu(&def, 0, &deferred_ts);
    v[nv++].exact = 1;
    if (test_opencl_available()) {
        snprintf(v[nv].name, sizeof v[nv].name, "opencl, serial kernel");
        v[nv].batch = create_opencl_serial(&def);
        v[nv++].exact = 0;
    }
    size_t room_max = (size_t)MAX_CALL * 2u * rtcd_spawner_mesh_vertices(1);
    for (int k = 0; k < nv; ++k) {
        v[k].rays = calloc(room_max, sizeof *v[k].rays);
        assert_non_null(v[k].rays);
    }
    single_pair_reference ref;
    reference_init(&ref);
    char label[128];
    snprintf(label, sizeof label, "%s, %s, normal %d", rtcd_algorithm_name(algorithm),
             traversal == RTCD_TRAVERSAL_BVH ? "BVH" : "brute force", (int)normal);

    totals tot;
    memset(&tot, 0, sizeof tot);
    rtcd_pair_desc pairs[MAX_CALL];
    for (int step = 0; step < steps; ++step) {
        uint32_t n = scenario_call(&scn, step, pairs);
        assert_true(call_room(pairs, n) <= room_max);
        /* The others ask for rays on two steps of three (results must not
         * depend on it); the reference always does. */
        int with_rays = step % 3 != 2;
        for (int k = 0; k < nv; ++k) {
            double t0 = now_s();
            rtcd_error err = rtcd_batch_collide(v[k].batch, pairs, n, v[k].res, k == 0 || with_rays ? v[k].rays : NULL);
            if (err != RTCD_OK) fail_msg("%s, %s, step %d: %s: %s", label, v[k].name, step, rtcd_error_name(err),
                                         rtcd_last_error_message());
            v[k].seconds += now_s() - t0;
            if (k == 0 || with_rays) sort_rays(pairs, n, v[k].res, v[k].rays);
        }
        reference_check(&ref, &def, pairs, n, v[0].res, v[0].rays, label, step);
        for (int k = 1; k < nv; ++k) {
            size_t offset = 0;
            for (uint32_t i = 0; i < n; ++i) {
                int twice = 0;
                for (uint32_t j = 0; j < n; ++j) twice |= j != i && pairs[j].key == pairs[i].key;
                snprintf(g_where, sizeof g_where, "%s: %s, step %d, pair %u of %u (key %llu%s)", label, v[k].name, step,
                         i, n, (unsigned long long)pairs[i].key, twice ? ", given twice in this call" : "");
                /* A key given twice: the first copy in call order keeps the
                 * pair's state, later copies run without one (kept_rays 0),
                 * however the items are split (the reverse task system runs
                 * the later copy first) and on every backend. */
                test_same_result(g_where, &v[0].res[i], &v[k].res[i], v[k].exact);
                if (with_rays) test_same_rays(g_where, v[0].rays + offset, v[k].rays + offset, v[0].res[i].colliding_rays);
                offset += ray_room(&pairs[i]);
            }
        }
        for (uint32_t i = 0; i < n; ++i) {
            const rtcd_pair_result* r = &v[0].res[i];
            tot.pair_steps++;
            tot.standard += r->standard_pass;
            tot.iterative += !r->standard_pass && (r->kept_rays + r->kept_predictions) > 0;
            tot.colliding += r->colliding_rays;
            tot.touching += r->colliding_rays > 0;
            tot.walk_steps += r->walk_steps;
            tot.kept += r->kept_rays;
            tot.predictions += r->kept_predictions;
        }
        scenario_advance(&scn, step);
    }
    print_message("%s, %d steps: %u pair-steps (%u touching), %u standard passes, %u iterative passes "
                  "(%u walk steps), %u colliding rays, %u kept predictions; %d variants equal (%.2f s)\n",
                  label, steps, tot.pair_steps, tot.touching, tot.standard, tot.iterative, tot.walk_steps,
                  tot.colliding, tot.predictions, nv, now_s() - start);
    for (int k = 0; k < nv; ++k) print_message("  %s: %.3f s\n", v[k].name, v[k].seconds);
    /* Not vacuous. */
    assert_true(tot.colliding > 2000 && tot.touching > tot.pair_steps / 2);
    assert_true(tot.touching < tot.pair_steps); /* pair 5 flies apart for a step */
    if (algorithm == RTCD_ALGORITHM_STANDARD) {
        assert_int_equal(tot.standard, tot.pair_steps);
    } else {
        assert_true(tot.standard >= 2u * PAIRS);
        /* The iterative algorithm runs a standard pass once a pair moved
         * the depth a new contact may reach unseen (about 3 mm; these pairs
         * move some 1.7 mm a step): iterative passes on fewer steps. */
        assert_true(tot.iterative >= (uint32_t)steps * (algorithm == RTCD_ALGORITHM_PREDICTIVE ? 3u : 1u));
        assert_true(tot.walk_steps > 0);
        if (algorithm == RTCD_ALGORITHM_PREDICTIVE) assert_true(tot.predictions > 0);
    }
    /* The engines' schedulers ran every call (the pair map's passes and the
     * pairs', several tasks a call), as each one promises. */
    assert_true(reverse.enqueues >= (uint32_t)steps);
    assert_int_equal(reverse.finishes, 0);
    assert_true(deferred.enqueues >= (uint32_t)steps);
    assert_int_equal(deferred.finishes, deferred.enqueues);
    reference_free(&ref);
    for (int k = 0; k < nv; ++k) {
        rtcd_batch_release(v[k].batch);
        free(v[k].rays);
    }
    free(v);
    scenario_free(&scn);
    rtcd_set_log(NULL, NULL);
}

static void test_standard_bvh(void** state)
{
    (void)state;
    bit_identity(RTCD_ALGORITHM_STANDARD, RTCD_TRAVERSAL_BVH, RTCD_CONTACT_RAY_WEIGHTED, &k_long, 1, 64);
}

static void test_iterative_bvh(void** state)
{
    (void)state;
    bit_identity(RTCD_ALGORITHM_ITERATIVE, RTCD_TRAVERSAL_BVH, RTCD_CONTACT_REPROJECTED, &k_long, 1, 64);
}

static void test_predictive_bvh(void** state)
{
    (void)state;
    bit_identity(RTCD_ALGORITHM_PREDICTIVE, RTCD_TRAVERSAL_BVH, RTCD_CONTACT_RAY, &k_long, 1, 64);
}

/* Brute force is slow: 13 steps of the short schedule (every event of the
 * long one, closer together). */
static void test_standard_brute_force(void** state)
{
    (void)state;
    bit_identity(RTCD_ALGORITHM_STANDARD, RTCD_TRAVERSAL_BRUTE_FORCE, RTCD_CONTACT_REPROJECTED, &k_short, 0, 13);
}

static void test_iterative_brute_force(void** state)
{
    (void)state;
    bit_identity(RTCD_ALGORITHM_ITERATIVE, RTCD_TRAVERSAL_BRUTE_FORCE, RTCD_CONTACT_RAY, &k_short, 0, 13);
}

static void test_predictive_brute_force(void** state)
{
    (void)state;
    bit_identity(RTCD_ALGORITHM_PREDICTIVE, RTCD_TRAVERSAL_BRUTE_FORCE, RTCD_CONTACT_REPROJECTED, &k_short, 0, 13);
}

/* ---- validation ---- */

/* Field by field (a struct's padding is not part of its value). */
static void same_def(const rtcd_narrowphase_def* x, const rtcd_narrowphase_def* y)
{
    assert_int_equal(x->traversal, y->traversal);
    assert_int_equal(x->contact_normal, y->contact_normal);
    assert_int_equal(x->cull_separated, y->cull_separated);
    assert_int_equal(x->iterative.algorithm, y->iterative.algorithm);
    assert_int_equal(x->iterative.adaptive, y->iterative.adaptive);
    assert_memory_equal(&x->iterative.fixed, &y->iterative.fixed, sizeof x->iterative.fixed);
    assert_memory_equal(&x->iterative.confidence, &y->iterative.confidence, sizeof(float));
    assert_int_equal(x->backend, y->backend);
    assert_true((!x->devices && !y->devices) || (x->devices && y->devices && !strcmp(x->devices, y->devices)));
    assert_int_equal(x->max_devices, y->max_devices);
    assert_int_equal(x->threads, y->threads);
    assert_ptr_equal(x->tasks.enqueue, y->tasks.enqueue);
    assert_ptr_equal(x->tasks.finish, y->tasks.finish);
    assert_ptr_equal(x->tasks.user_context, y->tasks.user_context);
    assert_int_equal(x->tasks.worker_count, y->tasks.worker_count);
}

/* def is refused everywhere a def goes in, with a message naming `field`;
 * a batch given it keeps its def. */
static void expect_refused(const rtcd_narrowphase_def* def, const char* field, rtcd_batch* live)
{
    assert_int_equal(rtcd_narrowphase_def_validate(def), RTCD_ERROR_INVALID_ARGUMENT);
    const char* msg = rtcd_last_error_message();
    if (!strstr(msg, field)) fail_msg("the message for a bad %s does not name it: %s", field, msg);
    rtcd_batch* b = (rtcd_batch*)0x1;
    assert_int_equal(rtcd_batch_create(def, &b), RTCD_ERROR_INVALID_ARGUMENT);
    assert_null(b);
    if (!strstr(rtcd_last_error_message(), field))
        fail_msg("rtcd_batch_create's message for a bad %s does not name it: %s", field, rtcd_last_error_message());
    rtcd_narrowphase_def before = rtcd_batch_def(live);
    uint32_t threads = rtcd_batch_thread_count(live);
    assert_int_equal(rtcd_batch_set_def(live, def), RTCD_ERROR_INVALID_ARGUMENT);
    if (!strstr(rtcd_last_error_message(), field))
        fail_msg("rtcd_batch_set_def's message for a bad %s does not name it: %s", field, rtcd_last_error_message());
    rtcd_narrowphase_def after = rtcd_batch_def(live);
    same_def(&before, &after);
    assert_int_equal(rtcd_batch_thread_count(live), threads);
}

static void noop_task(uint32_t begin, uint32_t end, uint32_t worker, void* context)
{
    (void)begin;
    (void)end;
    (void)worker;
    (void)context;
}

static void* bare_enqueue(rtcd_task_fn* task, uint32_t count, uint32_t min_range, void* task_context,
                          void* user_context)
{
    (void)min_range;
    (void)user_context;
    task(0, count, 0, task_context);
    return NULL;
}

static void bare_finish(void* user_task, void* user_context)
{
    (void)user_task;
    (void)user_context;
}

static void test_validation(void** state)
{
    (void)state;
    rtcd_set_log(quiet_log, NULL);
    rtcd_narrowphase_def good = rtcd_default_narrowphase_def();
    good.backend = RTCD_BACKEND_CPU;
    good.threads = 2;
    good.iterative.algorithm = RTCD_ALGORITHM_ITERATIVE;
    assert_int_equal(rtcd_narrowphase_def_validate(&good), RTCD_OK);
    rtcd_batch* live = NULL;
    assert_int_equal(rtcd_batch_create(&good, &live), RTCD_OK);
    (void)noop_task;

    rtcd_narrowphase_def d;
    d = good, d.iterative.algorithm = (rtcd_algorithm)3;
    expect_refused(&d, "algorithm", live);
    d = good, d.iterative.algorithm = (rtcd_algorithm)-1;
    expect_refused(&d, "algorithm", live);
    d = good, d.traversal = (rtcd_traversal)7;
    expect_refused(&d, "traversal", live);
    d = good, d.traversal = (rtcd_traversal)-1;
    expect_refused(&d, "traversal", live);
    d = good, d.contact_normal = (rtcd_contact_normal)3;
    expect_refused(&d, "contact_normal", live);
    d = good, d.backend = (rtcd_backend)3;
    expect_refused(&d, "backend", live);
    d = good, d.backend = (rtcd_backend)-1;
    expect_refused(&d, "backend", live);
    d = good, d.iterative.confidence = 0.99f;
    expect_refused(&d, "confidence", live);
    d = good, d.iterative.confidence = NAN;
    expect_refused(&d, "confidence", live);
    d = good, d.iterative.confidence = INFINITY;
    expect_refused(&d, "confidence", live);
    /* Fixed parameters, checked when the def uses them. */
    d = good, d.iterative.adaptive = 0, d.iterative.fixed.displacement_threshold = 0.0f;
    expect_refused(&d, "fixed", live);
    d = good, d.iterative.adaptive = 0, d.iterative.fixed.displacement_threshold = NAN;
    expect_refused(&d, "fixed", live);
    d = good, d.iterative.adaptive = 0, d.iterative.fixed.distance_extension = d.iterative.fixed.displacement_threshold;
    expect_refused(&d, "fixed", live);
    d = good, d.iterative.adaptive = 0, d.iterative.fixed.distance_extension = INFINITY;
    expect_refused(&d, "fixed", live);
    d = good, d.iterative.adaptive = 0, d.iterative.fixed.culling_distance = -0.01f;
    expect_refused(&d, "fixed", live);
    d = good, d.iterative.adaptive = 0, d.iterative.fixed.culling_distance = NAN;
    expect_refused(&d, "fixed", live);
    d = good, d.iterative.adaptive = 0, d.iterative.fixed.max_iterations = 0;
    expect_refused(&d, "fixed", live);
    d = good, d.threads = 1025;
    expect_refused(&d, "threads", live);
    d = good, d.max_devices = 17;
    expect_refused(&d, "max_devices", live);
    d = good, d.tasks.enqueue = bare_enqueue, d.tasks.worker_count = 1;
    expect_refused(&d, "finish", live);
    d = good, d.tasks.finish = bare_finish, d.tasks.worker_count = 1;
    expect_refused(&d, "enqueue", live);
    d = good, d.tasks.enqueue = bare_enqueue, d.tasks.finish = bare_finish, d.tasks.worker_count = 0;
    expect_refused(&d, "worker_count", live);

    /* The edges that are fine. */
    d = good, d.threads = 1024;
    assert_int_equal(rtcd_narrowphase_def_validate(&d), RTCD_OK);
    d = good, d.iterative.confidence = 1.0f;
    assert_int_equal(rtcd_narrowphase_def_validate(&d), RTCD_OK);
    d = good, d.iterative.confidence = NAN, d.iterative.adaptive = 1;
    assert_int_equal(rtcd_narrowphase_def_validate(&d), RTCD_ERROR_INVALID_ARGUMENT);
    d = good, d.iterative.adaptive = 1, d.iterative.fixed.max_iterations = 0; /* unused */
    assert_int_equal(rtcd_narrowphase_def_validate(&d), RTCD_OK);
    d = good, d.tasks.enqueue = bare_enqueue, d.tasks.finish = bare_finish, d.tasks.worker_count = 1;
    assert_int_equal(rtcd_narrowphase_def_validate(&d), RTCD_OK);

    /* NULL arguments. */
    rtcd_batch* b = (rtcd_batch*)0x1;
    assert_int_equal(rtcd_batch_create(NULL, &b), RTCD_ERROR_INVALID_ARGUMENT);
    assert_null(b);
    assert_int_equal(rtcd_batch_create(&good, NULL), RTCD_ERROR_INVALID_ARGUMENT);
    assert_int_equal(rtcd_narrowphase_def_validate(NULL), RTCD_ERROR_INVALID_ARGUMENT);
    assert_int_equal(rtcd_batch_set_def(live, NULL), RTCD_ERROR_INVALID_ARGUMENT);
    assert_int_equal(rtcd_batch_set_def(NULL, &good), RTCD_ERROR_INVALID_ARGUMENT);
    assert_int_equal(rtcd_batch_collide(NULL, NULL, 0, NULL, NULL), RTCD_ERROR_INVALID_ARGUMENT);
    assert_int_equal(rtcd_batch_collide(live, NULL, 1, NULL, NULL), RTCD_ERROR_INVALID_ARGUMENT);
    assert_int_equal(rtcd_batch_collide(live, NULL, 0, NULL, NULL), RTCD_OK); /* an empty call */

    /* The batch still works with its old def. */
    rtcd_narrowphase_def kept = rtcd_batch_def(live);
    assert_int_equal(kept.iterative.algorithm, RTCD_ALGORITHM_ITERATIVE);
    assert_int_equal(kept.threads, 2);
    assert_int_equal(rtcd_batch_thread_count(live), 2);
    rtcd_batch_release(live);
    rtcd_set_log(NULL, NULL);
}

/* ---- set_def ---- */

/* Runs `batch` and `reference` on the same call; every result equal. */
static void step_both(rtcd_batch* batch, rtcd_batch* reference, const rtcd_pair_desc* pairs, uint32_t n,
                      rtcd_pair_result* res, rtcd_pair_result* want, const char* what, int step)
{
    assert_int_equal(rtcd_batch_collide(batch, pairs, n, res, NULL), RTCD_OK);
    assert_int_equal(rtcd_batch_collide(reference, pairs, n, want, NULL), RTCD_OK);
    for (uint32_t i = 0; i < n; ++i) {
        snprintf(g_where, sizeof g_where, "set_def, %s, step %d, pair %u (key %llu)", what, step, i,
                 (unsigned long long)pairs[i].key);
        test_same_result(g_where, &want[i], &res[i], 1);
    }
}

static void test_set_def(void** state)
{
    (void)state;
    rtcd_set_log(quiet_log, NULL);
    scenario scn;
    scenario_init(&scn, &k_long, 0);
    rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
    def.backend = RTCD_BACKEND_CPU;
    def.threads = 2;
    def.iterative.algorithm = RTCD_ALGORITHM_PREDICTIVE;
    rtcd_batch* b = NULL;
    assert_int_equal(rtcd_batch_create(&def, &b), RTCD_OK);
    rtcd_narrowphase_def one = def;
    one.threads = 1;
    rtcd_batch* ref = NULL;
    assert_int_equal(rtcd_batch_create(&one, &ref), RTCD_OK);
    rtcd_pair_desc pairs[MAX_CALL];
    rtcd_pair_result res[MAX_CALL], want[MAX_CALL];
    uint32_t iterative = 0;
    for (int step = 0; step < 36; ++step) {
        uint32_t n = scenario_call(&scn, step, pairs);
        if (step == 10) {
            /* A new algorithm: every pair forgets its state. */
            def.iterative.algorithm = RTCD_ALGORITHM_ITERATIVE;
            assert_int_equal(rtcd_batch_set_def(b, &def), RTCD_OK);
            assert_int_equal(rtcd_batch_def(b).iterative.algorithm, RTCD_ALGORITHM_ITERATIVE);
            assert_int_equal(rtcd_batch_thread_count(b), 2);
            rtcd_batch_release(ref);
            one = def, one.threads = 1;
            assert_int_equal(rtcd_batch_create(&one, &ref), RTCD_OK);
        }
        if (step == 18) {
            /* Another thread count: the backend reopens. */
            def.threads = 3;
            assert_int_equal(rtcd_batch_set_def(b, &def), RTCD_OK);
            assert_int_equal(rtcd_batch_thread_count(b), 3);
            assert_int_equal(rtcd_batch_def(b).threads, 3);
            assert_int_equal(rtcd_batch_backend(b), RTCD_BACKEND_CPU);
            rtcd_batch_release(ref);
            assert_int_equal(rtcd_batch_create(&one, &ref), RTCD_OK);
        }
        if (step == 26) {
            /* A failed set_def changes nothing: neither the def, nor the
             * backend, nor the pairs' states (the reference goes on). */
            rtcd_narrowphase_def bad = def;
            bad.iterative.algorithm = (rtcd_algorithm)9;
            assert_int_equal(rtcd_batch_set_def(b, &bad), RTCD_ERROR_INVALID_ARGUMENT);
            bad = def;
            bad.backend = RTCD_BACKEND_OPENCL;
            bad.devices = "9:9";
            rtcd_error err = rtcd_batch_set_def(b, &bad);
            assert_true(err == RTCD_ERROR_NO_DEVICE || err == RTCD_ERROR_UNSUPPORTED);
            rtcd_narrowphase_def now = rtcd_batch_def(b);
            same_def(&now, &def);
            assert_int_equal(rtcd_batch_backend(b), RTCD_BACKEND_CPU);
            assert_int_equal(rtcd_batch_thread_count(b), 3);
        }
        if (step == 30) {
            /* Only the contact normal: same backend, states forgotten all the same. */
            def.contact_normal = RTCD_CONTACT_RAY_WEIGHTED;
            assert_int_equal(rtcd_batch_set_def(b, &def), RTCD_OK);
            assert_int_equal(rtcd_batch_thread_count(b), 3);
            rtcd_batch_release(ref);
            one = def, one.threads = 1;
            assert_int_equal(rtcd_batch_create(&one, &ref), RTCD_OK);
        }
        step_both(b, ref, pairs, n, res, want, rtcd_algorithm_name(def.iterative.algorithm), step);
        if (step == 10 || step == 18 || step == 30)
            for (uint32_t i = 0; i < n; ++i) {
                snprintf(g_where, sizeof g_where, "set_def, first call after step %d's change, pair %u", step, i);
                same_u32("standard_pass", 1, res[i].standard_pass);
            }
        for (uint32_t i = 0; i < n; ++i) iterative += !res[i].standard_pass;
        scenario_advance(&scn, step);
    }
    assert_true(iterative > 100);
    rtcd_batch_release(b);
    rtcd_batch_release(ref);
    scenario_free(&scn);
    rtcd_set_log(NULL, NULL);
}

/* ---- non-finite poses, NULL meshes ---- */

/* The same on every backend (issue 12: the OpenCL backend once gave such
 * a pair no contacts and said nothing). */
static void nonfinite_pose_on(rtcd_backend backend)
{
    scenario scn;
    scenario_init(&scn, &k_long, 0);
    rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
    def.backend = backend;
    def.threads = 2;
    log_capture log;
    memset(&log, 0, sizeof log);
    rtcd_set_log(capture_log, &log);
    rtcd_batch *with = NULL, *without = NULL;
    assert_int_equal(rtcd_batch_create(&def, &with), RTCD_OK);
    assert_int_equal(rtcd_batch_create(&def, &without), RTCD_OK);
    rtcd_pair_desc good[MAX_CALL], all[MAX_CALL + 1];
    rtcd_pair_result want[MAX_CALL], got[MAX_CALL + 1];
    size_t room = (size_t)(MAX_CALL + 1) * 2u * rtcd_spawner_mesh_vertices(1);
    rtcd_ray_hit* want_rays = calloc(room, sizeof *want_rays);
    rtcd_ray_hit* got_rays = calloc(room, sizeof *got_rays);
    assert_non_null(want_rays);
    assert_non_null(got_rays);
    uint32_t colliding = 0;
    for (int step = 0; step < 6; ++step) {
        uint32_t n = scenario_call(&scn, step, good);
        /* A bad pair at index 2 (and at the end on step 3): NaN, Inf, -Inf in
         * a rotation or a translation, on either side. */
        rtcd_pair_desc bad = scn.mps[0].desc;
        bad.key = 77;
        if (step % 3 == 0) bad.pose_a.translation[1] = NAN;
        if (step % 3 == 1) bad.pose_b.rotation[4] = INFINITY;
        if (step % 3 == 2) bad.pose_a.rotation[8] = -INFINITY;
        uint32_t m = 0, bad_at = 2;
        for (uint32_t i = 0; i < n; ++i) {
            if (i == bad_at) all[m++] = bad;
            all[m++] = good[i];
        }
        uint32_t bad_count = 1;
        if (step == 3) {
            all[m] = bad;
            all[m++].key = 78;
            bad_count = 2;
        }
        int warnings = log.warnings;
        memset(got, 0xab, sizeof got);
        assert_int_equal(rtcd_batch_collide(with, all, m, got, got_rays), RTCD_OK);
        assert_int_equal(log.warnings, warnings + 1); /* one line per call */
        print_message("%s, step %d: %s\n", rtcd_backend_name(backend), step, log.last_warning);
        assert_non_null(strstr(log.last_warning, "non-finite"));
        assert_non_null(strstr(log.last_warning, "key 77"));
        assert_int_equal(rtcd_batch_collide(without, good, n, want, want_rays), RTCD_OK);
        assert_int_equal(log.warnings, warnings + 1);
        (void)bad_count;
        size_t got_off = 0, want_off = 0;
        for (uint32_t i = 0, k = 0; i < m; ++i) {
            if (all[i].key == 77 || all[i].key == 78) {
                rtcd_pair_result zero;
                memset(&zero, 0, sizeof zero);
                assert_int_equal(got[i].contact_count, 0);
                assert_memory_equal(&got[i], &zero, sizeof zero);
            } else {
                snprintf(g_where, sizeof g_where, "non-finite pose beside, step %d, pair %u (key %llu)", step, i,
                         (unsigned long long)all[i].key);
                /* Two batches of one backend: on a GPU the sum ray_length may come in another order. */
                test_same_result(g_where, &want[k], &got[i], backend == RTCD_BACKEND_CPU ? 1 : TEST_SAME_BACKEND);
                rtcd_ray_hit* w = want_rays + want_off;
                rtcd_ray_hit* g = got_rays + got_off;
                qsort(w, want[k].colliding_rays, sizeof *w, test_by_ray);
                qsort(g, got[i].colliding_rays, sizeof *g, test_by_ray);
                test_same_rays(g_where, w, g, want[k].colliding_rays);
                colliding += want[k].colliding_rays;
                want_off += ray_room(&good[k]);
                k++;
            }
            got_off += ray_room(&all[i]);
        }
        scenario_advance(&scn, step);
    }
    assert_true(colliding > 500);

    /* A NULL mesh: refused, nothing runs. */
    rtcd_pair_desc null_mesh = scn.mps[0].desc;
    null_mesh.b = NULL;
    assert_int_equal(rtcd_batch_collide(with, &null_mesh, 1, got, NULL), RTCD_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(rtcd_last_error_message(), "NULL mesh"));
    null_mesh.a = NULL;
    null_mesh.b = scn.meshes[0];
    assert_int_equal(rtcd_batch_collide(with, &null_mesh, 1, got, NULL), RTCD_ERROR_INVALID_ARGUMENT);
    rtcd_set_log(NULL, NULL);
    free(want_rays);
    free(got_rays);
    rtcd_batch_release(with);
    rtcd_batch_release(without);
    scenario_free(&scn);
}

static void test_nonfinite_pose(void** state)
{
    (void)state;
    nonfinite_pose_on(RTCD_BACKEND_CPU);
    if (test_opencl_available()) nonfinite_pose_on(RTCD_BACKEND_OPENCL);
    else print_message("no OpenCL device: the CPU reference only\n");
}

/* ---- reference counting ---- */

static void test_retain_release(void** state)
{
    (void)state;
    rtcd_set_log(quiet_log, NULL);
    scenario scn;
    scenario_init(&scn, &k_long, 0);
    rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
    def.backend = RTCD_BACKEND_CPU;
    def.threads = 2;
    rtcd_batch* b = NULL;
    assert_int_equal(rtcd_batch_create(&def, &b), RTCD_OK);
    rtcd_batch_retain(b);
    rtcd_batch_retain(b);
    rtcd_batch_release(b);
    rtcd_batch_release(b);
    /* One reference left: still usable. */
    rtcd_pair_desc pairs[MAX_CALL];
    rtcd_pair_result res[MAX_CALL];
    uint32_t n = scenario_call(&scn, 0, pairs);
    assert_int_equal(rtcd_batch_collide(b, pairs, n, res, NULL), RTCD_OK);
    assert_int_equal(rtcd_batch_last_stats(b).pairs_per_device[0], n);
    assert_int_equal(rtcd_batch_thread_count(b), 2);
    rtcd_batch_release(b); /* freed: LeakSanitizer would see anything left */
    rtcd_batch_release(NULL);
    rtcd_batch_retain(NULL);
    scenario_free(&scn);
    rtcd_set_log(NULL, NULL);
}

/* ---- AUTO ---- */

static void auto_choice(const char* devices, int gpu)
{
    rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
    def.backend = RTCD_BACKEND_AUTO;
    def.devices = devices;
    def.threads = 2;
    log_capture log;
    memset(&log, 0, sizeof log);
    rtcd_set_log(capture_log, &log);
    rtcd_batch* b = NULL;
    rtcd_error err = rtcd_batch_create(&def, &b);
    rtcd_set_log(NULL, NULL);
    assert_int_equal(err, RTCD_OK);
    print_message("AUTO, devices %s: %s\n", devices ? devices : "NULL", log.last_info);
    assert_int_equal(log.infos, 1);
    assert_int_equal(log.warnings, 0);
    assert_int_equal(log.errors, 0);
    if (gpu && !devices) {
        assert_int_equal(rtcd_batch_backend(b), RTCD_BACKEND_OPENCL);
        assert_non_null(strstr(log.last_info, "backend opencl"));
    } else {
        assert_int_equal(rtcd_batch_backend(b), RTCD_BACKEND_CPU);
        assert_non_null(strstr(log.last_info, "backend cpu"));
        assert_int_equal(rtcd_batch_thread_count(b), 2);
        assert_int_equal(rtcd_batch_device_count(b), 0);
    }
    rtcd_batch_release(b);
}

static void test_auto(void** state)
{
    (void)state;
    const char* env = getenv("RTCD_DEVICES");
    char* saved = env ? strdup(env) : NULL;
    unsetenv("RTCD_DEVICES");
    /* Is there a GPU? Then AUTO takes it (this machine has none). */
    int gpu = 0;
    if (test_opencl_available()) {
        rtcd_narrowphase_def probe = rtcd_default_narrowphase_def();
        probe.backend = RTCD_BACKEND_OPENCL;
        probe.devices = "gpu";
        rtcd_batch* b = NULL;
        rtcd_set_log(quiet_log, NULL);
        gpu = rtcd_batch_create(&probe, &b) == RTCD_OK;
        rtcd_set_log(NULL, NULL);
        rtcd_batch_release(b);
    }
    print_message("%s GPU here\n", gpu ? "a" : "no");
    auto_choice(NULL, gpu);
    auto_choice("cpu", gpu);
    /* RTCD_DEVICES=cpu says the same. */
    setenv("RTCD_DEVICES", "cpu", 1);
    auto_choice(NULL, 0);
    if (saved) {
        setenv("RTCD_DEVICES", saved, 1);
        free(saved);
    } else {
        unsetenv("RTCD_DEVICES");
    }
}

/* ---- OpenCL device selection ---- */

/* ---- the contacts without a ray, on every backend ---- */

static rtcd_transform rotated_about(int axis, float degrees, float x, float y, float z)
{
    rtcd_transform t = rtcd_transform_identity();
    float a = degrees * 3.14159265f / 180.0f, c = cosf(a), s = sinf(a);
    int i = (axis + 1) % 3, j = (axis + 2) % 3;
    t.rotation[3 * i + i] = c, t.rotation[3 * i + j] = -s;
    t.rotation[3 * j + i] = s, t.rotation[3 * j + j] = c;
    t.translation[0] = x, t.translation[1] = y, t.translation[2] = z;
    return t;
}

/* Speculative contacts, edge crossings and deep vertices (core/shared/
 * crossing.h) give the same contacts, bit for bit, on the CPU reference and
 * on both OpenCL kernels, call after call: crossed boxes (no vertex of
 * either inside the other), a thin plate deep in a block (Figure 9), a
 * sphere inside a sphere, and two blobs closing in (speculative only). */
static void test_contacts_without_rays_match(void** state)
{
    (void)state;
    rtcd_mesh* box = test_make_box(0.5f, 0.5f, 0.5f, 1);
    rtcd_mesh* plate = test_make_box(0.5f, 0.5f, 0.025f, 1);
    rtcd_mesh* block = test_make_box(1.0f, 1.0f, 1.0f, 1);
    rtcd_mesh* small = test_make_uv_sphere(8, 16, 0.3f);
    rtcd_mesh* big = test_make_uv_sphere(16, 32, 2.0f);
    rtcd_mesh* blob = test_make_blob(RTCD_AVALANCHE_BLOB_VERTICES, 0.5f, 7);
    enum { CASES = 4, CALLS = 6 };
    rtcd_pair_desc pairs[CASES];
    memset(pairs, 0, sizeof pairs);
    float h2 = 0.5f * sqrtf(2.0f);
    pairs[0].a = box, pairs[0].b = box; /* edges crossed 1.5 cm deep */
    pairs[0].pose_a = rotated_about(0, 45.0f, 0.0f, 0.0f, 2.0f * h2 - 0.015f);
    pairs[0].pose_b = rotated_about(1, 45.0f, 0.0f, 0.0f, 0.0f);
    pairs[1].a = plate, pairs[1].b = block; /* half a metre into the block's side */
    pairs[1].pose_a = rotated_about(2, 0.0f, -1.0f, 0.0f, 0.0f);
    pairs[1].pose_b = rtcd_transform_identity();
    pairs[2].a = small, pairs[2].b = big;
    pairs[2].pose_a = rotated_about(2, 0.0f, 0.2f, 0.1f, -0.3f);
    pairs[2].pose_b = rtcd_transform_identity();
    pairs[3].a = blob, pairs[3].b = blob; /* 2 cm of gap less each call */
    pairs[3].pose_a = rotated_about(2, 30.0f, 0.0f, 0.0f, 0.0f);
    pairs[3].pose_b = rotated_about(0, 20.0f, 1.1f, 0.0f, 0.0f);
    for (int k = 0; k < CASES; ++k) pairs[k].key = KEY0 + (uint64_t)k;
    rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
    rtcd_batch* cpu = create_cpu(&def, 1, NULL);
    rtcd_batch* serial = test_opencl_available() ? create_opencl_serial(&def) : NULL;
    rtcd_batch* group = NULL;
    if (serial) {
        rtcd_narrowphase_def g = def;
        g.backend = RTCD_BACKEND_OPENCL;
        g.max_devices = 1;
        setenv("RTCD_CL_KERNEL", "group", 1);
        assert_int_equal(rtcd_batch_create(&g, &group), RTCD_OK);
        unsetenv("RTCD_CL_KERNEL");
    }
    uint32_t crossing[CASES] = {0}, speculative = 0;
    for (int call = 0; call < CALLS; ++call) {
        rtcd_pair_result want[CASES], got[CASES];
        assert_int_equal(rtcd_batch_collide(cpu, pairs, CASES, want, NULL), RTCD_OK);
        for (int k = 0; k < CASES; ++k) {
            crossing[k] += want[k].crossing_contacts;
            for (uint32_t c = 0; c < want[k].contact_count; ++c) speculative += want[k].contacts[c].depth < 0.0f;
        }
        rtcd_batch* others[2] = {serial, group};
        for (int o = 0; o < 2 && serial; ++o) {
            assert_int_equal(rtcd_batch_collide(others[o], pairs, CASES, got, NULL), RTCD_OK);
            for (int k = 0; k < CASES; ++k) {
                snprintf(g_where, sizeof g_where, "%s kernel, case %d, call %d", o ? "group" : "serial", k, call);
                same_u32("crossing_contacts", want[k].crossing_contacts, got[k].crossing_contacts);
                same_u32("colliding_rays", want[k].colliding_rays, got[k].colliding_rays);
                test_same_contacts(g_where, want[k].contacts, want[k].contact_count, &got[k]);
            }
        }
        pairs[0].pose_a.translation[2] -= 0.001f;
        pairs[1].pose_a.translation[0] += 0.001f;
        pairs[2].pose_a.translation[0] += 0.002f;
        pairs[3].pose_a.translation[0] += 0.02f;
    }
    print_message("crossing contacts over %d calls: crossed boxes %u, plate %u, sphere in sphere %u; speculative points %u%s\n",
                  CALLS, crossing[0], crossing[1], crossing[2], speculative,
                  serial ? "; equal on the serial and group kernels" : "; no OpenCL here");
    /* Not vacuous: each case really goes through the new paths. */
    assert_true(crossing[0] > 0 && crossing[1] > 0 && crossing[2] > 0);
    assert_true(speculative > 0);
    rtcd_batch_release(cpu);
    rtcd_batch_release(serial);
    rtcd_batch_release(group);
    rtcd_mesh* all[] = {box, plate, block, small, big, blob};
    for (size_t m = 0; m < sizeof all / sizeof *all; ++m) rtcd_mesh_release(all[m]);
}

/* A grazing touch recorded in the avalanche (standard algorithm, step 47 of
 * 512 blobs): one blob's edge dips through the other's surface by a float
 * rounding error, and the float second phase calls it a crossing (depth
 * 4e-8 m). The CPU reference gates that phase with an exact surface test in
 * double; it once said "apart" here and skipped the items the kernels ran,
 * so the backends disagreed. Both must give the same contacts. */
static void test_grazing_crossing_matches(void** state)
{
    (void)state;
    /* The avalanche's body: its blob in the principal frame (the shape's). */
    rtcd_mesh* blob = test_make_blob(RTCD_AVALANCHE_BLOB_VERTICES, 0.5f, 1);
    rtcd_world_def wd = rtcd_default_world_def();
    rtcd_world* world = NULL;
    rtcd_shape* shape = NULL;
    assert_int_equal(rtcd_world_create(&wd, &world), RTCD_OK);
    assert_int_equal(rtcd_shape_create(world, blob, &shape), RTCD_OK);
    rtcd_pair_desc pair;
    memset(&pair, 0, sizeof pair);
    pair.a = pair.b = rtcd_shape_body_mesh(shape);
    pair.key = KEY0;
    const rtcd_transform pose_a = {{0x1.5e6ff8p-2f, -0x1.5858e0p-5f, 0x1.e09a5ep-1f, -0x1.19da38p-1f, -0x1.a31ad8p-1f,
                                    0x1.4ff604p-3f, 0x1.85dfb6p-1f, -0x1.254fe4p-1f, -0x1.368cf8p-2f},
                                   {0x1.1f7ceep+2f, 0x1.7d3620p-1f, 0x1.34872ap+1f}};
    const rtcd_transform pose_b = {{0x1.88b77cp-1f, 0x1.b8f7acp-2f, 0x1.e70cdep-2f, -0x1.635534p-2f, -0x1.6166a0p-2f,
                                    0x1.be7e18p-1f, 0x1.1451acp-1f, -0x1.aaf9acp-1f, -0x1.d832a0p-4f},
                                   {0x1.17e44ap+2f, 0x1.83196ep-1f, 0x1.ae2342p+1f}};
    pair.pose_a = pose_a;
    pair.pose_b = pose_b;
    rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
    def.iterative.algorithm = RTCD_ALGORITHM_STANDARD;
    rtcd_batch* cpu = create_cpu(&def, 1, NULL);
    rtcd_pair_result want, got;
    assert_int_equal(rtcd_batch_collide(cpu, &pair, 1, &want, NULL), RTCD_OK);
    /* The CPU's own exact answer: the surfaces meet within float rounding,
     * so no vertex ray collides and the second phase has the say. */
    assert_int_equal(want.colliding_rays, 0);
    for (uint32_t c = 0; c < want.contact_count; ++c) assert_true(fabsf(want.contacts[c].depth) < 1e-5f);
    rtcd_batch* serial = test_opencl_available() ? create_opencl_serial(&def) : NULL;
    if (serial) {
        assert_int_equal(rtcd_batch_collide(serial, &pair, 1, &got, NULL), RTCD_OK);
        snprintf(g_where, sizeof g_where, "grazing pair, serial kernel");
        /* Not vacuous: the device does find the grazing crossing. */
        assert_true(got.crossing_contacts > 0);
        same_u32("crossing_contacts", want.crossing_contacts, got.crossing_contacts);
        test_same_contacts(g_where, want.contacts, want.contact_count, &got);
    }
    print_message("grazing pair: %u crossing contact(s) on the CPU%s\n", want.crossing_contacts,
                  serial ? ", the same on OpenCL" : "; no OpenCL here");
    rtcd_batch_release(serial);
    rtcd_batch_release(cpu);
    rtcd_shape_release(shape);
    rtcd_world_release(world);
    rtcd_mesh_release(blob);
}

static void test_opencl_selection(void** state)
{
    (void)state;
    rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
    def.backend = RTCD_BACKEND_OPENCL;
    def.devices = "9:9";
    rtcd_batch* b = (rtcd_batch*)0x1;
    rtcd_error err = rtcd_batch_create(&def, &b);
    assert_null(b);
    if (err == RTCD_ERROR_UNSUPPORTED) {
        print_message("notice: this build has no OpenCL: OPENCL is refused with %s (%s)\n", rtcd_error_name(err),
                      rtcd_last_error_message());
        skip();
    }
    assert_int_equal(err, RTCD_ERROR_NO_DEVICE);
    assert_non_null(strstr(rtcd_last_error_message(), "9:9"));
    if (!test_opencl_available()) skip();
    /* "cpu" names no OpenCL device. */
    def.devices = "cpu";
    b = (rtcd_batch*)0x1;
    err = rtcd_batch_create(&def, &b);
    assert_true(err != RTCD_OK);
    assert_null(b);
    /* A real one: device stats, names. */
    def.devices = "0:0";
    rtcd_set_log(quiet_log, NULL);
    assert_int_equal(rtcd_batch_create(&def, &b), RTCD_OK);
    rtcd_set_log(NULL, NULL);
    assert_int_equal(rtcd_batch_backend(b), RTCD_BACKEND_OPENCL);
    assert_int_equal(rtcd_batch_device_count(b), 1);
    assert_int_equal(rtcd_batch_thread_count(b), 0);
    assert_true(strlen(rtcd_batch_device_name(b, 0)) > 0);
    rtcd_narrowphase_def got = rtcd_batch_def(b);
    assert_string_equal(got.devices, "0:0");
    rtcd_batch_release(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_standard_bvh),
        cmocka_unit_test(test_iterative_bvh),
        cmocka_unit_test(test_predictive_bvh),
        cmocka_unit_test(test_standard_brute_force),
        cmocka_unit_test(test_iterative_brute_force),
        cmocka_unit_test(test_predictive_brute_force),
        cmocka_unit_test(test_validation),
        cmocka_unit_test(test_set_def),
        cmocka_unit_test(test_nonfinite_pose),
        cmocka_unit_test(test_retain_release),
        cmocka_unit_test(test_auto),
        cmocka_unit_test(test_grazing_crossing_matches),
        cmocka_unit_test(test_opencl_selection),
        cmocka_unit_test(test_contacts_without_rays_match),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
