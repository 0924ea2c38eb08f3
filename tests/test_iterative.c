/* The iterative and predictive algorithms (IRTCD) against the standard
 * algorithm on the same poses, the walk against brute force, the predictive
 * candidate grid against exact distances, and the adaptive parameters. */
#include "test_util.h"
#include "scene_util.h"

#include <rtcd/rtcd_iterative.h>
#include <rtcd/rtcd_query.h>

#include "mesh/mesh_internal.h"
#include "narrowphase/pair_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rtcd_mesh* blob(void) { return test_make_blob(453, 0.5f, 7); }

static rtcd_ray_hit* ray_buffer(const rtcd_mesh* a, const rtcd_mesh* b, uint32_t* cap)
{
    *cap = rtcd_mesh_vertex_count(a) + rtcd_mesh_vertex_count(b);
    rtcd_ray_hit* r = calloc(*cap, sizeof *r);
    assert_non_null(r);
    return r;
}

/* Rotation about z by `angle`, about x by `tilt`, then a translation. */
static rtcd_transform pose_of(float angle, float tilt, float x, float y, float z)
{
    rtcd_transform t = rtcd_transform_identity();
    float c = cosf(angle), s = sinf(angle), ct = cosf(tilt), st = sinf(tilt);
    /* Rz * Rx */
    float r[9] = {c, -s * ct, s * st, s, c * ct, -c * st, 0.0f, st, ct};
    memcpy(t.rotation, r, sizeof r);
    t.translation[0] = x, t.translation[1] = y, t.translation[2] = z;
    return t;
}

/* The walk from a triangle near the true hit reaches a triangle the line
 * crosses, with the brute-force t. */
static void test_walk_finds_the_brute_force_hit(void** state)
{
    (void)state;
    rtcd_mesh* m = blob();
    test_rng rng = {11};
    uint32_t found = 0, tried = 0;
    for (int k = 0; k < 2000; ++k) {
        float o[3], d[3];
        test_rng_unit_vector(&rng, d);
        for (int i = 0; i < 3; ++i) o[i] = (float)test_rng_range(&rng, -0.2, 0.2);
        rtcd_ray ray = {{o[0], o[1], o[2]}, {d[0], d[1], d[2]}, 0.0f, 1e30f, RTCD_INVALID};
        rtcd_hit hit;
        assert_true(rtcd_mesh_first_hit(m, &ray, RTCD_TRAVERSAL_BRUTE_FORCE, &hit)); /* from inside: always */
        /* Start two edges away from the hit triangle. */
        uint32_t start = hit.triangle;
        for (int hop = 0; hop < 2; ++hop) start = m->neighbors[3 * start + (uint32_t)(test_rng_next(&rng) % 3)];
        uint32_t tri = start, steps = 0;
        float t = 0.0f;
        int r = walk_ray(m->vertices, m->indices, m->neighbors, m->triangle_normals, v3(o[0], o[1], o[2]),
                         v3(d[0], d[1], d[2]), 16, 0, 0.0f, &tri, &t, &steps);
        tried++;
        assert_true(steps >= 1 && steps <= 16);
        if (r != RTCD_WALK_HIT) continue;
        found++;
        /* The ray from inside exits a convex-enough blob once: same triangle or a shared edge, same t. */
        assert_float_near(t, hit.t, 1e-4f);
    }
    /* A two-edge start point is found almost always within 16 tests. */
    assert_true(found >= tried * 95 / 100);
    rtcd_mesh_release(m);
}

/* grid_may_be_near never rejects an outside point within the distance
 * (exact closest point), for the exact near grid and for the deformable
 * meshes' cheap bound (RTCD_MESH_DEFORMABLE: a blob made so, and one made
 * so by an update); both reject most points farther than the distance. */
static uint32_t near_grid_check(const rtcd_mesh* m, const char* what, uint32_t* far_out)
{
    test_rng rng = {5};
    uint32_t rejected = 0, far = 0;
    for (int k = 0; k < 20000; ++k) {
        float p[3];
        for (int i = 0; i < 3; ++i) p[i] = (float)test_rng_range(&rng, -0.8, 0.8);
        float dist = (float)test_rng_range(&rng, 0.0, 0.15);
        int inside = rtcd_mesh_contains_point(m, p);
        float surface = rtcd_mesh_closest_point(m, p, NULL, NULL);
        int near = rtcd_mesh_may_be_near(m, v3(p[0], p[1], p[2]), dist);
        if (!inside && surface <= dist) assert_true(near);
        rejected += !near;
        far += !inside && surface > dist;
    }
    printf("near grid (%s): rejects %u of %u outside points farther than the distance\n", what, rejected, far);
    *far_out = far;
    return rejected;
}

