/* The body form of a batch call (rtcd_batch_collide_bodies: each body's
 * mesh and poses once, pairs naming two bodies) against the pair form
 * (rtcd_batch_collide, itself checked against the single-pair API in
 * test_batch): a small moving pile of bodies whose pairs come and go gives
 * the same results and rays bit for bit in both forms, on the CPU reference
 * and on OpenCL (each kernel in both forms, where a device is present), for
 * the three algorithms. Then the refusals (a body index past the call's bodies, a NULL
 * mesh) and a body with a non-finite pose (its pairs get nothing, the
 * others run as without it). */
#include "test_util.h"

#include <rtcd/rtcd_batch.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BODIES = 14, MAX_PAIRS = BODIES * (BODIES - 1) / 2, STEPS = 24 };

typedef struct pile {
    rtcd_mesh* meshes[3];
    rtcd_body_desc bodies[BODIES];
    float velocity[BODIES][3]; /* per step */
    float spin[BODIES][3];     /* axis * angle, per step */
} pile;

/* Blobs of bounding radius 0.5 in a 1.6 m cube, drifting together: many
 * pairs whose boxes overlap, and some that start or stop overlapping. */
static void pile_init(pile* p)
{
    memset(p, 0, sizeof *p);
    for (int m = 0; m < 3; ++m) p->meshes[m] = test_make_blob(RTCD_AVALANCHE_BLOB_VERTICES, 0.5f, 11 + (uint64_t)m);
    test_rng rng = {77};
    for (int i = 0; i < BODIES; ++i) {
        rtcd_body_desc* b = &p->bodies[i];
        b->mesh = p->meshes[i % 3];
        b->pose = test_random_pose(&rng, 0.8f);
        test_rng_unit_vector(&rng, p->velocity[i]);
        test_rng_unit_vector(&rng, p->spin[i]);
        for (int k = 0; k < 3; ++k) {
            p->velocity[i][k] = -0.0008f * b->pose.translation[k] + 0.0004f * p->velocity[i][k]; /* towards the middle */
            p->spin[i][k] *= 0.0005f;
        }
    }
}

static void pile_free(pile* p)
{
    for (int m = 0; m < 3; ++m) rtcd_mesh_release(p->meshes[m]);
}

/* The pose one step back along the body's velocity (has_back for every
 * third body but the first, so some pairs have both backs and some one). */
static void pile_backs(pile* p)
{
    for (int i = 0; i < BODIES; ++i) {
        rtcd_body_desc* b = &p->bodies[i];
        b->has_back = i % 3 != 0;
        b->back = b->pose;
        for (int k = 0; k < 3; ++k) b->back.translation[k] -= p->velocity[i][k];
    }
}

static void pile_advance(pile* p)
{
    for (int i = 0; i < BODIES; ++i) {
        for (int k = 0; k < 3; ++k) p->bodies[i].pose.translation[k] += p->velocity[i][k];
        test_rotate_by(&p->bodies[i].pose, p->spin[i]);
    }
    pile_backs(p);
}

/* The step's pairs: bodies whose centres are within 1.1 m, in an order
 * that changes every third step; a few bodies sit out some steps. */
static uint32_t pile_pairs(const pile* p, int step, rtcd_body_pair* out)
{
    uint32_t n = 0;
    for (uint32_t a = 0; a < BODIES; ++a)
        for (uint32_t b = a + 1; b < BODIES; ++b) {
            if ((a == 4 || b == 4) && step % 5 == 2) continue;
            float d2 = 0.0f;
            for (int k = 0; k < 3; ++k) {
                float d = p->bodies[a].pose.translation[k] - p->bodies[b].pose.translation[k];
                d2 += d * d;
            }
            if (d2 > 1.1f * 1.1f) continue;
            rtcd_body_pair* q = &out[n++];
            q->a = (a + b) % 3 ? a : b; /* some the other way round */
            q->b = (a + b) % 3 ? b : a;
            q->motion = (a + b) % 4 == 0 ? 0.01f : 0.0f;
            q->key = (uint64_t)a * BODIES + b;
        }
    if (step % 3 == 1)
        for (uint32_t i = 0; i + 1 < n; i += 2) {
            rtcd_body_pair t = out[i];
            out[i] = out[i + 1];
            out[i + 1] = t;
        }
    return n;
}

