/* The OpenCL backend against the CPU reference, on whatever OpenCL devices
 * are present (PoCL in CI): same colliding rays, same reduced contacts, and
 * for the iterative algorithms the same passes and kept rays over a sequence
 * of poses. */
#include "test_util.h"

#include "cl_backend.h"
#include "mesh/mesh_layout.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rtcd_opencl* open_backend_with(rtcd_traversal traversal, uint32_t max_devices, const rtcd_iterative_def* idef)
{
    rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
    def.traversal = traversal;
    def.max_devices = max_devices;
    if (idef) def.iterative = *idef;
    /* These tests compare with the rays of the single-pair C API; edge and
     * deep contacts have no ray (the batch tests compare them between the
     * backends bit for bit), nor have speculative ones. */
    def.edge_crossings = def.deep_contacts = def.speculative = 0;
    rtcd_opencl* cl = NULL;
    rtcd_error err = rtcd_opencl_create(&def, NULL, &cl);
    if (err != RTCD_OK) fprintf(stderr, "%s: %s\n", rtcd_error_name(err), rtcd_last_error_message());
    assert_int_equal(err, RTCD_OK); /* CI installs PoCL: a missing device is a failure here */
    return cl;
}

static rtcd_opencl* open_backend(rtcd_traversal traversal, uint32_t max_devices)
{
    return open_backend_with(traversal, max_devices, NULL);
}

/* A tetrahedron in one BVH leaf: no 4-wide copy (bvh4.c), so the kernels'
 * 4-wide walk (CPU devices) leaves its rays to the binary walk. */
static rtcd_mesh* single_leaf_mesh(void)
{
    const float v[12] = {0.9f, 0.0f, -0.3f, -0.45f, 0.78f, -0.3f, -0.45f, -0.78f, -0.3f, 0.0f, 0.0f, 0.95f};
    const uint32_t idx[12] = {0, 2, 1, 0, 1, 3, 1, 2, 3, 2, 0, 3};
    rtcd_mesh_def def = rtcd_default_mesh_def();
    def.vertices = v;
    def.vertex_count = 4;
    def.indices = idx;
    def.triangle_count = 4;
    def.bvh_leaf_size = 15;
    def.name = "single-leaf tetrahedron";
    rtcd_mesh* m = NULL;
    assert_int_equal(rtcd_mesh_create(&def, &m), RTCD_OK);
    assert_null(m->bvh.nodes4);
    return m;
}

