/* Iterative and predictive ray-traced collision detection (JVRC 2013 section
 * 3.1, Algorithm 1) on the CPU: the per-pair state, the choice between a
 * standard and an iterative pass, the adaptive parameters and the walk of
 * the kept rays. The OpenCL backend makes the same choices on the host
 * (rtcd_track_plan) and runs the same walk (shared/iterate.h). */
#include "pair_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The adaptive threshold: this many steps of the pair's present motion,
 * and at least this many edge lengths (measured on the avalanche: 4 steps
 * and 0.05 edges ran a standard pass for one resting pair in eight every
 * step; see docs/narrowphase.md and docs/benchmarks.md). */
#define RTCD_ADAPTIVE_STEPS 16.0f
#define RTCD_ADAPTIVE_MIN_EDGES 0.25f
/* At most half an edge, so a walk stays among a few triangles; for pairs
 * whose meshes did not deform in the step before the standard pass, 0.75
 * (with near_displacement: on avalanche --deforming 64 over 300 steps, 0.75
 * for every pair ran 26 % fewer standard passes than 0.5 and no incorrect
 * ray under --check, 1.0 deepened the fall's penetration; but deforming
 * pairs in 12-24 cm overlaps missed 592 rays of 102,489 against 327,
 * test_deform_opencl). */
#define RTCD_ADAPTIVE_MAX_EDGES 0.5f
#define RTCD_ADAPTIVE_RIGID_MAX_EDGES 0.75f
/* The iterative algorithm keeps predictions only out to the speculative
 * reach (none without speculative contacts): the depth, in edge lengths,
 * that a vertex coming into contact between its standard passes may reach
 * before the next one sees it, where that is more than the margin (2.9 mm
 * on the avalanche's blobs, whose piles move a bound of 1-2 mm per step at
 * rest; see docs/contacts.md). */
#define RTCD_ITERATIVE_UNSEEN_EDGES 0.03f

static float clampf(float x, float lo, float hi) { return x < lo ? lo : (x > hi ? hi : x); }

static rtcd_iterative_params adaptive_params(const rtcd_iterative_def* def, float step_displacement, float edge_length,
                                             float max_edges)
{
    float confidence = def && def->confidence >= 1.0f ? def->confidence : 1.0f;
    float d = step_displacement > 0.0f && isfinite(step_displacement) ? step_displacement : 0.0f;
    float h = edge_length > 0.0f && isfinite(edge_length) ? edge_length : 1.0f;
    rtcd_iterative_params p;
    /* Several steps of the present motion, at least a fraction of an edge (a
     * pair at rest then runs no standard pass until it creeps that far) and
     * at most max_edges, so a walk stays among a few triangles. */
    p.displacement_threshold = clampf(RTCD_ADAPTIVE_STEPS * d, RTCD_ADAPTIVE_MIN_EDGES * h, max_edges * h);
    /* Until the next standard pass the pair moves less than the threshold,
     * so only vertices that close can come into contact: the extension and
     * the culling distance are confidence x threshold. A pair that moves a
     * threshold per step runs a standard pass every step, which discards
     * any prediction unused: it casts none (extension and culling 0). */
    if (d < p.displacement_threshold) {
        p.culling_distance = confidence * p.displacement_threshold;
        p.distance_extension = fmaxf(p.culling_distance, 1.05f * p.displacement_threshold);
    } else {
        p.culling_distance = p.distance_extension = 0.0f;
    }
    /* A contact point moves about d per step across edges of length h; going
     * round a vertex (six triangles on these meshes) takes up to five steps. */
    float crossings = ceilf(2.0f * d / h);
    p.max_iterations = (uint32_t)clampf(6.0f + crossings, 6.0f, 24.0f);
    return p;
}

rtcd_iterative_params rtcd_adaptive_params(const rtcd_iterative_def* def, float step_displacement, float edge_length)
{
    return adaptive_params(def, step_displacement, edge_length, RTCD_ADAPTIVE_MAX_EDGES);
}

/* ---- displacement and the choice of pass ---- */

/* |(R1 - R0) x| <= 2 sin(angle / 2) |x|, the angle being that of R1 R0^T,
 * and |R1 - R0|_F^2 = 2 (3 - trace(R1 R0^T)) = 8 sin^2(angle / 2). Summed
 * from the differences, not as 3 - trace: at small angles that lost the
 * turn in rounding (trace within a float ulp of 3 below 5e-4 radians, 0.3 mm
 * at a 0.6 m reach; test_iterative's test_near_displacement). A little
 * over, for rotations a few ulps off orthonormal. */