/* The same pairs in the pair form. */
static void as_descs(const rtcd_body_desc* bodies, const rtcd_body_pair* pairs, uint32_t n, rtcd_pair_desc* out)
{
    for (uint32_t i = 0; i < n; ++i) {
        const rtcd_body_desc *a = &bodies[pairs[i].a], *b = &bodies[pairs[i].b];
        memset(&out[i], 0, sizeof out[i]);
        out[i].a = a->mesh;
        out[i].b = b->mesh;
        out[i].pose_a = a->pose;
        out[i].pose_b = b->pose;
        out[i].key = pairs[i].key;
        out[i].motion = pairs[i].motion;
        out[i].has_back = a->has_back && b->has_back;
        out[i].back_a = a->back;
        out[i].back_b = b->back;
    }
}

static size_t call_rays(const rtcd_pair_desc* descs, uint32_t n)
{
    size_t room = 0;
    for (uint32_t i = 0; i < n; ++i) room += rtcd_mesh_vertex_count(descs[i].a) + rtcd_mesh_vertex_count(descs[i].b);
    return room;
}

/* Pair i's rays sorted (they come in no particular order). */
static void sort_call_rays(const rtcd_pair_desc* descs, uint32_t n, const rtcd_pair_result* res, rtcd_ray_hit* rays)
{
    size_t at = 0;
    for (uint32_t i = 0; i < n; ++i) {
        qsort(rays + at, res[i].colliding_rays, sizeof *rays, test_by_ray);
        at += rtcd_mesh_vertex_count(descs[i].a) + rtcd_mesh_vertex_count(descs[i].b);
    }
}

static void quiet_log(rtcd_log_level level, const char* message, void* user)
{
    (void)user;
    if (level == RTCD_LOG_ERROR) fprintf(stderr, "%s\n", message);
}

/* `bodies_batch` in the body form and `pairs_batch` in the pair form over
 * the pile's steps: the same results and rays, bit for bit. */
static uint32_t same_in_both_forms(rtcd_batch* bodies_batch, rtcd_batch* pairs_batch, const char* what)
{
    pile p;
    pile_init(&p);
    pile_backs(&p);
    rtcd_body_pair pairs[MAX_PAIRS];
    rtcd_pair_desc descs[MAX_PAIRS];
    rtcd_pair_result got[MAX_PAIRS], want[MAX_PAIRS];
    uint32_t most = 0, fewest = MAX_PAIRS, contacts = 0, walked = 0;
    for (int step = 0; step < STEPS; ++step) {
        uint32_t n = pile_pairs(&p, step, pairs);
        as_descs(p.bodies, pairs, n, descs);
        size_t room = call_rays(descs, n);
        rtcd_ray_hit* rays_got = test_malloc((room + 1) * sizeof *rays_got);
        rtcd_ray_hit* rays_want = test_malloc((room + 1) * sizeof *rays_want);
        assert_int_equal(rtcd_batch_collide_bodies(bodies_batch, p.bodies, BODIES, pairs, n, got, rays_got), RTCD_OK);
        assert_int_equal(rtcd_batch_collide(pairs_batch, descs, n, want, rays_want), RTCD_OK);
        sort_call_rays(descs, n, got, rays_got);
        sort_call_rays(descs, n, want, rays_want);
        size_t at = 0;
        for (uint32_t i = 0; i < n; ++i) {
            char where[160];
            snprintf(where, sizeof where, "%s, step %d, pair %u (bodies %u, %u)", what, step, i, pairs[i].a, pairs[i].b);
            test_same_result(where, &want[i], &got[i], 1);
            test_same_rays(where, rays_want + at, rays_got + at, want[i].colliding_rays);
            at += rtcd_mesh_vertex_count(descs[i].a) + rtcd_mesh_vertex_count(descs[i].b);
            contacts += got[i].contact_count;
            walked += !got[i].standard_pass;
        }
        most = n > most ? n : most;
        fewest = n < fewest ? n : fewest;
        test_free(rays_got);
        test_free(rays_want);
        pile_advance(&p);
    }
    printf("%s: %d steps, %u to %u pairs a step, %u contacts, %u kept-ray passes, the same in both forms\n", what,
           STEPS, fewest, most, contacts, walked);
    /* The scene is what it claims: pairs came and went, and touched. */
    assert_true(fewest < most && contacts > 0);
    pile_free(&p);
    return walked;
}