/* single_leaf: the second mesh is single_leaf_mesh(), beside two with a 4-wide copy. */
static void compare_batch(rtcd_traversal traversal, uint32_t max_devices, int single_leaf)
{
    rtcd_mesh* meshes[3] = {test_make_blob(RTCD_AVALANCHE_BLOB_VERTICES, 1.0f, 1),
                            single_leaf ? single_leaf_mesh() : test_make_blob(rtcd_spawner_mesh_vertices(1), 1.0f, 2),
                            test_make_blob(rtcd_spawner_mesh_vertices(3), 1.0f, 3)};
    enum { PAIRS = 120 };
    rtcd_pair_desc pairs[PAIRS];
    test_rng rng = {42};
    size_t total = 0;
    for (int i = 0; i < PAIRS; ++i) {
        pairs[i].a = meshes[test_rng_next(&rng) % 3];
        pairs[i].b = meshes[test_rng_next(&rng) % 3];
        pairs[i].pose_a = test_random_pose(&rng, 1.3f);
        pairs[i].pose_b = test_random_pose(&rng, 1.3f);
        pairs[i].key = (uint64_t)i;
        total += rtcd_mesh_vertex_count(pairs[i].a) + rtcd_mesh_vertex_count(pairs[i].b);
    }
    rtcd_opencl* cl = open_backend(traversal, max_devices);
    rtcd_pair_result* res = calloc(PAIRS, sizeof *res);
    rtcd_ray_hit* rays = calloc(total, sizeof *rays);
    assert_int_equal(rtcd_opencl_collide(cl, pairs, PAIRS, res, rays), RTCD_OK);
    /* Every pair really ran on the device (none past the on-chip ray store). */
    assert_int_equal(rtcd_opencl_last_stats(cl).cpu_fallback_pairs, 0);
    rtcd_narrowphase_def nd = rtcd_default_narrowphase_def();
    nd.traversal = traversal;
    nd.edge_crossings = nd.deep_contacts = nd.speculative = 0; /* as open_backend_with */
    size_t offset = 0;
    uint32_t colliding = 0, touching = 0;
    for (int i = 0; i < PAIRS; ++i) {
        uint32_t cap = rtcd_mesh_vertex_count(pairs[i].a) + rtcd_mesh_vertex_count(pairs[i].b), n = 0;
        rtcd_ray_hit* ref = calloc(cap, sizeof *ref);
        rtcd_contact* contacts = calloc(cap, sizeof *contacts);
        assert_int_equal(rtcd_collide_standard(&nd, pairs[i].a, &pairs[i].pose_a, pairs[i].b, &pairs[i].pose_b, ref,
                                               cap, &n, NULL),
                         RTCD_OK);
        /* The same colliding rays (the device writes them in any order). */
        assert_int_equal(res[i].colliding_rays, n);
        rtcd_ray_hit* got = rays + offset;
        qsort(got, n, sizeof *got, test_by_ray);
        /* Bit for bit: both run core/shared/pair.h. */
        for (uint32_t r = 0; r < n; ++r) assert_memory_equal(&got[r], &ref[r], sizeof got[r]);
        /* The same reduced contacts. */
        for (uint32_t r = 0; r < n; ++r) contacts[r] = rtcd_contact_from_ray(&ref[r], nd.contact_normal);
        rtcd_contact reduced[4];
        uint32_t m = rtcd_reduce_contacts(contacts, n, reduced);
        assert_int_equal(res[i].contact_count, m);
        for (uint32_t c = 0; c < m; ++c) assert_memory_equal(&res[i].contacts[c], &reduced[c], sizeof reduced[c]);
        colliding += n;
        touching += n > 0;
        offset += cap;
        free(ref);
        free(contacts);
    }
    print_message("%s, %u device(s) [%s]: %u pairs touching, %u colliding rays, all equal to the CPU reference\n",
                  traversal == RTCD_TRAVERSAL_BVH ? "stackless BVH" : "brute force", rtcd_opencl_device_count(cl),
                  rtcd_opencl_device_name(cl, 0), touching, colliding);
    assert_true(touching > 20 && touching < PAIRS && colliding > 1000); /* not vacuous */
    free(res);
    free(rays);
    rtcd_opencl_destroy(cl);
    for (int k = 0; k < 3; ++k) rtcd_mesh_release(meshes[k]);
}

static void test_bvh_matches_cpu(void** state)
{
    (void)state;
    compare_batch(RTCD_TRAVERSAL_BVH, 0, 0);
}

static void test_mesh_without_4wide_copy(void** state)
{
    (void)state;
    compare_batch(RTCD_TRAVERSAL_BVH, 1, 1);
}

static void test_brute_force_matches_cpu(void** state)
{
    (void)state;
    compare_batch(RTCD_TRAVERSAL_BRUTE_FORCE, 1, 0);
}

/* ---- the iterative algorithms over a sequence of poses ---- */

/* One pair of the sequence: b drifts and spins slowly against a, with a few
 * jumps; the CPU reference runs it with its own state. */
typedef struct moving_pair {
    rtcd_pair_desc desc;
    float toward[3];        /* unit, from a to b */
    float velocity[3];      /* of b, per step */
    float spin[3];          /* axis * angle of b, per step */
    rtcd_pair_state* state; /* the CPU reference's */
} moving_pair;

/* a at a random pose, b touching it `overlap` deep (bounding radii 0.5). */
static void place_pair(moving_pair* mp, test_rng* rng, const rtcd_mesh* a, const rtcd_mesh* b, uint64_t key,
                       float overlap)
{
    memset(mp, 0, sizeof *mp);
    mp->desc.a = a;
    mp->desc.b = b;
    mp->desc.key = key;
    mp->desc.pose_a = test_random_pose(rng, 2.0f);
    mp->desc.pose_b = test_random_pose(rng, 0.0f);
    float side[3];
    test_rng_unit_vector(rng, mp->toward);
    test_rng_unit_vector(rng, side);
    test_rng_unit_vector(rng, mp->spin);
    for (int k = 0; k < 3; ++k) {
        mp->desc.pose_b.translation[k] = mp->desc.pose_a.translation[k] + (1.0f - overlap) * mp->toward[k];
        mp->velocity[k] = -0.0006f * mp->toward[k] + 0.0004f * side[k]; /* closing in, sliding */
        mp->spin[k] *= 0.002f;
    }
    assert_int_equal(rtcd_pair_state_create(&mp->state), RTCD_OK);
}