static void test_near_grid_is_conservative(void** state)
{
    (void)state;
    rtcd_mesh* m = blob();
    uint32_t far, rejected = near_grid_check(m, "exact", &far);
    assert_true(rejected >= far * 8 / 10); /* and it is sharp */
    /* The same blob deformable, from creation and by an update to its own vertices. */
    rtcd_mesh_def def = rtcd_default_mesh_def();
    def.vertices = rtcd_mesh_vertices(m);
    def.vertex_count = rtcd_mesh_vertex_count(m);
    def.indices = rtcd_mesh_indices(m);
    def.triangle_count = rtcd_mesh_triangle_count(m);
    def.flags = RTCD_MESH_DEFORMABLE;
    rtcd_mesh* d = NULL;
    assert_int_equal(rtcd_mesh_create(&def, &d), RTCD_OK);
    rejected = near_grid_check(d, "deformable", &far);
    assert_true(rejected >= far * 6 / 10);
    assert_int_equal(rtcd_mesh_update_vertices(m, rtcd_mesh_vertices(d), 0), RTCD_OK);
    near_grid_check(m, "updated", &far);
    rtcd_mesh_release(d);
    rtcd_mesh_release(m);
}

/* The first call of every algorithm is the standard algorithm. It keeps
 * the colliding rays, and predictions: the predictive algorithm out to its
 * culling distance, the iterative one only out to the speculative margin
 * (its speculative contacts), and none without speculative contacts (the
 * paper's Algorithm 1). */
static void test_first_call_is_standard(void** state)
{
    (void)state;
    rtcd_mesh* m = blob();
    rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
    rtcd_transform pa = pose_of(0.3f, 0.2f, 0, 0, 0), pb = pose_of(-0.7f, 0.5f, 0.85f, 0.1f, 0.05f);
    uint32_t cap, ns = 0, ni = 0;
    rtcd_ray_hit* std_rays = ray_buffer(m, m, &cap);
    rtcd_ray_hit* it_rays = ray_buffer(m, m, &cap);
    assert_int_equal(rtcd_collide_standard(&def, m, &pa, m, &pb, std_rays, cap, &ns, NULL), RTCD_OK);
    assert_true(ns > 10);
    uint32_t predictions[4] = {0};
    for (int run = 0; run <= 3; ++run) {
        /* Runs 0-2: each algorithm; 3: the iterative one without speculative contacts. */
        int alg = run == 3 ? RTCD_ALGORITHM_ITERATIVE : run;
        rtcd_iterative_def idef = rtcd_default_iterative_def();
        idef.algorithm = (rtcd_algorithm)alg;
        def.speculative = run != 3;
        rtcd_pair_state* s = NULL;
        assert_int_equal(rtcd_pair_state_create(&s), RTCD_OK);
        rtcd_narrowphase_stats st;
        assert_int_equal(test_collide_iterative(&def, &idef, s, m, &pa, m, &pb, it_rays, cap, &ni, &st), RTCD_OK);
        assert_int_equal(st.standard_pass, 1);
        assert_int_equal(ni, ns);
        assert_memory_equal(it_rays, std_rays, ns * sizeof *std_rays);
        assert_int_equal(st.kept_rays, alg == RTCD_ALGORITHM_STANDARD ? 0 : ns);
        predictions[run] = st.kept_predictions;
        if (alg == RTCD_ALGORITHM_PREDICTIVE) assert_true(st.predictive_rays > 0);
        rtcd_pair_state_release(s);
    }
    assert_int_equal(predictions[RTCD_ALGORITHM_STANDARD], 0);
    assert_true(predictions[RTCD_ALGORITHM_PREDICTIVE] > predictions[RTCD_ALGORITHM_ITERATIVE]);
    assert_true(predictions[RTCD_ALGORITHM_ITERATIVE] > 0);
    assert_int_equal(predictions[3], 0);
    free(std_rays);
    free(it_rays);
    rtcd_mesh_release(m);
}

/* Lowest z of the mesh's vertices under the pose's rotation (translation ignored). */
static float lowest_z(const rtcd_mesh* m, const rtcd_transform* t)
{
    const float* v = rtcd_mesh_vertices(m);
    float low = 1e30f;
    for (uint32_t i = 0; i < rtcd_mesh_vertex_count(m); ++i) {
        float z = t->rotation[6] * v[3 * i] + t->rotation[7] * v[3 * i + 1] + t->rotation[8] * v[3 * i + 2];
        low = z < low ? z : low;
    }
    return low;
}