static rtcd_batch* make_batch(rtcd_backend backend, rtcd_algorithm algorithm, const char* kernel)
{
    rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
    def.backend = backend;
    def.threads = 2;
    def.max_devices = 1;
    def.iterative.algorithm = algorithm;
    return test_create_batch(&def, kernel);
}

static void test_forms_agree(void** state)
{
    (void)state;
    rtcd_set_log(quiet_log, NULL);
    static const rtcd_algorithm algorithms[] = {RTCD_ALGORITHM_STANDARD, RTCD_ALGORITHM_ITERATIVE,
                                                RTCD_ALGORITHM_PREDICTIVE};
    static const char* names[] = {"standard", "iterative", "predictive"};
    int opencl = test_opencl_available();
    if (!opencl) printf("no OpenCL device: the CPU reference only\n");
    for (int a = 0; a < 3; ++a) {
        char what[96];
        rtcd_batch* cpu_bodies = make_batch(RTCD_BACKEND_CPU, algorithms[a], NULL);
        rtcd_batch* cpu_pairs = make_batch(RTCD_BACKEND_CPU, algorithms[a], NULL);
        snprintf(what, sizeof what, "CPU, %s", names[a]);
        uint32_t walked = same_in_both_forms(cpu_bodies, cpu_pairs, what);
        /* The iterative algorithms walked kept rays: the pairs' states followed their keys. */
        assert_true(algorithms[a] == RTCD_ALGORITHM_STANDARD ? walked == 0 : walked > 0);
        rtcd_batch_release(cpu_bodies);
        for (int k = 0; k < 2 && opencl; ++k) {
            /* The same kernel in both forms (the work counts too: the CPU
             * reference skips rays the kernels cast, test_util.h). */
            const char* kernel = k ? "group" : "serial";
            rtcd_batch* cl_bodies = make_batch(RTCD_BACKEND_OPENCL, algorithms[a], kernel);
            rtcd_batch* cl_pairs = make_batch(RTCD_BACKEND_OPENCL, algorithms[a], kernel);
            snprintf(what, sizeof what, "OpenCL %s kernel, %s", kernel, names[a]);
            same_in_both_forms(cl_bodies, cl_pairs, what);
            rtcd_batch_release(cl_bodies);
            rtcd_batch_release(cl_pairs);
        }
        rtcd_batch_release(cpu_pairs);
    }
    rtcd_set_log(NULL, NULL);
}

static void refusals_on(rtcd_backend backend)
{
    pile p;
    pile_init(&p);
    rtcd_batch* b = make_batch(backend, RTCD_ALGORITHM_PREDICTIVE, NULL);
    rtcd_body_pair pairs[MAX_PAIRS];
    rtcd_pair_result res[MAX_PAIRS];
    uint32_t n = pile_pairs(&p, 0, pairs);
    assert_true(n > 2);
    /* A body index past the call's bodies. */
    rtcd_body_pair keep = pairs[1];
    pairs[1].b = BODIES;
    assert_int_equal(rtcd_batch_collide_bodies(b, p.bodies, BODIES, pairs, n, res, NULL), RTCD_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(rtcd_last_error_message(), "pair 1 names body 14"));
    pairs[1] = keep;
    /* Fewer bodies than the pairs name. */
    assert_int_equal(rtcd_batch_collide_bodies(b, p.bodies, 3, pairs, n, res, NULL), RTCD_ERROR_INVALID_ARGUMENT);
    /* A NULL mesh on a body that pair 0 names refuses the call; on a body
     * no pair names (one more at the end) it is never read. */
    uint32_t named = pairs[0].b;
    const rtcd_mesh* m = p.bodies[named].mesh;
    p.bodies[named].mesh = NULL;
    assert_int_equal(rtcd_batch_collide_bodies(b, p.bodies, BODIES, pairs, n, res, NULL), RTCD_ERROR_INVALID_ARGUMENT);
    char expect[64];
    snprintf(expect, sizeof expect, "pair 0 names body %u, which has a NULL mesh", named);
    assert_non_null(strstr(rtcd_last_error_message(), expect));
    p.bodies[named].mesh = m;
    rtcd_body_desc more[BODIES + 1];
    memcpy(more, p.bodies, sizeof p.bodies);
    memset(&more[BODIES], 0, sizeof more[BODIES]);
    more[BODIES].pose = p.bodies[0].pose;
    assert_int_equal(rtcd_batch_collide_bodies(b, more, BODIES + 1, pairs, n, res, NULL), RTCD_OK);
    /* NULL arrays. */
    assert_int_equal(rtcd_batch_collide_bodies(b, NULL, BODIES, pairs, n, res, NULL), RTCD_ERROR_INVALID_ARGUMENT);
    assert_int_equal(rtcd_batch_collide_bodies(b, p.bodies, BODIES, NULL, n, res, NULL), RTCD_ERROR_INVALID_ARGUMENT);
    /* Nothing to do is fine, and so are bodies without pairs. */
    assert_int_equal(rtcd_batch_collide_bodies(b, NULL, 0, NULL, 0, NULL, NULL), RTCD_OK);
    assert_int_equal(rtcd_batch_collide_bodies(b, p.bodies, BODIES, pairs, 0, res, NULL), RTCD_OK);
    /* After the refusals the batch works. */
    assert_int_equal(rtcd_batch_collide_bodies(b, p.bodies, BODIES, pairs, n, res, NULL), RTCD_OK);
    rtcd_batch_release(b);
    pile_free(&p);
}