static void move_pair(moving_pair* mp, float jump)
{
    for (int k = 0; k < 3; ++k) mp->desc.pose_b.translation[k] += mp->velocity[k] + jump * mp->toward[k];
    test_rotate_by(&mp->desc.pose_b, mp->spin);
}

typedef struct sequence_totals {
    uint32_t pair_steps, standard, iterative, walk_steps, kept_rays, predictions, colliding;
    uint32_t not_sent; /* pair passes no device ran: iterative passes with no kept rays (cl_plan.c) */
    uint32_t most; /* colliding rays of one pair in one step, at most */
} sequence_totals;

/* The device's result for one pair equals the CPU reference's
 * rtcd_collide_iterative on the same poses with the pair's own state. */
static void check_pair(const rtcd_narrowphase_def* nd, const rtcd_iterative_def* idef, moving_pair* mp,
                       const rtcd_pair_result* res, rtcd_ray_hit* got, sequence_totals* tot)
{
    const rtcd_pair_desc* p = &mp->desc;
    uint32_t cap = rtcd_mesh_vertex_count(p->a) + rtcd_mesh_vertex_count(p->b), n = 0;
    rtcd_ray_hit* ref = calloc(cap, sizeof *ref);
    rtcd_contact* contacts = calloc(cap, sizeof *contacts);
    assert_non_null(ref);
    assert_non_null(contacts);
    rtcd_narrowphase_stats st;
    assert_int_equal(test_collide_iterative(nd, idef, mp->state, p->a, &p->pose_a, p->b, &p->pose_b, ref, cap, &n,
                                            &st),
                     RTCD_OK);
    assert_int_equal(res->standard_pass, st.standard_pass);
    assert_int_equal(res->colliding_rays, n);
    assert_int_equal(res->kept_rays, st.kept_rays);
    assert_int_equal(res->kept_predictions, st.kept_predictions);
    assert_int_equal(res->predictive_rays, st.predictive_rays);
    assert_int_equal(res->walk_steps, st.walk_steps);
    qsort(ref, n, sizeof *ref, test_by_ray);
    qsort(got, n, sizeof *got, test_by_ray);
    double length = 0.0;
    for (uint32_t r = 0; r < n; ++r) {
        /* Bit for bit: both run core/shared/pair.h. */
        assert_memory_equal(&got[r], &ref[r], sizeof got[r]);
        length += ref[r].length;
        contacts[r] = rtcd_contact_from_ray(&ref[r], nd->contact_normal);
    }
    /* A statistic: the work-group kernel adds the lengths in another order. */
    assert_float_near(res->ray_length, length, 1e-4 * (1.0 + length));
    rtcd_contact reduced[4];
    uint32_t m = rtcd_reduce_contacts(contacts, n, reduced);
    assert_int_equal(res->contact_count, m);
    for (uint32_t c = 0; c < m; ++c) assert_memory_equal(&res->contacts[c], &reduced[c], sizeof reduced[c]);
    tot->pair_steps++;
    tot->standard += st.standard_pass;
    tot->iterative += !st.standard_pass && (st.kept_rays + st.kept_predictions + n) > 0;
    tot->walk_steps += st.walk_steps;
    tot->kept_rays += st.kept_rays;
    tot->predictions += st.kept_predictions;
    tot->colliding += n;
    if (n > tot->most) tot->most = n;
    free(ref);
    free(contacts);
}