/* Height of the mesh's top surface above (x, y): a ray cast straight down. */
static float height_of(const rtcd_mesh* m, float x, float y)
{
    rtcd_ray down = {{x, y, 10.0f}, {0.0f, 0.0f, -1.0f}, 0.0f, 1e30f, RTCD_INVALID};
    rtcd_hit hit;
    assert_true(rtcd_mesh_first_hit(m, &down, RTCD_TRAVERSAL_BVH, &hit));
    return 10.0f - hit.t;
}

typedef struct slide_result {
    uint32_t steps, iterative_steps, worst_step;
    double worst_disagreement; /* largest per-step incorrect / compared */
    uint32_t late;             /* standard rays not found by the next step either */
    uint64_t compared, incorrect;
} slide_result;

/* B's vertices pulsing and twisting about its origin at 1 Hz (about +-17 %
 * of its radius at most; rtcd_mesh_update_vertices), as the demos' --deforming. */
static void deform(rtcd_mesh* b, const float* rest, float radius, float time)
{
    uint32_t n = rtcd_mesh_vertex_count(b);
    float* v = malloc(3 * (size_t)n * sizeof *v);
    assert_non_null(v);
    scene_pulse_twist(rest, n, 1.0 + 0.12 * sin(2.0 * M_PI * time), 0.12 * cos(2.0 * M_PI * time) / radius, v);
    assert_int_equal(rtcd_mesh_update_vertices(b, v, 0), RTCD_OK);
    free(v);
}

/* B slides and turns slowly across A, its depth changing, for 240 steps at
 * 60 Hz (and, when `deforming`, pulses and twists as it goes); every step is
 * compared with the standard algorithm on the same poses and shapes. */
static slide_result slide(const rtcd_iterative_def* idef, int deforming)
{
    rtcd_mesh* a = test_make_blob(453, 0.5f, 7);
    rtcd_mesh* b = test_make_blob(453, 0.5f, 8);
    uint32_t nb = rtcd_mesh_vertex_count(b);
    float* rest = malloc(3 * (size_t)nb * sizeof *rest);
    assert_non_null(rest);
    memcpy(rest, rtcd_mesh_vertices(b), 3 * (size_t)nb * sizeof *rest);
    float radius = 0.0f;
    for (uint32_t i = 0; i < nb; ++i)
        radius = fmaxf(radius, sqrtf(rest[3 * i] * rest[3 * i] + rest[3 * i + 1] * rest[3 * i + 1] +
                                     rest[3 * i + 2] * rest[3 * i + 2]));
    rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
    rtcd_pair_state* s = NULL;
    assert_int_equal(rtcd_pair_state_create(&s), RTCD_OK);
    uint32_t cap, nv = rtcd_mesh_vertex_count(a);
    rtcd_ray_hit* std_rays = ray_buffer(a, b, &cap);
    rtcd_ray_hit* it_rays = ray_buffer(a, b, &cap);
    /* Standard rays of the previous step not found by the iterative result then. */
    uint8_t* pending = calloc(2 * nv, 1);
    uint8_t* now = calloc(2 * nv, 1);
    slide_result out;
    memset(&out, 0, sizeof out);
    rtcd_transform pa = rtcd_transform_identity();
    for (uint32_t step = 0; step < 240; ++step) {
        float time = step / 60.0f;
        /* 0.125 m/s along x, 15 degrees/s about z and a slow tilt, 3-5 cm deep. */
        float depth = 0.04f + 0.01f * sinf(2.0f * time);
        if (deforming) deform(b, rest, radius, time);
        rtcd_transform pb = pose_of(0.26f * time, 0.1f * sinf(time), -0.25f + 0.125f * time, 0.05f, 0.0f);
        pb.translation[2] = height_of(a, pb.translation[0], pb.translation[1]) - lowest_z(b, &pb) - depth;
        uint32_t ns = 0, ni = 0;
        rtcd_narrowphase_stats st;
        assert_int_equal(rtcd_collide_standard(&def, a, &pa, b, &pb, std_rays, cap, &ns, NULL), RTCD_OK);
        assert_int_equal(test_collide_iterative(&def, idef, s, a, &pa, b, &pb, it_rays, cap, &ni, &st), RTCD_OK);
        out.steps++;
        out.iterative_steps += !st.standard_pass;
        rtcd_ray_agreement ag;
        assert_int_equal(rtcd_compare_rays(std_rays, ns, it_rays, ni, 1e-4f, &ag), RTCD_OK);
        out.compared += ag.compared;
        out.incorrect += ag.incorrect;
        double frac = ag.compared ? (double)ag.incorrect / ag.compared : 0.0;
        if (frac > out.worst_disagreement) {
            out.worst_disagreement = frac;
            out.worst_step = step;
        }
        memset(now, 0, 2 * nv);
        for (uint32_t i = 0; i < ni; ++i) now[it_rays[i].direction * nv + it_rays[i].vertex] = 1;
        /* A standard ray missed at step k-1 must be found at step k, if it still collides. */
        for (uint32_t i = 0; i < ns; ++i) {
            uint32_t key = std_rays[i].direction * nv + std_rays[i].vertex;
            if (pending[key] && !now[key]) out.late++;
        }
        memset(pending, 0, 2 * nv);
        for (uint32_t i = 0; i < ns; ++i) {
            uint32_t key = std_rays[i].direction * nv + std_rays[i].vertex;
            if (!now[key]) pending[key] = 1;
        }
        assert_true(ns > 0); /* the blobs overlap all along */
    }
    free(pending);
    free(now);
    free(rest);
    free(std_rays);
    free(it_rays);
    rtcd_pair_state_release(s);
    rtcd_mesh_release(a);
    rtcd_mesh_release(b);
    return out;
}