static float turn_of(const rtcd_xform* x0, const rtcd_xform* x1)
{
    float sum = 0.0f;
    for (int i = 0; i < 9; ++i) {
        float d = x1->r[i] - x0->r[i];
        sum += d * d;
    }
    /* The same matrix turns nothing (a resting pair's pose repeats exactly:
     * the margin would run a pair of fine meshes into standard passes,
     * test_device_faults). */
    if (sum == 0.0f) return 0.0f;
    return sqrtf(0.5f * sum) * (1.0f + 1e-5f) + 1e-6f;
}

/* rtcd_relative_displacement for a turn already known (turn_of) and
 * b_in_a1's inverse a_in_b1 (a call's planning computes it once for all its
 * bounds). */
static float whole_displacement(const rtcd_mesh* a, const rtcd_mesh* b, const rtcd_xform* b_in_a0,
                                const rtcd_xform* b_in_a1, const rtcd_xform* a_in_b1, float turn)
{
    /* A point x of B moves by (R1 - R0) x + (t1 - t0) in A's frame, and
     * |(R1 - R0) x| <= turn |x| (turn_of). The same bound holds for A's
     * points in B's frame with the inverse poses. */
    float move_b = v3_length(v3_sub(v3_load(b_in_a1->t), v3_load(b_in_a0->t)));
    rtcd_xform a_in_b0 = xf_inverse(b_in_a0);
    float move_a = v3_length(v3_sub(v3_load(a_in_b1->t), v3_load(a_in_b0.t)));
    return fmaxf(turn * b->reach + move_b, turn * a->reach + move_a);
}

RTCD_API float rtcd_relative_displacement(const rtcd_mesh* a, const rtcd_mesh* b, const rtcd_xform* b_in_a0,
                                 const rtcd_xform* b_in_a1)
{
    rtcd_xform a_in_b1 = xf_inverse(b_in_a1);
    return whole_displacement(a, b, b_in_a0, b_in_a1, &a_in_b1, turn_of(b_in_a0, b_in_a1));
}

/* A mesh's bounding ball in its own frame: about its box's centre or its
 * origin, whichever is smaller (the box's half diagonal holds every vertex). */
static float mesh_ball(const rtcd_mesh* m, rtcd_v3* centre)
{
    rtcd_v3 lo = v3_load(m->lo), hi = v3_load(m->hi);
    float box = 0.5f * v3_length(v3_sub(hi, lo));
    if (box < m->reach) {
        *centre = v3_scale(v3_add(lo, hi), 0.5f);
        return box;
    }
    *centre = v3(0.0f, 0.0f, 0.0f);
    return m->reach;
}

/* The rigid displacement bound over the points that can touch now: those
 * of either mesh within `near` of the other's bounding ball, at the pose
 * b_in_a1. A point of B now at p (A's frame) moved by
 * |(I - R0 R1^T)(p - m) + d(m)| <= turn |p - m| + |d(m)|, d(m) the motion
 * of B's point now at m; A's point at p moved as far in B's frame. The
 * points lie in both balls (widened by `near`), whose lens lies in a ball
 * about m, the centre of their circle. Rolling bodies' contacts hardly
 * move, however fast they turn: the bound over whole meshes is
 * turn x reach. Never more than rtcd_relative_displacement (test_iterative's
 * test_near_displacement: sound against every vertex near the other's box). */
static float near_displacement(const rtcd_mesh* a, const rtcd_mesh* b, const rtcd_xform* b_in_a0,
                               const rtcd_xform* b_in_a1, const rtcd_xform* a_in_b1, float near, float turn,
                               float whole)
{
    const rtcd_xform* back = a_in_b1; /* takes a point now in A's frame back to B's */
    rtcd_v3 ca, cb;
    float ra = mesh_ball(a, &ca) + near, rb = mesh_ball(b, &cb) + near;
    cb = xf_point(b_in_a1, cb);
    rtcd_v3 u = v3_sub(cb, ca);
    float dist = v3_length(u);
    rtcd_v3 m;
    float r;
    if (!(dist > 0.0f) || !isfinite(dist)) return whole;
    float along = (dist * dist + ra * ra - rb * rb) / (2.0f * dist); /* m's distance from A's centre */
    if (along <= 0.0f || !(along < dist)) {
        /* One ball reaches past the other's centre: the smaller holds the lens. */
        m = ra < rb ? ca : cb;
        r = fminf(ra, rb);
    } else {
        m = v3_add(ca, v3_scale(u, along / dist));
        r = sqrtf(fmaxf(0.0f, ra * ra - along * along));
    }
    rtcd_v3 was = xf_point(b_in_a0, xf_point(back, m));
    /* Rounding: the coordinates are at most about the balls' distance and
     * the translations; a few float ulps of them. */
    float slack = 4e-6f * (dist + ra + rb + v3_length(v3_load(b_in_a0->t)) + v3_length(v3_load(b_in_a1->t)));
    float bound = turn * r + v3_length(v3_sub(m, was)) + slack;
    return isfinite(bound) ? fminf(whole, bound) : whole;
}