/* One batch of the present pairs on the device, each checked against the CPU. */
static void run_step(rtcd_opencl* cl, const rtcd_narrowphase_def* nd, const rtcd_iterative_def* idef,
                     moving_pair* mps, const int* present, int count, sequence_totals* tot)
{
    rtcd_pair_desc* desc = calloc((size_t)count, sizeof *desc);
    rtcd_pair_result* res = calloc((size_t)count, sizeof *res);
    int* which = calloc((size_t)count, sizeof *which);
    size_t total = 0;
    int n = 0;
    for (int i = 0; i < count; ++i) {
        if (!present[i]) continue;
        which[n] = i;
        desc[n++] = mps[i].desc;
        total += rtcd_mesh_vertex_count(mps[i].desc.a) + rtcd_mesh_vertex_count(mps[i].desc.b);
    }
    rtcd_ray_hit* rays = calloc(total + 1, sizeof *rays);
    assert_int_equal(rtcd_opencl_collide(cl, desc, (uint32_t)n, res, rays), RTCD_OK);
    rtcd_batch_stats cs = rtcd_opencl_last_stats(cl);
    assert_int_equal(cs.cpu_fallback_pairs, 0);
    assert_int_equal(cs.state_resets, 0); /* every pair's kept rays fit */
    /* The runs the call went in: RTCD_CL_SEGMENTS (at most one per pair),
     * else one (a call this small, or a CPU device). */
    const char* segments = getenv("RTCD_CL_SEGMENTS");
    uint32_t want = segments ? (uint32_t)atoi(segments) : 1u;
    assert_int_equal(cs.segments, want < (uint32_t)n ? want : (uint32_t)n);
    uint32_t sent = 0;
    for (uint32_t d = 0; d < rtcd_opencl_device_count(cl) && d < 16; ++d) sent += cs.pairs_per_device[d];
    tot->not_sent += (uint32_t)n - sent;
    size_t offset = 0;
    for (int k = 0; k < n; ++k) {
        check_pair(nd, idef, &mps[which[k]], &res[k], rays + offset, tot);
        offset += rtcd_mesh_vertex_count(desc[k].a) + rtcd_mesh_vertex_count(desc[k].b);
    }
    free(desc);
    free(res);
    free(which);
    free(rays);
}

/* Sixty steps of six pairs (avalanche blobs, spawner meshes) with the
 * iterative algorithm `idef`: every step equals the CPU reference. */
static sequence_totals compare_sequence(rtcd_traversal traversal, uint32_t max_devices, const rtcd_iterative_def* idef)
{
    rtcd_mesh* meshes[3] = {test_make_blob(RTCD_AVALANCHE_BLOB_VERTICES, 0.5f, 1),
                            test_make_blob(rtcd_spawner_mesh_vertices(1), 0.5f, 2),
                            test_make_blob(rtcd_spawner_mesh_vertices(3), 0.5f, 3)};
    /* The last pair starts 5 cm apart: passes with nothing kept (answered
     * by the host, not run on a device) until it closes in. */
    enum { PAIRS = 7, STEPS = 60, AWAY = 3 };
    static const int mesh_a[PAIRS] = {0, 0, 1, 2, 0, 2, 1}, mesh_b[PAIRS] = {0, 0, 2, 1, 2, 2, 0};
    moving_pair mps[PAIRS];
    test_rng rng = {2013};
    for (int i = 0; i < PAIRS; ++i)
        place_pair(&mps[i], &rng, meshes[mesh_a[i]], meshes[mesh_b[i]], 1000u + (uint64_t)i,
                   i < PAIRS - 1 ? 0.12f + 0.02f * i : -0.05f);
    rtcd_opencl* cl = open_backend_with(traversal, max_devices, idef);
    rtcd_narrowphase_def nd = rtcd_default_narrowphase_def();
    nd.traversal = traversal;
    nd.edge_crossings = nd.deep_contacts = nd.speculative = 0; /* as open_backend_with */
    sequence_totals tot;
    memset(&tot, 0, sizeof tot);
    int present[PAIRS];
    for (int step = 0; step < STEPS; ++step) {
        for (int i = 0; i < PAIRS; ++i) present[i] = 1;
        /* Pair AWAY leaves the batch for a while (its CPU state goes, its
         * device slot is freed) and comes back under the same key. */
        if (step >= 30 && step < 34) {
            present[AWAY] = 0;
            rtcd_pair_state_reset(mps[AWAY].state);
        }
        run_step(cl, &nd, idef, mps, present, PAIRS, &tot);
        /* Fast moves now and then: those force standard passes. */
        float jump = step == 20 ? 0.03f : (step == 44 ? -0.04f : 0.0f);
        for (int i = 0; i < PAIRS; ++i) move_pair(&mps[i], i % 2 ? jump : 0.5f * jump);
    }
    /* A new algorithm resets every pair: all run a standard pass next. */
    rtcd_narrowphase_def changed = nd;
    changed.iterative = *idef;
    rtcd_opencl_set_def(cl, &changed);
    for (int i = 0; i < PAIRS; ++i) {
        present[i] = 1;
        rtcd_pair_state_reset(mps[i].state);
    }
    uint32_t standard_before = tot.standard;
    run_step(cl, &nd, idef, mps, present, PAIRS, &tot);
    assert_int_equal(tot.standard - standard_before, PAIRS);
    print_message("%s %s%s, %u device(s): %u pair-steps, %u standard passes, %u iterative passes (%u walk steps), "
                  "%u colliding rays, %u kept rays, %u kept predictions, %u passes not sent: all equal to the CPU "
                  "reference\n",
                  rtcd_algorithm_name(idef->algorithm), idef->adaptive ? "adaptive" : "fixed",
                  traversal == RTCD_TRAVERSAL_BVH ? ", BVH" : ", brute force", rtcd_opencl_device_count(cl),
                  tot.pair_steps, tot.standard, tot.iterative, tot.walk_steps, tot.colliding, tot.kept_rays,
                  tot.predictions, tot.not_sent);
    /* Not vacuous: both kinds of pass ran, rays collided and walked. The
     * adaptive iterative algorithm runs a standard pass once a pair moved
     * about 3 mm (issue 23), most steps of this sequence: fewer iterative
     * passes (its fixed-parameter runs walk as many as the others). */
    assert_true(tot.iterative >= (idef->algorithm == RTCD_ALGORITHM_ITERATIVE && idef->adaptive ? 1 : 3) * PAIRS);
    assert_true(tot.standard >= 3 * PAIRS);
    assert_true(tot.walk_steps > 0 && tot.colliding > 100);
    if (idef->algorithm == RTCD_ALGORITHM_PREDICTIVE) assert_true(tot.predictions > 0);
    /* The far pair's empty passes (the adaptive iterative algorithm runs
     * a standard pass most steps here, as above). */
    if (!(idef->algorithm == RTCD_ALGORITHM_ITERATIVE && idef->adaptive)) assert_true(tot.not_sent > 0);
    rtcd_opencl_destroy(cl);
    for (int i = 0; i < PAIRS; ++i) rtcd_pair_state_release(mps[i].state);
    for (int k = 0; k < 3; ++k) rtcd_mesh_release(meshes[k]);
    return tot;
}