/* Acceptance: >= 99 % agreement at every step, every standard ray found
 * within one step, and the iterative pass doing most steps. */
static void test_sliding_blob_agrees_with_standard(void** state)
{
    (void)state;
    rtcd_iterative_def idef = rtcd_default_iterative_def();
    for (int adaptive = 1; adaptive >= 0; --adaptive) {
        idef.adaptive = adaptive;
        slide_result r = slide(&idef, 0);
        printf("sliding blob (%s): %u of %u steps iterative, incorrect %.3f %% overall, worst step %u: %.3f %%, "
               "late rays %u\n",
               adaptive ? "adaptive" : "fixed", r.iterative_steps, r.steps, 100.0 * r.incorrect / r.compared,
               r.worst_step, 100.0 * r.worst_disagreement, r.late);
        assert_true(r.iterative_steps >= r.steps / 2);
        assert_true(r.worst_disagreement <= 0.01);
        assert_int_equal(r.late, 0);
    }
}

/* Issue 13, acceptance 2: the same slide with B deforming (pulsing and
 * twisting at 1 Hz, rtcd_mesh_update_vertices every step). The displacement
 * bound counts the deformation since the last standard pass, the motion
 * rays follow B's vertices' own deformation, and a walk that lands behind
 * its vertex casts the standard ray (core/shared/pair.h): no colliding ray
 * is found late and the predictive algorithm agrees with the standard one
 * on at least 99 % of the rays at every step (measured: all of them). Before
 * the last two, two steps fell short of 99 % and one ray was late: a vertex
 * the twist carried sideways over a bump of A. The plain iterative
 * algorithm keeps no predictions and, with fixed parameters, misses new
 * contacts until the next standard pass even on the rigid slide (the test
 * below): it is held to no more misses than there. */
static void test_deforming_blob_agrees_with_standard(void** state)
{
    (void)state;
    rtcd_iterative_def idef = rtcd_default_iterative_def();
    idef.algorithm = RTCD_ALGORITHM_PREDICTIVE;
    slide_result r = slide(&idef, 1);
    printf("deforming sliding blob (predictive): %u of %u steps iterative, incorrect %.4f %% overall, worst step %u: "
           "%.3f %%, late rays %u\n",
           r.iterative_steps, r.steps, 100.0 * r.incorrect / r.compared, r.worst_step, 100.0 * r.worst_disagreement,
           r.late);
    assert_int_equal(r.late, 0);
    assert_true(r.incorrect * 1000 <= r.compared);  /* >= 99.9 % overall */
    assert_true(r.worst_disagreement <= 0.01);      /* >= 99 % at every step */
    assert_true(r.iterative_steps >= r.steps / 3);  /* the iterative passes still do much of the work */
    idef.algorithm = RTCD_ALGORITHM_ITERATIVE;
    idef.adaptive = 0; /* adaptive, this slide is a standard pass every step (the unseen-depth bound) */
    slide_result it = slide(&idef, 1), rigid = slide(&idef, 0);
    printf("deforming sliding blob (iterative): incorrect %.3f %% overall (rigid slide %.3f %%), late rays %u (rigid "
           "%u)\n",
           100.0 * it.incorrect / it.compared, 100.0 * rigid.incorrect / rigid.compared, it.late, rigid.late);
    assert_true(it.incorrect * rigid.compared <= 2 * rigid.incorrect * it.compared);
}