RTCD_API float rtcd_near_displacement(const rtcd_mesh* a, const rtcd_mesh* b, const rtcd_xform* b_in_a0,
                                      const rtcd_xform* b_in_a1, float near)
{
    rtcd_xform a_in_b1 = xf_inverse(b_in_a1);
    float turn = turn_of(b_in_a0, b_in_a1);
    return near_displacement(a, b, b_in_a0, b_in_a1, &a_in_b1, near, turn,
                             whole_displacement(a, b, b_in_a0, b_in_a1, &a_in_b1, turn));
}

/* A partner that moved by a translation alone over the step before a
 * standard pass (a character controller's capsule walking, a platform
 * sliding) is followed along that translation for up to this many calls:
 * that pass's predictions reach as far, and the iterative passes go on
 * while the pair stays within the threshold of the predicted pose
 * (bench_character: 4 calls left a character's pairs with static terrain a
 * standard pass every fifth step, 8 halve that; 16 cast more predictions
 * and found no fewer standard passes). */
#define RTCD_STEADY_CALLS 8u

/* Does the predictive algorithm's steady pair (track->steady) still follow
 * its translation (this call counted)? The predictions of its last
 * standard pass reach the culling distance along the motion (motion rays
 * are straight lines: exact for a translation), so a vertex comes in
 * unseen only past that distance or off the predicted pose by more than
 * the threshold (the deformed meshes' bound is not extrapolated). */
static int steady_follows(const rtcd_pair_track* track, const rtcd_mesh* a, const rtcd_mesh* b, const rtcd_xform* now,
                          float confidence)
{
    rtcd_v3 v = v3_load(track->steady);
    if (!(v3_dot(v, v) > 0.0f) || track->calls_since_ref > RTCD_STEADY_CALLS) return 0;
    if (a->deformation != track->deformed_ref[0] || b->deformation != track->deformed_ref[1]) return 0;
    rtcd_xform predicted = track->ref;
    rtcd_v3 t = v3_add(v3_load(track->ref.t), v3_scale(v, (float)track->calls_since_ref));
    predicted.t[0] = t.x, predicted.t[1] = t.y, predicted.t[2] = t.z;
    float off = rtcd_relative_displacement(a, b, &predicted, now);
    float travel = (float)track->calls_since_ref * v3_length(v);
    return off < track->params.displacement_threshold && travel + off < track->params.culling_distance / confidence;
}

/* How close to the other mesh a vertex gets a speculative contact this
 * call: the margin plus how far the pair may move in one step (the
 * caller's bound, rtcd_pair_motion_set's, or its last step, whichever is
 * larger), at most the larger mesh's reach. */
#define RTCD_SPECULATIVE_REACH_MAX 1e5f /* the range of validity's coordinates */
static float speculative_reach(const rtcd_narrowphase_def* def, const rtcd_pair_track* track, float bound)
{
    if (!def->speculative || def->iterative.algorithm == RTCD_ALGORITHM_STANDARD) return 0.0f;
    /* The iterative algorithm too, with adaptive parameters: a body
     * sliding 2 cm a step into a resting one went 12 mm in unseen with the
     * margin alone (rest_why, docs/contacts.md). Past the margin, only
     * vertices that the last step's motion brings in (shared/pair.h); it
     * casts no motion rays. Fixed parameters are Algorithm 1 as given: a
     * wider reach would run standard passes the caller's threshold does not. */
    if (def->iterative.algorithm == RTCD_ALGORITHM_ITERATIVE && !def->iterative.adaptive) return def->speculative_margin;
    float step = track->has_motion && track->step_displacement < RTCD_FLT_MAX ? track->step_displacement : 0.0f;
    return fminf(def->speculative_margin + fmaxf(bound, step), RTCD_SPECULATIVE_REACH_MAX);
}