static rtcd_iterative_def algorithm_def(rtcd_algorithm algorithm, int adaptive)
{
    rtcd_iterative_def def = rtcd_default_iterative_def();
    def.algorithm = algorithm;
    def.adaptive = adaptive;
    return def;
}

static void test_iterative_sequence_bvh(void** state)
{
    (void)state;
    rtcd_iterative_def def = algorithm_def(RTCD_ALGORITHM_ITERATIVE, 1);
    compare_sequence(RTCD_TRAVERSAL_BVH, 0, &def);
    def.adaptive = 0;
    compare_sequence(RTCD_TRAVERSAL_BVH, 0, &def);
}

static void test_predictive_sequence_bvh(void** state)
{
    (void)state;
    rtcd_iterative_def def = algorithm_def(RTCD_ALGORITHM_PREDICTIVE, 1);
    compare_sequence(RTCD_TRAVERSAL_BVH, 0, &def);
}

static void test_predictive_fixed_sequence_bvh(void** state)
{
    (void)state;
    rtcd_iterative_def def = algorithm_def(RTCD_ALGORITHM_PREDICTIVE, 0);
    compare_sequence(RTCD_TRAVERSAL_BVH, 0, &def);
}

static void test_iterative_sequence_brute_force(void** state)
{
    (void)state;
    rtcd_iterative_def def = algorithm_def(RTCD_ALGORITHM_ITERATIVE, 0);
    compare_sequence(RTCD_TRAVERSAL_BRUTE_FORCE, 1, &def);
}

static void test_predictive_sequence_brute_force(void** state)
{
    (void)state;
    rtcd_iterative_def def = algorithm_def(RTCD_ALGORITHM_PREDICTIVE, 1);
    compare_sequence(RTCD_TRAVERSAL_BRUTE_FORCE, 1, &def);
}

/* The work-group kernel (what GPUs run) on whatever device is here. */
static void test_predictive_sequence_group_kernel(void** state)
{
    (void)state;
    setenv("RTCD_CL_KERNEL", "group", 1);
    rtcd_iterative_def def = algorithm_def(RTCD_ALGORITHM_PREDICTIVE, 1);
    compare_sequence(RTCD_TRAVERSAL_BVH, 1, &def);
    def.algorithm = RTCD_ALGORITHM_ITERATIVE;
    def.adaptive = 0; /* its walks: adaptive, most steps of the sequence are standard passes */
    compare_sequence(RTCD_TRAVERSAL_BRUTE_FORCE, 1, &def);
    unsetenv("RTCD_CL_KERNEL");
}