/* Without predictive rays the same slide misses more (the reason they
 * exist): with fixed parameters (the paper's Algorithm 1, a 0.02 m
 * threshold) the iterative algorithm misses new contacts until its next
 * standard pass. With adaptive ones it runs a standard pass once the pair
 * moved the depth a new contact may reach unseen (issue 23: its
 * speculative reach and the step's motion again), and pays for the
 * agreement in standard passes that the predictions spare. */
static void test_prediction_reduces_incorrect_rays_on_the_slide(void** state)
{
    (void)state;
    for (int adaptive = 0; adaptive <= 1; ++adaptive) {
        rtcd_iterative_def idef = rtcd_default_iterative_def();
        idef.adaptive = adaptive;
        slide_result pred = slide(&idef, 0);
        idef.algorithm = RTCD_ALGORITHM_ITERATIVE;
        slide_result iter = slide(&idef, 0);
        printf("slide (%s): incorrect rays iterative %.3f %% (worst step %.3f %%, late %u, %u of %u steps "
               "iterative), predictive %.3f %% (worst step %.3f %%, late %u, %u steps iterative)\n",
               adaptive ? "adaptive" : "fixed", 100.0 * iter.incorrect / iter.compared,
               100.0 * iter.worst_disagreement, iter.late, iter.iterative_steps, iter.steps,
               100.0 * pred.incorrect / pred.compared, 100.0 * pred.worst_disagreement, pred.late,
               pred.iterative_steps);
        if (!adaptive) {
            assert_true(iter.incorrect > 0);
            assert_true(pred.incorrect * 5 <= iter.incorrect);
        } else {
            assert_true(iter.incorrect <= pred.incorrect + iter.compared / 1000);
            /* Its predictions reach twice the step's motion past the
             * margin (issue 23): it walks about half the steps (125 of
             * 240; 15 before), the predictive algorithm more. */
            assert_true(pred.iterative_steps > iter.iterative_steps);
        }
    }
}

/* A move past the threshold runs a standard pass; a still pair never does. */
static void test_displacement_threshold(void** state)
{
    (void)state;
    rtcd_mesh* m = blob();
    rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
    rtcd_iterative_def idef = rtcd_default_iterative_def();
    idef.adaptive = 0;
    rtcd_pair_state* s = NULL;
    assert_int_equal(rtcd_pair_state_create(&s), RTCD_OK);
    uint32_t cap, n;
    rtcd_ray_hit* rays = ray_buffer(m, m, &cap);
    rtcd_transform pa = rtcd_transform_identity(), pb = pose_of(0.4f, 0.1f, 0.9f, 0, 0);
    rtcd_narrowphase_stats st;
    assert_int_equal(test_collide_iterative(&def, &idef, s, m, &pa, m, &pb, rays, cap, &n, &st), RTCD_OK);
    assert_int_equal(st.standard_pass, 1);
    for (int k = 0; k < 10; ++k) {
        assert_int_equal(test_collide_iterative(&def, &idef, s, m, &pa, m, &pb, rays, cap, &n, &st), RTCD_OK);
        assert_int_equal(st.standard_pass, 0);
        assert_true(st.walked_rays > 0);
    }
    /* Creep: 0.004 m per call against a 0.02 m threshold: the fifth move crosses it. */
    int standard_at = -1;
    for (int k = 1; k <= 6 && standard_at < 0; ++k) {
        pb.translation[0] = 0.9f - 0.004f * k;
        assert_int_equal(test_collide_iterative(&def, &idef, s, m, &pa, m, &pb, rays, cap, &n, &st), RTCD_OK);
        if (st.standard_pass) standard_at = k;
    }
    assert_int_equal(standard_at, 5);
    /* Other meshes: the state starts over. */
    rtcd_mesh* other = test_make_blob(453, 0.5f, 9);
    assert_int_equal(test_collide_iterative(&def, &idef, s, m, &pa, other, &pb, rays, cap, &n, &st), RTCD_OK);
    assert_int_equal(st.standard_pass, 1);
    rtcd_pair_state_reset(s);
    assert_int_equal(test_collide_iterative(&def, &idef, s, m, &pa, other, &pb, rays, cap, &n, &st), RTCD_OK);
    assert_int_equal(st.standard_pass, 1);
    /* Bad input: a NaN pose is refused with a message, the state untouched. */
    pb.translation[1] = NAN;
    assert_int_equal(test_collide_iterative(&def, &idef, s, m, &pa, other, &pb, rays, cap, &n, &st),
                     RTCD_ERROR_INVALID_ARGUMENT);
    assert_int_equal(test_collide_iterative(&def, &idef, s, m, &pa, other, &pb, rays, cap - 1, &n, &st),
                     RTCD_ERROR_BUFFER_TOO_SMALL);
    free(rays);
    rtcd_pair_state_release(s);
    rtcd_mesh_release(m);
    rtcd_mesh_release(other);
}