/* A lower bound on the distance between the meshes' boxes (b in a's
 * frame), from the separating axes among the boxes' face normals; 0 when
 * they overlap on all six. No point of either mesh is nearer the other. */
static float box_gap(const rtcd_mesh* a, const rtcd_mesh* b, const rtcd_xform* b_in_a)
{
    float ca[3], ha[3], cb[3], hb[3], r[3][3];
    for (int i = 0; i < 3; ++i) {
        ca[i] = 0.5f * (a->lo[i] + a->hi[i]);
        ha[i] = 0.5f * (a->hi[i] - a->lo[i]);
        cb[i] = 0.5f * (b->lo[i] + b->hi[i]);
        hb[i] = 0.5f * (b->hi[i] - b->lo[i]);
        for (int j = 0; j < 3; ++j) r[i][j] = b_in_a->r[3 * i + j];
    }
    rtcd_v3 c = v3_sub(xf_point(b_in_a, v3_load(cb)), v3_load(ca)); /* B's centre from A's, A's frame */
    float t[3] = {c.x, c.y, c.z}, gap = 0.0f;
    for (int i = 0; i < 3; ++i) /* A's axes */
        gap = fmaxf(gap, fabsf(t[i]) - (ha[i] + hb[0] * fabsf(r[i][0]) + hb[1] * fabsf(r[i][1]) + hb[2] * fabsf(r[i][2])));
    for (int j = 0; j < 3; ++j) { /* B's axes */
        float tb = t[0] * r[0][j] + t[1] * r[1][j] + t[2] * r[2][j];
        gap = fmaxf(gap, fabsf(tb) - (hb[j] + ha[0] * fabsf(r[0][j]) + ha[1] * fabsf(r[1][j]) + ha[2] * fabsf(r[2][j])));
    }
    /* Less a little for rounding (coordinates up to the boxes' size). */
    return fmaxf(0.0f, gap - 1e-5f * (v3_length(v3_load(ha)) + v3_length(v3_load(hb))));
}

/* At a standard pass: is the partner steady (the predictive algorithm,
 * adaptive parameters, the step's motion known from the caller's back
 * poses, a translation alone: the relative rotation bit for bit the same,
 * and no deformation)? Then the predictions reach RTCD_STEADY_CALLS steps
 * of it past the threshold. */
static void steady_plan(rtcd_pair_track* track, const rtcd_iterative_def* def, const rtcd_xform* now,
                        const rtcd_xform* before, const rtcd_pair_motion* motion)
{
    memset(track->steady, 0, sizeof track->steady);
    track->calls_since_ref = 0;
    if (def->algorithm != RTCD_ALGORITHM_PREDICTIVE || !def->adaptive || !motion || !motion->has_back ||
        track->deformed)
        return;
    rtcd_v3 v = v3_sub(v3_load(now->t), v3_load(before->t));
    float speed = v3_length(v);
    if (!(speed > 0.0f) || !isfinite(speed)) return;
    if (memcmp(before->r, now->r, sizeof now->r) != 0) return;
    track->steady[0] = v.x, track->steady[1] = v.y, track->steady[2] = v.z;
    float confidence = def->confidence >= 1.0f ? def->confidence : 1.0f;
    float reach = confidence * (track->params.displacement_threshold + (float)RTCD_STEADY_CALLS * speed);
    track->params.culling_distance = fmaxf(track->params.culling_distance, reach);
    track->params.distance_extension = fmaxf(track->params.distance_extension, reach);
}

