/* The iterative algorithm's bound on new contacts (issue 23, point 2): it
 * keeps predictions only out to the speculative margin (none without
 * speculative contacts), so a vertex farther out that comes into contact
 * between two standard passes is seen only at the next one. A pair creeping into
 * another, slower than any standard pass of the displacement threshold
 * alone would notice, is checked call by call against the standard
 * algorithm on the same poses, and every colliding ray the iterative result
 * lacks is measured with the exact ruler (point in mesh, closest point). */
#include "test_util.h"

#include <rtcd/rtcd_iterative.h>
#include <rtcd/rtcd_query.h>

#include "mesh/mesh_internal.h"
#include "narrowphase/pair_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The depth, in mean edge lengths, that core/narrowphase/iterative.c lets
 * an unseen contact reach (RTCD_ITERATIVE_UNSEEN_EDGES). */
#define UNSEEN_EDGES 0.03f

/* Exact depth of caster vertex v (direction 0: A's in B, 1: B's in A)
 * inside the other mesh; 0 when the exact test puts it outside. */
static float vertex_depth(const rtcd_mesh* a, const rtcd_transform* pa, const rtcd_mesh* b, const rtcd_transform* pb,
                          uint32_t direction, uint32_t v)
{
    const rtcd_mesh* caster = direction ? b : a;
    const rtcd_mesh* target = direction ? a : b;
    rtcd_xform xc = rtcd_to_xform(direction ? pb : pa), xt = rtcd_to_xform(direction ? pa : pb);
    rtcd_xform to_target = xf_relative(&xt, &xc);
    rtcd_v3 p = xf_point(&to_target, v3_load(rtcd_mesh_vertices(caster) + 3 * v));
    float q[3] = {p.x, p.y, p.z};
    if (!rtcd_mesh_contains_point(target, q)) return 0.0f;
    return rtcd_mesh_closest_point(target, q, NULL, NULL);
}

typedef struct creep_result {
    uint32_t calls, standard_passes, missed;
    float worst_missed_depth; /* exact depth of the deepest standard ray the iterative result lacked */
    float deepest;            /* the standard rays' deepest vertex, for scale */
} creep_result;

/* B, turned and tilted, starts `start` above touching A and creeps down
 * `per_call` per call until `end` deep: under the displacement threshold
 * alone (a quarter edge, 2.4 cm on these blobs) most calls would be
 * iterative passes. */
static creep_result creep(const rtcd_iterative_def* idef, int speculative, float start, float end, float per_call)
{
    rtcd_mesh* a = test_make_blob(453, 0.5f, 7);
    rtcd_mesh* b = test_make_blob(453, 0.5f, 8);
    rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
    def.speculative = speculative;
    rtcd_pair_state* s = NULL;
    assert_int_equal(rtcd_pair_state_create(&s), RTCD_OK);
    uint32_t cap = rtcd_mesh_vertex_count(a) + rtcd_mesh_vertex_count(b), na = rtcd_mesh_vertex_count(a);
    rtcd_ray_hit* std_rays = calloc(cap, sizeof *std_rays);
    rtcd_ray_hit* it_rays = calloc(cap, sizeof *it_rays);
    uint8_t* found = calloc(cap, 1);
    assert_true(std_rays && it_rays && found);
    rtcd_transform pa = rtcd_transform_identity(), pb = rtcd_transform_identity();
    /* Rz(0.4) Rx(0.1): B's bumps do not sit on A's. */
    float c = cosf(0.4f), sn = sinf(0.4f), ct = cosf(0.1f), st = sinf(0.1f);
    float r[9] = {c, -sn * ct, sn * st, sn, c * ct, -c * st, 0.0f, st, ct};
    memcpy(pb.rotation, r, sizeof r);
    /* Where B's lowest vertex meets A's top (A's box, B's vertices turned). */
    float lo[3], hi[3], low = 1e30f;
    rtcd_mesh_bounds(a, lo, hi);
    const float* vb = rtcd_mesh_vertices(b);
    for (uint32_t i = 0; i < rtcd_mesh_vertex_count(b); ++i)
        low = fminf(low, r[6] * vb[3 * i] + r[7] * vb[3 * i + 1] + r[8] * vb[3 * i + 2]);
    float touching = hi[2] - low;
    creep_result out;
    memset(&out, 0, sizeof out);
    for (float drop = -start; drop <= end; drop += per_call) {
        pb.translation[2] = touching - drop;
        uint32_t ns = 0, ni = 0;
        rtcd_narrowphase_stats stats;
        assert_int_equal(rtcd_collide_standard(&def, a, &pa, b, &pb, std_rays, cap, &ns, NULL), RTCD_OK);
        assert_int_equal(test_collide_iterative(&def, idef, s, a, &pa, b, &pb, it_rays, cap, &ni, &stats), RTCD_OK);
        out.calls++;
        out.standard_passes += stats.standard_pass;
        memset(found, 0, cap);
        for (uint32_t i = 0; i < ni; ++i) found[it_rays[i].direction * na + it_rays[i].vertex] = 1;
        for (uint32_t i = 0; i < ns; ++i) {
            float depth = vertex_depth(a, &pa, b, &pb, std_rays[i].direction, std_rays[i].vertex);
            out.deepest = fmaxf(out.deepest, depth);
            if (found[std_rays[i].direction * na + std_rays[i].vertex]) continue;
            out.missed++;
            out.worst_missed_depth = fmaxf(out.worst_missed_depth, depth);
        }
    }
    free(found);
    free(std_rays);
    free(it_rays);
    rtcd_pair_state_release(s);
    rtcd_mesh_release(a);
    rtcd_mesh_release(b);
    return out;
}