/* The group kernel with room for 4 records on chip: nearly every touching
 * pair goes to the retry kernel, which must give the same results as the
 * CPU reference with no pair left to the host (run_step checks
 * cpu_fallback_pairs == 0). */
static void test_group_kernel_retries_on_device(void** state)
{
    (void)state;
    setenv("RTCD_CL_KERNEL", "group", 1);
    setenv("RTCD_CL_BUILD_OPTIONS", "-DRTCD_CL_GROUP_RAYS=4", 1); /* the backend's tuning hook */
    rtcd_iterative_def def = algorithm_def(RTCD_ALGORITHM_PREDICTIVE, 1);
    sequence_totals tot = compare_sequence(RTCD_TRAVERSAL_BVH, 1, &def);
    unsetenv("RTCD_CL_BUILD_OPTIONS");
    unsetenv("RTCD_CL_KERNEL");
    assert_true(tot.most > 4); /* not vacuous: pairs went past the first store */
}

/* A pair with a NULL mesh refuses the call, with or without rays, and names
 * the first such pair; the pairs' states stay (the next call's passes are
 * the same as without the refused call). */
static void test_null_mesh_refused(void** state)
{
    (void)state;
    rtcd_mesh* m = test_make_blob(RTCD_AVALANCHE_BLOB_VERTICES, 0.5f, 1);
    enum { PAIRS = 700 }; /* past one piece of the host's parallel lookup */
    moving_pair* mps = calloc(PAIRS, sizeof *mps);
    rtcd_pair_desc* desc = calloc(PAIRS, sizeof *desc);
    rtcd_pair_result* res = calloc(PAIRS, sizeof *res);
    test_rng rng = {31};
    for (int i = 0; i < PAIRS; ++i) {
        place_pair(&mps[i], &rng, m, m, 9000u + (uint64_t)i, 0.1f);
        desc[i] = mps[i].desc;
    }
    rtcd_iterative_def def = algorithm_def(RTCD_ALGORITHM_ITERATIVE, 1);
    rtcd_opencl* cl = open_backend_with(RTCD_TRAVERSAL_BVH, 1, &def);
    assert_int_equal(rtcd_opencl_collide(cl, desc, PAIRS, res, NULL), RTCD_OK);
    uint32_t standard = 0;
    for (int i = 0; i < PAIRS; ++i) standard += res[i].standard_pass;
    assert_int_equal(standard, PAIRS); /* the first call: every pair's first pass */
    desc[600].b = NULL;
    desc[650].a = NULL;
    assert_int_equal(rtcd_opencl_collide(cl, desc, PAIRS, res, NULL), RTCD_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(rtcd_last_error_message(), "pair 600 has a NULL mesh"));
    size_t room = (size_t)PAIRS * 2u * rtcd_mesh_vertex_count(m);
    rtcd_ray_hit* rays = calloc(room, sizeof *rays);
    assert_int_equal(rtcd_opencl_collide(cl, desc, PAIRS, res, rays), RTCD_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(rtcd_last_error_message(), "pair 600 has a NULL mesh"));
    desc[600].b = desc[650].a = m;
    assert_int_equal(rtcd_opencl_collide(cl, desc, PAIRS, res, NULL), RTCD_OK);
    standard = 0;
    for (int i = 0; i < PAIRS; ++i) standard += res[i].standard_pass;
    assert_true(standard < PAIRS / 2); /* the states stayed: the pairs, unmoved, walk their kept rays */
    rtcd_opencl_destroy(cl);
    for (int i = 0; i < PAIRS; ++i) rtcd_pair_state_release(mps[i].state);
    free(rays);
    free(res);
    free(desc);
    free(mps);
    rtcd_mesh_release(m);
}

/* Many pairs coming and going: the device's kept-ray arenas grow with the
 * pairs (the rays a call walks stay where the last call wrote them), and
 * pairs that leave and arrive change every other pair's place in them. */