int rtcd_track_plan(rtcd_pair_track* track, const rtcd_narrowphase_def* ndef, const rtcd_mesh* a, const rtcd_mesh* b,
                    const rtcd_xform* pose_a, const rtcd_xform* pose_b, const rtcd_pair_motion* motion,
                    rtcd_xform* before)
{
    const rtcd_iterative_def* def = &ndef->iterative;
    /* Written in place: returned by value, it was built in a temporary and
     * copied with a vector load over scalar stores (a store-forwarding
     * stall, the largest single cost of this function at 8192 blobs). */
    rtcd_xform now;
    xf_relative_into(&now, pose_a->r, pose_a->t, pose_b->r, pose_b->t);
    if (track->a != a || track->b != b || track->id_a != a->id || track->id_b != b->id ||
        def->algorithm == RTCD_ALGORITHM_STANDARD) {
        memset(track, 0, sizeof *track);
        track->a = a;
        track->b = b;
        track->id_a = a->id;
        track->id_b = b->id;
    }
    /* Deforming meshes: every point of either may have moved, in its own
     * frame, as far as its mesh's odometer ran (the sum of its updates'
     * largest vertex displacements); that adds to the rigid bound. */
    double deformed[2] = {a->deformation, b->deformation};
    rtcd_xform now_back = xf_inverse(&now); /* a in b's frame: every bound below reads it */
    float step = 0.0f;
    if (track->has_prev)
        step = whole_displacement(a, b, &track->prev, &now, &now_back, turn_of(&track->prev, &now)) +
               (float)((deformed[0] - track->deformed_prev[0]) + (deformed[1] - track->deformed_prev[1]));
    /* Meshes whose odometer ran since the last call: their prev_vertices
     * hold that call's shape (one update per step), for the motion rays. An
     * update that moved nothing leaves prev_vertices equal to the vertices,
     * so it needs no bit. */
    track->deformed = track->has_prev ? (uint32_t)(deformed[0] != track->deformed_prev[0]) |
                                            (uint32_t)(deformed[1] != track->deformed_prev[1]) << 1
                                      : 0u;
    track->deformed_prev[0] = deformed[0];
    track->deformed_prev[1] = deformed[1];
    /* A pair that just came into the broadphase has no past: its first
     * standard pass assumes nothing about its motion, its second knows it. */
    track->step_displacement = isfinite(step) ? step : RTCD_FLT_MAX;
    track->has_motion = track->has_prev;
    *before = track->prev;
    if (motion && motion->has_back) {
        /* Where the velocities head: better than the last call's motion,
         * and known from the first call. */
        track->has_motion = 1;
        *before = motion->back;
    }
    track->prev = now;
    track->has_prev = 1;
    /* This call's speculative reach (from the motion just set). */
    track->speculative = speculative_reach(ndef, track, motion ? motion->bound : 0.0f);
    int standard = !track->valid || track->refresh;
    /* A predictive pass that cast no predictions (a pair moving a threshold
     * per step) leaves nothing to find new contacts with: standard again. */
    if (def->algorithm == RTCD_ALGORITHM_PREDICTIVE && !(track->params.distance_extension > 0.0f)) standard = 1;
    if (!standard) {
        /* No point moved farther than the rigid bound plus both meshes'
         * deformation since the last standard pass. The kept predictions
         * follow it: motion rays include the caster's own deformation
         * (prev_vertices), and a walk that lands behind its vertex casts
         * the standard ray (shared/pair.h), so a twist sliding vertices
         * sideways over a bump is found in time (test_iterative). */
        float deformation = (float)((deformed[0] - track->deformed_ref[0]) + (deformed[1] - track->deformed_ref[1]));
        /* The predictive algorithm's predictions reach the culling
         * distance, at least the threshold: every vertex that can come in
         * before the next standard pass has one. The iterative algorithm
         * keeps the rays of vertices that collided since then and its
         * predictions out to its speculative reach then, so, with adaptive
         * parameters, the pair moves no farther than a vertex outside then
         * may come in unseen (fixed parameters are the paper's Algorithm 1,
         * the caller's threshold). */
        float reach = track->params.displacement_threshold;
        if (def->algorithm == RTCD_ALGORITHM_ITERATIVE && def->adaptive) {
            /* With speculative contacts, this step's motion too: a vertex
             * with no kept ray must not come in within the step either. */
            float spec = track->speculative;
            reach = fminf(reach, track->unseen_reach - (spec > 0.0f ? spec - ndef->speculative_margin : 0.0f));
        }
        track->calls_since_ref++;
        /* The whole meshes' bound first: the near one is never more, so
         * when the whole one stays within reach (a resting pair) the lens
         * is not needed and the answer is the same. */
        float turn = turn_of(&track->ref, &now);
        float whole = whole_displacement(a, b, &track->ref, &now, &now_back, turn);
        float moved = whole + deformation;
        if (!(moved < reach))
            moved = near_displacement(a, b, &track->ref, &now, &now_back, track->speculative, turn, whole) + deformation;
        standard = !(moved < reach) && !steady_follows(track, a, b, &now, def->confidence >= 1.0f ? def->confidence : 1.0f);
    }
    /* The kept predictions reach the culling distance: a farther
     * speculative reach needs a standard pass to find its vertices. */
    if (track->speculative > track->params.culling_distance) standard = 1;
    if (standard) {
        track->valid = def->algorithm != RTCD_ALGORITHM_STANDARD;
        track->ref = now;
        track->deformed_ref[0] = deformed[0];
        track->deformed_ref[1] = deformed[1];
        /* The finer mesh's edges: a walk must stay among a few of its
         * triangles, and a coarse partner (terrain with kilometre spikes
         * has edges hundreds of metres long) would let the pair move that
         * far between standard passes. */
        if (def->adaptive)
            track->params = adaptive_params(def, track->step_displacement, fminf(a->mean_edge_length, b->mean_edge_length),
                                            track->deformed ? RTCD_ADAPTIVE_MAX_EDGES : RTCD_ADAPTIVE_RIGID_MAX_EDGES);
        else
            track->params = def->fixed;
        /* The iterative algorithm: until the pair moved the boxes' gap no
         * vertex can come in (pairs near in the broadphase, apart), nor
         * one farther than its predictions' reach (the speculative reach);
         * at least RTCD_ITERATIVE_UNSEEN_EDGES of the finer mesh. */
        /* The iterative algorithm's predictions: the speculative reach and
         * its motion part again, so that a step a little longer than this
         * one (or the pair's creep) needs no standard pass at once. */
        float kept = track->speculative + fmaxf(track->speculative - ndef->speculative_margin, 0.0f);
        track->unseen_reach = def->algorithm == RTCD_ALGORITHM_ITERATIVE
                                  ? fmaxf(fmaxf(box_gap(a, b, &now), kept), RTCD_ITERATIVE_UNSEEN_EDGES *
                                                                   fminf(a->mean_edge_length, b->mean_edge_length))
                                  : 0.0f;
        steady_plan(track, def, &now, before, motion);
        /* Predictions cover at least the speculative reach; the iterative
         * algorithm's (shared/pair.h) only `kept`. */
        if (def->algorithm == RTCD_ALGORITHM_ITERATIVE)
            track->params.culling_distance = track->params.distance_extension = kept;
        track->params.culling_distance = fmaxf(track->params.culling_distance, track->speculative);
        track->params.distance_extension = fmaxf(track->params.distance_extension, track->speculative);
    }
    return standard;
}