/* Acceptance: creeping 0.2 mm a call from 3 cm above touching to 2 cm
 * deep, no vertex the standard algorithm finds inside is missed deeper than
 * the iterative algorithm's unseen depth (0.03 edges, 2.9 mm), while most
 * calls stay iterative passes. Before the bound the pair ran a standard
 * pass only every quarter edge (2.4 cm) of creep, and missed vertices 1 cm
 * and more deep. Without speculative contacts (no predictions at all) and
 * with them (predictions out to the 5 mm margin, and a standard pass at the
 * latest once the pair moved that far: none missed). */
static void test_creeping_contact_is_seen_within_the_bound(void** state)
{
    (void)state;
    rtcd_iterative_def idef = rtcd_default_iterative_def();
    idef.algorithm = RTCD_ALGORITHM_ITERATIVE;
    rtcd_mesh* m = test_make_blob(453, 0.5f, 7);
    float bound = UNSEEN_EDGES * rtcd_mesh_mean_edge_length(m);
    rtcd_mesh_release(m);
    for (int speculative = 0; speculative <= 1; ++speculative) {
        creep_result r = creep(&idef, speculative, 0.03f, 0.02f, 0.0002f);
        printf("creep (iterative, speculative %s): %u calls, %u standard passes, %u standard rays missed, deepest "
               "missed %.2f mm (bound %.2f mm), deepest vertex %.2f mm\n",
               speculative ? "on" : "off", r.calls, r.standard_passes, r.missed, 1e3 * r.worst_missed_depth,
               1e3 * bound, 1e3 * r.deepest);
        assert_true(r.deepest > 4.0f * bound); /* the blobs did go deep into each other */
        assert_true(r.worst_missed_depth <= bound * 1.001f);
        /* With its predictions out to the margin, and a standard pass at the
         * latest once the pair moved that far, nothing is missed (measured:
         * 13 rays missed without them). */
        if (speculative) assert_int_equal(r.missed, 0);
        /* About one standard pass per 2.9 mm of creep (14 calls): most
         * calls stay iterative passes. */
        assert_true(r.standard_passes * 4 <= r.calls);
    }
    /* The predictive algorithm on the same creep: its predictions see every
     * vertex in time (the bound is the iterative algorithm's alone). */
    idef.algorithm = RTCD_ALGORITHM_PREDICTIVE;
    creep_result p = creep(&idef, 1, 0.03f, 0.02f, 0.0002f);
    printf("creep (predictive): %u calls, %u standard passes, %u standard rays missed, deepest missed %.2f mm\n",
           p.calls, p.standard_passes, p.missed, 1e3 * p.worst_missed_depth);
    assert_true(p.worst_missed_depth <= bound * 1.001f);
}

/* Is any vertex of either mesh inside the other (exact ruler)? */
static int any_inside(const rtcd_mesh* a, const rtcd_transform* pa, const rtcd_mesh* b, const rtcd_transform* pb)
{
    for (uint32_t d = 0; d < 2; ++d)
        for (uint32_t v = 0; v < rtcd_mesh_vertex_count(d ? b : a); ++v)
            if (vertex_depth(a, pa, b, pb, d, v) > 0.0f) return 1;
    return 0;
}

#define LATE_RUNS 6u

/* B falls onto A at `speed` a call (back poses one call up, motion bound
 * `speed`), from 8 cm above touching plus run x 4 mm. For each run, the
 * result of the last call before a vertex is inside (exact ruler at the
 * next call's poses) goes to out[run]; returns how many runs had one. */