/* check on the CPU reference, then on OpenCL where a device is present. */
static void on_each_backend(void (*check)(rtcd_backend))
{
    rtcd_set_log(quiet_log, NULL);
    check(RTCD_BACKEND_CPU);
    if (test_opencl_available()) check(RTCD_BACKEND_OPENCL);
    rtcd_set_log(NULL, NULL);
}

static void test_refusals(void** state)
{
    (void)state;
    on_each_backend(refusals_on);
}

typedef struct warnings {
    int count;
    char last[256];
} warnings;

static void count_warnings(rtcd_log_level level, const char* message, void* user)
{
    warnings* w = user;
    if (level != RTCD_LOG_WARNING) return;
    w->count++;
    snprintf(w->last, sizeof w->last, "%s", message);
}

/* Body 6's pose goes to NaN for one step: its pairs get zeroed results and
 * the call one warning; every other pair's result is what a call without
 * body 6's pairs gives. */
static void nonfinite_body_on(rtcd_backend backend)
{
    pile p;
    pile_init(&p);
    pile_backs(&p);
    rtcd_batch* b = make_batch(backend, RTCD_ALGORITHM_STANDARD, NULL);
    rtcd_batch* reference = make_batch(backend, RTCD_ALGORITHM_STANDARD, NULL);
    rtcd_body_pair pairs[MAX_PAIRS], others[MAX_PAIRS];
    rtcd_pair_result res[MAX_PAIRS], want[MAX_PAIRS];
    for (int i = 0; i < 8; ++i) pile_advance(&p); /* drawn together: body 6 has pairs */
    uint32_t n = pile_pairs(&p, 0, pairs), m = 0, touched = 0;
    for (uint32_t i = 0; i < n; ++i)
        if (pairs[i].a != 6 && pairs[i].b != 6) others[m++] = pairs[i];
    assert_true(m < n && m > 0);
    p.bodies[6].pose.translation[1] = NAN;
    warnings w = {0, ""};
    rtcd_set_log(count_warnings, &w);
    assert_int_equal(rtcd_batch_collide_bodies(b, p.bodies, BODIES, pairs, n, res, NULL), RTCD_OK);
    rtcd_set_log(quiet_log, NULL);
    assert_int_equal(w.count, 1);
    assert_non_null(strstr(w.last, "non-finite pose"));
    assert_int_equal(rtcd_batch_collide_bodies(reference, p.bodies, BODIES, others, m, want, NULL), RTCD_OK);
    rtcd_pair_result zero;
    memset(&zero, 0, sizeof zero);
    for (uint32_t i = 0, k = 0; i < n; ++i) {
        char where[96];
        snprintf(where, sizeof where, "non-finite body 6, pair %u", i);
        if (pairs[i].a == 6 || pairs[i].b == 6) {
            assert_memory_equal(&res[i], &zero, sizeof zero);
        } else {
            test_same_result(where, &want[k++], &res[i], 1);
            touched += res[i].contact_count > 0;
        }
    }
    assert_true(touched > 0);
    rtcd_set_log(NULL, NULL);
    rtcd_batch_release(b);
    rtcd_batch_release(reference);
    pile_free(&p);
}

static void test_nonfinite_body(void** state)
{
    (void)state;
    on_each_backend(nonfinite_body_on);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forms_agree),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_nonfinite_body),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