/* ---- the per-pair state ---- */

/* Most pairs keep a few dozen rays: they live inside the state, so a pair
 * costs one allocation and its walk touches one block of memory (measured:
 * cache misses on separate arrays were half the iterative pass's time). */
#define RTCD_STATE_INLINE 24

struct rtcd_pair_state {
    int refcount;
    rtcd_pair_track track;
    uint32_t count, capacity;
    uint32_t* entries; /* 2 words each (shared/iterate.h) */
    uint32_t* scratch; /* the next step's entries while walking */
    uint32_t inline_entries[2][2 * RTCD_STATE_INLINE];
};

rtcd_error rtcd_pair_state_create(rtcd_pair_state** out)
{
    if (!out) return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_pair_state_create: NULL argument");
    rtcd_pair_state* s = rtcd_calloc(1, sizeof *s);
    *out = s;
    if (!s) return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_pair_state_create: out of memory");
    s->refcount = 1;
    s->entries = s->inline_entries[0];
    s->scratch = s->inline_entries[1];
    s->capacity = RTCD_STATE_INLINE;
    return RTCD_OK;
}

static int on_heap(const rtcd_pair_state* s) { return s->capacity > RTCD_STATE_INLINE; }

void rtcd_pair_state_retain(rtcd_pair_state* state)
{
    if (state) state->refcount++;
}

void rtcd_pair_state_release(rtcd_pair_state* state)
{
    if (!state || --state->refcount > 0) return;
    if (on_heap(state)) {
        rtcd_free(state->entries);
        rtcd_free(state->scratch);
    }
    rtcd_free(state);
}

void rtcd_pair_state_prefetch(const rtcd_pair_state* state)
{
    if (state) rtcd_prefetch_read(state, sizeof *state);
}

void rtcd_pair_state_reset(rtcd_pair_state* state)
{
    if (!state) return;
    memset(&state->track, 0, sizeof state->track);
    state->count = 0;
}

rtcd_iterative_params rtcd_pair_state_params(const rtcd_pair_state* state)
{
    rtcd_iterative_params none;
    memset(&none, 0, sizeof none);
    return state ? state->track.params : none;
}