static void grow_and_recycle(void)
{
    rtcd_mesh* m = test_make_blob(RTCD_AVALANCHE_BLOB_VERTICES, 0.5f, 1);
    enum { PAIRS = 90, STEPS = 14 };
    moving_pair* mps = calloc(PAIRS, sizeof *mps);
    test_rng rng = {77};
    for (int i = 0; i < PAIRS; ++i) place_pair(&mps[i], &rng, m, m, 5000u + (uint64_t)i, 0.15f);
    rtcd_iterative_def def = algorithm_def(RTCD_ALGORITHM_PREDICTIVE, 0);
    rtcd_opencl* cl = open_backend_with(RTCD_TRAVERSAL_BVH, 1, &def);
    rtcd_narrowphase_def nd = rtcd_default_narrowphase_def();
    nd.edge_crossings = nd.deep_contacts = nd.speculative = 0; /* as open_backend_with */
    sequence_totals tot;
    memset(&tot, 0, sizeof tot);
    int present[PAIRS];
    for (int step = 0; step < STEPS; ++step) {
        /* 60 pairs keep rays; 20 more arrive at step 3 (the arenas grow), 20
         * leave at step 8 and the last 10 arrive at step 9. */
        for (int i = 0; i < PAIRS; ++i) {
            present[i] = i < 60 || (i < 80 && step >= 3) || (i >= 80 && step >= 9);
            if (i < 20 && step >= 8) present[i] = 0;
        }
        run_step(cl, &nd, &def, mps, present, PAIRS, &tot);
        for (int i = 0; i < PAIRS; ++i) move_pair(&mps[i], 0.0f);
    }
    print_message("%u pair-steps, %u iterative passes, pairs coming and going: all equal to the CPU reference\n",
                  tot.pair_steps, tot.iterative);
    assert_true(tot.iterative > 300);
    rtcd_opencl_destroy(cl);
    for (int i = 0; i < PAIRS; ++i) rtcd_pair_state_release(mps[i].state);
    free(mps);
    rtcd_mesh_release(m);
}

static void test_state_slots_grow_and_recycle(void** state)
{
    (void)state;
    grow_and_recycle();
}

/* A call in segments, each sent to the devices once planned (what a GPU
 * gets at a few thousand pairs; RTCD_CL_SEGMENTS forces it here, 3 runs
 * of the 6-7 pairs): the kernels start at the segment's first slot, a
 * kept-ray arena that grows in a later segment keeps what the earlier ones
 * wrote (copied on the device's queue), the retry kernel runs the pairs of
 * every segment; all as the CPU reference, on both kernels. */
static void test_segments_match_cpu(void** state)
{
    (void)state;
    setenv("RTCD_CL_SEGMENTS", "3", 1);
    rtcd_iterative_def def = algorithm_def(RTCD_ALGORITHM_PREDICTIVE, 1);
    compare_sequence(RTCD_TRAVERSAL_BVH, 1, &def);
    grow_and_recycle();
    setenv("RTCD_CL_KERNEL", "group", 1);
    compare_sequence(RTCD_TRAVERSAL_BVH, 1, &def);
    grow_and_recycle();
    setenv("RTCD_CL_BUILD_OPTIONS", "-DRTCD_CL_GROUP_RAYS=4", 1);
    sequence_totals tot = compare_sequence(RTCD_TRAVERSAL_BVH, 1, &def);
    assert_true(tot.most > 4); /* pairs went to the retry kernel */
    unsetenv("RTCD_CL_BUILD_OPTIONS");
    unsetenv("RTCD_CL_KERNEL");
    unsetenv("RTCD_CL_SEGMENTS");
}

/* A pair keeping more rays than a pair may keep on its device: that call's result
 * is still whole, and the pair runs a standard pass next (it never walks a
 * partial set of rays). */