/* A vertex that leaves the other mesh and comes back before the next
 * standard pass is seen again: the walk that lost it keeps its ray, on the
 * iterative algorithm too (a resting pile's vertices go in and out). */
static void test_returning_vertex_is_seen(void** state)
{
    (void)state;
    rtcd_mesh* m = blob();
    rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
    rtcd_iterative_def idef = rtcd_default_iterative_def();
    idef.algorithm = RTCD_ALGORITHM_ITERATIVE;
    idef.adaptive = 0; /* a 0.02 m threshold: the moves below run no standard pass */
    rtcd_pair_state* s = NULL;
    assert_int_equal(rtcd_pair_state_create(&s), RTCD_OK);
    uint32_t cap, n0, n1, n2, ns;
    rtcd_ray_hit* rays = ray_buffer(m, m, &cap);
    rtcd_ray_hit* ref = ray_buffer(m, m, &cap);
    rtcd_transform pa = rtcd_transform_identity(), pb = pose_of(0.4f, 0.1f, 0.9f, 0, 0);
    rtcd_narrowphase_stats st;
    assert_int_equal(test_collide_iterative(&def, &idef, s, m, &pa, m, &pb, rays, cap, &n0, &st), RTCD_OK);
    assert_int_equal(st.standard_pass, 1);
    pb.translation[0] = 0.908f; /* apart by 8 mm: some colliding vertices leave */
    assert_int_equal(test_collide_iterative(&def, &idef, s, m, &pa, m, &pb, rays, cap, &n1, &st), RTCD_OK);
    assert_int_equal(st.standard_pass, 0);
    assert_true(n1 < n0);
    pb.translation[0] = 0.9f; /* and back */
    assert_int_equal(test_collide_iterative(&def, &idef, s, m, &pa, m, &pb, rays, cap, &n2, &st), RTCD_OK);
    assert_int_equal(st.standard_pass, 0);
    assert_int_equal(rtcd_collide_standard(&def, m, &pa, m, &pb, ref, cap, &ns, NULL), RTCD_OK);
    rtcd_ray_agreement ag;
    assert_int_equal(rtcd_compare_rays(ref, ns, rays, n2, 1e-4f, &ag), RTCD_OK);
    assert_int_equal(ag.missed, 0);
    assert_int_equal(ag.spurious, 0);
    free(rays);
    free(ref);
    rtcd_pair_state_release(s);
    rtcd_mesh_release(m);
}

/* t1's rotation := t0's moved a fraction `mix` towards d's, its rows made
 * orthonormal again (Gram-Schmidt): a small random turn. */
static void turn_towards(rtcd_transform* t1, const rtcd_transform* t0, const rtcd_transform* d, float mix)
{
    float* r = t1->rotation;
    for (int i = 0; i < 9; ++i) r[i] = t0->rotation[i] + mix * (d->rotation[i] - t0->rotation[i]);
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < i; ++j) {
            float dot = r[3 * i] * r[3 * j] + r[3 * i + 1] * r[3 * j + 1] + r[3 * i + 2] * r[3 * j + 2];
            for (int c = 0; c < 3; ++c) r[3 * i + c] -= dot * r[3 * j + c];
        }
        float len = sqrtf(r[3 * i] * r[3 * i] + r[3 * i + 1] * r[3 * i + 1] + r[3 * i + 2] * r[3 * i + 2]);
        for (int c = 0; c < 3; ++c) r[3 * i + c] /= len;
    }
}

/* The displacement bound is never below the true largest vertex motion
 * (brute force over every vertex of both meshes), and not far above it. */