/* Room for `need` entries (a pass never keeps more than one per vertex). */
static rtcd_error reserve(rtcd_pair_state* s, uint32_t need)
{
    if (need <= s->capacity) return RTCD_OK;
    uint32_t* e = rtcd_alloc((size_t)need * 2 * sizeof *e);
    uint32_t* t = rtcd_alloc((size_t)need * 2 * sizeof *t);
    if (!e || !t) {
        rtcd_free(e);
        rtcd_free(t);
        return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_collide_iterative: no memory for %u kept rays", need);
    }
    if (s->count) memcpy(e, s->entries, (size_t)s->count * 2 * sizeof *e);
    if (on_heap(s)) {
        rtcd_free(s->entries);
        rtcd_free(s->scratch);
    }
    s->entries = e;
    s->scratch = t;
    s->capacity = need;
    return RTCD_OK;
}

/* The iterative pass: every kept ray walks from its triangle (Algorithm 1). */
static void iterative_pass(const rtcd_pair_ctx* c, rtcd_pair_state* s, rtcd_ray_rec* recs, uint32_t* count,
                           rtcd_narrowphase_stats* st)
{
    rtcd_pass_counts n = {0, 0, 0, 0};
    uint32_t hits = 0, records = 0, kept = 0;
    for (uint32_t k = 0; k < s->count; ++k) {
        rtcd_ray_rec rec;
        int what = pair_walk_entry(c, s->entries[2 * k], s->entries[2 * k + 1], &n, &rec);
        if (what == RTCD_WALK_LOST) continue;
        s->scratch[2 * kept] = rec.feature;
        s->scratch[2 * kept + 1] = rec.tri;
        kept++;
        if (what == RTCD_WALK_PREDICT) {
            st->kept_predictions++;
            if (pair_speculative(c, &rec, &n)) recs[records++] = rec;
            continue;
        }
        st->kept_rays++;
        recs[records++] = rec;
        hits++;
    }
    st->walked_rays = s->count;
    st->walk_steps = n.steps;
    st->predictive_rays = n.predictive_rays; /* speculative contacts' motion rays */
    st->colliding_rays = hits;
    uint32_t* swap = s->entries;
    s->entries = s->scratch;
    s->scratch = swap;
    s->count = kept;
    *count = records;
}

rtcd_error rtcd_pair_step(const rtcd_narrowphase_def* def, rtcd_pair_state* state, const rtcd_mesh* a,
                          const rtcd_xform* pa, const rtcd_mesh* b, const rtcd_xform* pb, const rtcd_pair_motion* motion,
                          rtcd_pair_ctx* ctx, rtcd_ray_rec* recs, uint32_t* count, rtcd_narrowphase_stats* st)
{
    const rtcd_iterative_def* idef = &def->iterative;
    memset(st, 0, sizeof *st);
    *count = 0;
    if (!state || idef->algorithm == RTCD_ALGORITHM_STANDARD) {
        if (state) rtcd_pair_state_reset(state);
        rtcd_pair_ctx_init(ctx, def, a, pa, b, pb, RTCD_ALGORITHM_STANDARD, NULL, NULL, 0u, 0.0f);
        rtcd_standard_pass(def, ctx, a, b, recs, count, st, NULL);
        return RTCD_OK;
    }
    rtcd_xform before;
    int standard = rtcd_track_plan(&state->track, def, a, b, pa, pb, motion, &before);
    /* An iterative pass with nothing kept walks nothing and finds nothing:
     * no context needed (the OpenCL host answers these itself, cl_plan.c). */
    if (!standard && !state->count) return RTCD_OK;
    rtcd_pair_ctx_init(ctx, def, a, pa, b, pb, idef->algorithm, &state->track.params,
                       state->track.has_motion ? &before : NULL, state->track.deformed,
                       state->track.speculative);
    if (!standard) {
        iterative_pass(ctx, state, recs, count, st);
        return RTCD_OK;
    }
    rtcd_keep keep;
    memset(&keep, 0, sizeof keep);
    keep.entries = state->entries;
    keep.capacity = state->capacity;
    rtcd_standard_pass(def, ctx, a, b, recs, count, st, &keep);
    if (keep.overflow) {
        /* Room for one entry per vertex, which always suffices, and again. */
        rtcd_error err = reserve(state, a->vertex_count + b->vertex_count);
        if (err != RTCD_OK) {
            rtcd_pair_state_reset(state);
            return err;
        }
        keep.entries = state->entries;
        keep.capacity = state->capacity;
        keep.count = 0;
        keep.overflow = 0;
        rtcd_standard_pass(def, ctx, a, b, recs, count, st, &keep);
    }
    state->count = keep.count;
    state->track.refresh = st->crossing_contacts > 0;
    for (uint32_t k = 0; k < keep.count; ++k) {
        if (keep.entries[2 * k + 1] & RTCD_ENTRY_PREDICTION)
            st->kept_predictions++;
        else
            st->kept_rays++;
    }
    return RTCD_OK;
}