static void test_state_overflow_forces_standard_pass(void** state)
{
    (void)state;
    rtcd_mesh* m = test_make_blob(rtcd_spawner_mesh_vertices(3), 0.5f, 3);
    moving_pair mp;
    test_rng rng = {5};
    place_pair(&mp, &rng, m, m, 9, 0.7f); /* deep: most vertices collide */
    rtcd_iterative_def def = algorithm_def(RTCD_ALGORITHM_ITERATIVE, 0);
    rtcd_opencl* cl = open_backend_with(RTCD_TRAVERSAL_BVH, 1, &def);
    rtcd_narrowphase_def nd = rtcd_default_narrowphase_def();
    nd.edge_crossings = nd.deep_contacts = nd.speculative = 0; /* as open_backend_with */
    uint32_t cap = 2 * rtcd_mesh_vertex_count(m), n = 0;
    rtcd_ray_hit* got = calloc(cap, sizeof *got);
    rtcd_ray_hit* ref = calloc(cap, sizeof *ref);
    for (int step = 0; step < 3; ++step) {
        rtcd_pair_result res;
        assert_int_equal(rtcd_opencl_collide(cl, &mp.desc, 1, &res, got), RTCD_OK);
        rtcd_batch_stats cs = rtcd_opencl_last_stats(cl);
        /* Every call is a standard pass, equal to the standard algorithm. */
        assert_int_equal(res.standard_pass, 1);
        assert_int_equal(cs.state_resets, 1);
        assert_int_equal(rtcd_collide_standard(&nd, m, &mp.desc.pose_a, m, &mp.desc.pose_b, ref, cap, &n, NULL),
                         RTCD_OK);
        assert_true(n > 1024);
        assert_int_equal(res.colliding_rays, n);
        if (cs.cpu_fallback_pairs == 0) assert_int_equal(res.kept_rays, n);
        qsort(ref, n, sizeof *ref, test_by_ray);
        qsort(got, n, sizeof *got, test_by_ray);
        for (uint32_t r = 0; r < n; ++r) {
            assert_int_equal(got[r].vertex, ref[r].vertex);
            assert_int_equal(got[r].triangle, ref[r].triangle);
        }
        if (step == 0)
            print_message("%u colliding rays: past the %d a pair keeps, %s; the next call is a standard pass again\n", n,
                          1024, cs.cpu_fallback_pairs ? "computed on the CPU" : "whole from the device");
        move_pair(&mp, 0.0f);
    }
    free(got);
    free(ref);
    rtcd_opencl_destroy(cl);
    rtcd_pair_state_release(mp.state);
    rtcd_mesh_release(m);
}

/* A kernel source broken on purpose: the error carries the build log. */
static void test_broken_kernel_reports_build_log(void** state)
{
    (void)state;
    rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
    rtcd_opencl* cl = (rtcd_opencl*)0x1;
    assert_int_equal(rtcd_opencl_create(&def, "__kernel void broken(void) { this is not OpenCL; }", &cl),
                     RTCD_ERROR_KERNEL_BUILD);
    assert_null(cl);
    const char* msg = rtcd_last_error_message();
    print_message("build failure reported as: %.160s...\n", msg);
    assert_non_null(strstr(msg, "build log"));
    assert_non_null(strstr(msg, "error")); /* the compiler's own words */
}

static void test_selection(void** state)
{
    (void)state;
    rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
    rtcd_opencl* cl = NULL;
    def.devices = "cpu";
    assert_int_equal(rtcd_opencl_create(&def, NULL, &cl), RTCD_ERROR_UNSUPPORTED);
    def.devices = "9:9";
    assert_int_equal(rtcd_opencl_create(&def, NULL, &cl), RTCD_ERROR_NO_DEVICE);
    assert_non_null(strstr(rtcd_last_error_message(), "9:9"));
    def.devices = "0:0";
    assert_int_equal(rtcd_opencl_create(&def, NULL, &cl), RTCD_OK);
    assert_int_equal(rtcd_opencl_device_count(cl), 1);
    rtcd_opencl_destroy(cl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bvh_matches_cpu),
        cmocka_unit_test(test_mesh_without_4wide_copy),
        cmocka_unit_test(test_brute_force_matches_cpu),
        cmocka_unit_test(test_iterative_sequence_bvh),
        cmocka_unit_test(test_predictive_sequence_bvh),
        cmocka_unit_test(test_predictive_fixed_sequence_bvh),
        cmocka_unit_test(test_iterative_sequence_brute_force),
        cmocka_unit_test(test_predictive_sequence_brute_force),
        cmocka_unit_test(test_predictive_sequence_group_kernel),
        cmocka_unit_test(test_group_kernel_retries_on_device),
        cmocka_unit_test(test_null_mesh_refused),
        cmocka_unit_test(test_state_slots_grow_and_recycle),
        cmocka_unit_test(test_segments_match_cpu),
        cmocka_unit_test(test_state_overflow_forces_standard_pass),
        cmocka_unit_test(test_broken_kernel_reports_build_log),
        cmocka_unit_test(test_selection),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