static void test_displacement_bound(void** state)
{
    (void)state;
    rtcd_mesh* a = test_make_blob(453, 0.5f, 7);
    rtcd_mesh* b = test_make_box(0.3f, 0.2f, 0.6f, 3);
    test_rng rng = {3};
    for (int k = 0; k < 500; ++k) {
        rtcd_transform t0 = test_random_pose(&rng, 1.0f), t1 = t0;
        /* a small random motion: translation up to 5 cm, rotation up to ~0.1 rad */
        rtcd_transform d = test_random_pose(&rng, 0.05f);
        float mix = (float)test_rng_range(&rng, 0.0, 0.1);
        turn_towards(&t1, &t0, &d, mix);
        for (int c = 0; c < 3; ++c) t1.translation[c] += d.translation[c];
        rtcd_xform x0 = rtcd_to_xform(&t0), x1 = rtcd_to_xform(&t1);
        float bound = rtcd_relative_displacement(a, b, &x0, &x1);
        float truth = 0.0f;
        rtcd_xform i0 = xf_inverse(&x0), i1 = xf_inverse(&x1);
        for (int side = 0; side < 2; ++side) {
            const rtcd_mesh* m = side ? a : b;
            const rtcd_xform* p0 = side ? &i0 : &x0;
            const rtcd_xform* p1 = side ? &i1 : &x1;
            for (uint32_t v = 0; v < m->vertex_count; ++v) {
                rtcd_v3 q = mesh_vertex(m, v);
                truth = fmaxf(truth, v3_length(v3_sub(xf_point(p1, q), xf_point(p0, q))));
            }
        }
        assert_true(bound >= truth * (1.0f - 1e-4f) - 1e-6f);
        assert_true(bound <= 3.0f * truth + 1e-5f);
    }
    rtcd_mesh_release(a);
    rtcd_mesh_release(b);
}

/* Is the point p within `near` of the box [lo, hi]? */
static int near_box(rtcd_v3 p, const float* lo, const float* hi, float near)
{
    float q[3] = {p.x, p.y, p.z}, d2 = 0.0f;
    for (int i = 0; i < 3; ++i) {
        float out = fmaxf(lo[i] - q[i], fmaxf(0.0f, q[i] - hi[i]));
        d2 += out * out;
    }
    return d2 <= near * near;
}

/* rtcd_near_displacement bounds the motion of every vertex of either mesh
 * that lies, at the later pose, within `near` of the other mesh's box and of
 * its ball of vertices about its origin (a superset of those within `near`
 * of its surface), by brute force; it is
 * never above the whole meshes' bound, and for touching bodies that turn
 * about their contact (rolling) it is far below it. */
static void test_near_displacement(void** state)
{
    (void)state;
    rtcd_mesh* a = test_make_blob(453, 0.5f, 7);
    rtcd_mesh* b = test_make_box(0.3f, 0.2f, 0.6f, 3);
    test_rng rng = {5};
    int relevant = 0, tighter = 0;
    for (int k = 0; k < 1000; ++k) {
        rtcd_transform t0 = test_random_pose(&rng, 0.9f), t1 = t0;
        rtcd_transform d = test_random_pose(&rng, 0.05f);
        float mix = (float)test_rng_range(&rng, 0.0, 0.1);
        turn_towards(&t1, &t0, &d, mix);
        rtcd_xform x0 = rtcd_to_xform(&t0), x1 = rtcd_to_xform(&t1);
        /* Half the cases turn about a point between the bodies (rolling):
         * the translation keeps that point where it was. */
        if (k % 2) {
            rtcd_v3 pivot = v3_scale(v3_load(x1.t), 0.5f);
            rtcd_xform back = xf_inverse(&x1);
            rtcd_v3 shift = v3_sub(pivot, xf_point(&x0, xf_point(&back, pivot)));
            x0.t[0] += shift.x, x0.t[1] += shift.y, x0.t[2] += shift.z;
        } else {
            for (int c = 0; c < 3; ++c) x1.t[c] += d.translation[c];
        }
        float near = (float)test_rng_range(&rng, 0.0, 0.05);
        float bound = rtcd_near_displacement(a, b, &x0, &x1, near);
        float whole = rtcd_relative_displacement(a, b, &x0, &x1);
        assert_true(bound <= whole);
        float truth = 0.0f;
        int any = 0;
        rtcd_xform i0 = xf_inverse(&x0), i1 = xf_inverse(&x1);
        for (int side = 0; side < 2; ++side) {
            const rtcd_mesh* m = side ? a : b;     /* its vertices */
            const rtcd_mesh* other = side ? b : a; /* the box they must be near */
            const rtcd_xform* p0 = side ? &i0 : &x0;
            const rtcd_xform* p1 = side ? &i1 : &x1;
            for (uint32_t v = 0; v < m->vertex_count; ++v) {
                rtcd_v3 q = mesh_vertex(m, v);
                rtcd_v3 now = xf_point(p1, q);
                if (!near_box(now, other->lo, other->hi, near) || v3_length(now) > other->reach + near) continue;
                any = 1;
                truth = fmaxf(truth, v3_length(v3_sub(now, xf_point(p0, q))));
            }
        }
        assert_true(bound >= truth * (1.0f - 1e-4f) - 1e-6f);
        relevant += any;
        tighter += bound < 0.5f * whole;
    }
    print_message("near displacement: %d of 1000 poses with vertices near the other box, %d under half the whole bound\n",
                  relevant, tighter);
    assert_true(relevant > 300);
    assert_true(tighter > 100);
    rtcd_mesh_release(a);
    rtcd_mesh_release(b);
}