static uint32_t late_impact(const rtcd_narrowphase_def* def, float speed, rtcd_pair_result* out)
{
    rtcd_mesh* a = test_make_blob(453, 0.5f, 7);
    rtcd_mesh* b = test_make_blob(453, 0.5f, 8);
    rtcd_batch* batch = test_create_batch(def, NULL);
    float lo[3], hi[3];
    rtcd_mesh_bounds(a, lo, hi);
    float blo[3], bhi[3];
    rtcd_mesh_bounds(b, blo, bhi);
    uint32_t found = 0;
    for (uint32_t run = 0; run < LATE_RUNS; ++run) {
        rtcd_pair_desc d;
        memset(&d, 0, sizeof d);
        d.a = a, d.b = b, d.key = 100 + run;
        d.pose_a = rtcd_transform_identity();
        d.pose_b = rtcd_transform_identity();
        float w[3] = {0.1f, 0.0f, 0.4f}; /* B's bumps do not sit on A's */
        test_rotate_by(&d.pose_b, w);
        d.pose_b.translation[0] = 0.05f;
        d.pose_b.translation[2] = hi[2] - blo[2] + 0.08f + 0.004f * (float)run;
        d.has_back = 1;
        d.motion = speed;
        memset(&out[run], 0, sizeof out[run]);
        for (uint32_t k = 0; k < 40; ++k) {
            d.back_a = d.pose_a;
            d.back_b = d.pose_b;
            d.back_b.translation[2] += speed;
            rtcd_pair_result r;
            assert_int_equal(rtcd_batch_collide(batch, &d, 1, &r, NULL), RTCD_OK);
            rtcd_transform next = d.pose_b;
            next.translation[2] -= speed;
            if (any_inside(a, &d.pose_a, b, &d.pose_b)) break; /* went in: the run is over */
            if (any_inside(a, &d.pose_a, b, &next)) {
                out[run] = r;
                found++;
                break;
            }
            d.pose_b = next;
        }
    }
    rtcd_batch_release(batch);
    rtcd_mesh_release(a);
    rtcd_mesh_release(b);
    return found;
}

/* A late impact (issue 23: in the iterative avalanche's resting pile a blob
 * sliding 2 cm a step into another went 12 mm deep unseen): the call
 * before a vertex goes in holds a speculative contact that the step can
 * close (at most one step's motion away). Before, the iterative algorithm's
 * speculative contacts reached only the margin (5 mm): runs whose last gap
 * was 5-20 mm had none. The predictive algorithm has them too, and the
 * OpenCL backend gives the CPU reference's results bit for bit. */
static void test_late_impact_has_a_speculative_contact(void** state)
{
    (void)state;
    const float speed = 0.02f; /* 1.2 m/s at 60 Hz */
    for (int alg = RTCD_ALGORITHM_ITERATIVE; alg <= RTCD_ALGORITHM_PREDICTIVE; ++alg) {
        rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
        def.backend = RTCD_BACKEND_CPU;
        def.threads = 1;
        def.iterative.algorithm = (rtcd_algorithm)alg;
        rtcd_pair_result r[LATE_RUNS];
        uint32_t found = late_impact(&def, speed, r);
        assert_int_equal(found, LATE_RUNS);
        for (uint32_t run = 0; run < LATE_RUNS; ++run) {
            float nearest = 1e30f;
            for (uint32_t c = 0; c < r[run].contact_count; ++c) nearest = fminf(nearest, -r[run].contacts[c].depth);
            printf("late impact (%s), run %u: %u contacts, nearest %.2f mm\n", rtcd_algorithm_name(def.iterative.algorithm),
                   run, r[run].contact_count, r[run].contact_count ? 1e3 * nearest : -1.0);
            assert_true(r[run].contact_count > 0);
            assert_true(nearest <= speed);
        }
        if (test_opencl_available()) {
            rtcd_narrowphase_def cl = def;
            cl.backend = RTCD_BACKEND_OPENCL;
            rtcd_pair_result o[LATE_RUNS];
            assert_int_equal(late_impact(&cl, speed, o), LATE_RUNS);
            for (uint32_t run = 0; run < LATE_RUNS; ++run) test_same_result("late impact, OpenCL", &r[run], &o[run], 0);
        }
    }
}

/* Fixed parameters are the paper's Algorithm 1 as given: the threshold the
 * caller chose, so the same creep misses deeper vertices there (the bound
 * is the adaptive rule's). */
static void test_fixed_parameters_keep_their_threshold(void** state)
{
    (void)state;
    rtcd_iterative_def idef = rtcd_default_iterative_def();
    idef.algorithm = RTCD_ALGORITHM_ITERATIVE;
    idef.adaptive = 0; /* 0.02 m threshold */
    creep_result r = creep(&idef, 0, 0.0f, 0.015f, 0.0002f); /* no speculative contacts: no predictions */
    printf("creep (iterative, fixed): %u calls, %u standard passes, deepest missed %.2f mm\n", r.calls,
           r.standard_passes, 1e3 * r.worst_missed_depth);
    assert_true(r.standard_passes <= 2);
    assert_true(r.worst_missed_depth > 0.005f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_creeping_contact_is_seen_within_the_bound),
        cmocka_unit_test(test_fixed_parameters_keep_their_threshold),
        cmocka_unit_test(test_late_impact_has_a_speculative_contact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