rtcd_error rtcd_collide_iterative(const rtcd_narrowphase_def* def, rtcd_pair_state* state, const rtcd_mesh* a,
                                  const rtcd_transform* pose_a, const rtcd_mesh* b, const rtcd_transform* pose_b,
                                  rtcd_ray_hit* rays, uint32_t ray_capacity, uint32_t* ray_count,
                                  rtcd_narrowphase_stats* stats)
{
    if (ray_count) *ray_count = 0;
    if (stats) memset(stats, 0, sizeof *stats);
    if (!def || !state) return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_collide_iterative: NULL argument");
    rtcd_error err = rtcd_narrowphase_def_validate(def);
    if (err != RTCD_OK) return err;
    err = rtcd_check_pair_args("rtcd_collide_iterative", a, pose_a, b, pose_b, rays, ray_capacity, ray_count);
    if (err != RTCD_OK) return err;
    rtcd_ray_rec* recs = rtcd_alloc((size_t)rtcd_pair_record_room(a, b) * sizeof *recs);
    if (!recs) return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_collide_iterative: out of memory");
    rtcd_xform pa = rtcd_to_xform(pose_a), pb = rtcd_to_xform(pose_b);
    rtcd_pair_ctx ctx;
    rtcd_narrowphase_stats st;
    err = rtcd_pair_step(def, state, a, &pa, b, &pb, NULL, &ctx, recs, ray_count, &st);
    if (err == RTCD_OK && *ray_count) *ray_count = rtcd_recs_to_rays(&ctx, recs, *ray_count, rays);
    rtcd_free(recs);
    if (stats) *stats = st;
    return err;
}

/* ---- agreement with the standard algorithm ---- */

static int cmp_key(const void* x, const void* y)
{
    const rtcd_ray_hit* a = *(const rtcd_ray_hit* const*)x;
    const rtcd_ray_hit* b = *(const rtcd_ray_hit* const*)y;
    uint64_t ka = (uint64_t)a->direction << 32 | a->vertex, kb = (uint64_t)b->direction << 32 | b->vertex;
    return ka < kb ? -1 : ka > kb;
}

rtcd_error rtcd_compare_rays(const rtcd_ray_hit* reference, uint32_t reference_count, const rtcd_ray_hit* tested,
                             uint32_t tested_count, float tolerance, rtcd_ray_agreement* out)
{
    if (!out || (reference_count && !reference) || (tested_count && !tested))
        return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_compare_rays: NULL argument");
    memset(out, 0, sizeof *out);
    size_t total = (size_t)reference_count + tested_count;
    const rtcd_ray_hit** sorted = rtcd_alloc((total ? total : 1) * sizeof *sorted);
    if (!sorted) return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_compare_rays: out of memory");
    const rtcd_ray_hit** ref = sorted;
    const rtcd_ray_hit** tst = sorted + reference_count;
    for (uint32_t i = 0; i < reference_count; ++i) {
        ref[i] = &reference[i];
        out->reference_length += reference[i].length;
    }
    for (uint32_t i = 0; i < tested_count; ++i) {
        tst[i] = &tested[i];
        out->tested_length += tested[i].length;
    }
    qsort(ref, reference_count, sizeof *ref, cmp_key);
    qsort(tst, tested_count, sizeof *tst, cmp_key);
    uint32_t i = 0, j = 0;
    while (i < reference_count || j < tested_count) {
        int c = i == reference_count ? 1 : (j == tested_count ? -1 : cmp_key(&ref[i], &tst[j]));
        out->compared++;
        if (c < 0) {
            out->missed++;
            ++i;
        } else if (c > 0) {
            out->spurious++;
            ++j;
        } else {
            if (!(fabsf(ref[i]->length - tst[j]->length) <= tolerance)) out->different++;
            ++i;
            ++j;
        }
    }
    out->incorrect = out->missed + out->spurious + out->different;
    rtcd_free(sorted);
    return RTCD_OK;
}