static void test_adaptive_params(void** state)
{
    (void)state;
    rtcd_iterative_def def = rtcd_default_iterative_def();
    const float h = 0.08f;
    rtcd_iterative_params prev = rtcd_adaptive_params(&def, 0.0f, h);
    assert_float_near(prev.displacement_threshold, 0.25f * h, 1e-7f);
    for (float d = 0.0f; d < 0.3f; d += 0.001f) {
        rtcd_iterative_params p = rtcd_adaptive_params(&def, d, h);
        assert_true(p.displacement_threshold > 0.0f && p.displacement_threshold <= 0.5f * h + 1e-7f);
        if (d < p.displacement_threshold) {
            assert_true(p.distance_extension > p.displacement_threshold);
            assert_float_near(p.culling_distance, def.confidence * p.displacement_threshold, 1e-7f);
            assert_true(p.culling_distance <= p.distance_extension);
        } else {
            /* next call is a standard pass anyway: no predictions */
            assert_true(p.distance_extension == 0.0f && p.culling_distance == 0.0f);
        }
        assert_true(p.max_iterations >= 6 && p.max_iterations <= 24);
        /* faster pairs: never a smaller threshold or fewer iterations */
        assert_true(p.displacement_threshold >= prev.displacement_threshold);
        assert_true(p.max_iterations >= prev.max_iterations);
        prev = p;
    }
    /* Garbage in: NaN and negative motions give the at-rest parameters. */
    rtcd_iterative_params n = rtcd_adaptive_params(&def, NAN, h), z = rtcd_adaptive_params(&def, 0.0f, h);
    assert_memory_equal(&n, &z, sizeof n);
    n = rtcd_adaptive_params(&def, -1.0f, h);
    assert_memory_equal(&n, &z, sizeof n);
}

static rtcd_ray_hit ray(uint32_t direction, uint32_t vertex, float length)
{
    rtcd_ray_hit r;
    memset(&r, 0, sizeof r);
    r.direction = direction;
    r.vertex = vertex;
    r.length = length;
    return r;
}

static void test_compare_rays(void** state)
{
    (void)state;
    rtcd_ray_hit ref[4] = {ray(0, 1, 0.1f), ray(0, 5, 0.2f), ray(1, 1, 0.3f), ray(1, 9, 0.4f)};
    /* unordered; (0,5) missing, (1,1) at another length, (0,7) extra, (1,9) within tolerance */
    rtcd_ray_hit tst[4] = {ray(1, 9, 0.40005f), ray(0, 7, 0.1f), ray(1, 1, 0.25f), ray(0, 1, 0.1f)};
    rtcd_ray_agreement ag;
    assert_int_equal(rtcd_compare_rays(ref, 4, tst, 4, 1e-4f, &ag), RTCD_OK);
    assert_int_equal(ag.compared, 5);
    assert_int_equal(ag.missed, 1);
    assert_int_equal(ag.spurious, 1);
    assert_int_equal(ag.different, 1);
    assert_int_equal(ag.incorrect, 3);
    assert_float_near(ag.reference_length, 1.0, 1e-6);
    assert_int_equal(rtcd_compare_rays(ref, 4, tst, 0, 1e-4f, &ag), RTCD_OK);
    assert_int_equal(ag.missed, 4);
    assert_int_equal(rtcd_compare_rays(NULL, 4, tst, 4, 1e-4f, &ag), RTCD_ERROR_INVALID_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_walk_finds_the_brute_force_hit),
        cmocka_unit_test(test_near_grid_is_conservative),
        cmocka_unit_test(test_first_call_is_standard),
        cmocka_unit_test(test_sliding_blob_agrees_with_standard),
        cmocka_unit_test(test_deforming_blob_agrees_with_standard),
        cmocka_unit_test(test_prediction_reduces_incorrect_rays_on_the_slide),
        cmocka_unit_test(test_displacement_threshold),
        cmocka_unit_test(test_returning_vertex_is_seen),
        cmocka_unit_test(test_displacement_bound),
        cmocka_unit_test(test_near_displacement),
        cmocka_unit_test(test_adaptive_params),
        cmocka_unit_test(test_compare_rays),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
