/* Private to rtcd: one pair on the CPU reference (core/narrowphase/narrowphase.c,
 * core/narrowphase/iterative.c): its context for the shared pipeline, the choice of
 * pass, the standard and iterative passes. */
#ifndef RTCD_CORE_PAIR_INTERNAL_H
#define RTCD_CORE_PAIR_INTERNAL_H

#include <rtcd/rtcd_batch.h>
#include <rtcd/rtcd_iterative.h>

#include "mesh/mesh_internal.h"
#include "shared/crossing.h"

#include <math.h>
#include <string.h>

/* What the iterative algorithms know of a pair between calls, apart from its
 * kept rays (core/narrowphase/iterative.c). The CPU reference keeps it in the pair's
 * rtcd_pair_state; the OpenCL backend on the host beside the device that
 * holds the rays. */
typedef struct rtcd_pair_track {
    /* The meshes, by address and id (rtcd_mesh.id): a mesh created at a
     * released one's address is another mesh, which the kept rays do not
     * name. */
    const rtcd_mesh* a;
    const rtcd_mesh* b;
    uint64_t id_a, id_b;
    int valid;             /* a standard pass ran since the last reset */
    int has_prev;
    rtcd_xform ref;        /* b in a's frame at the last standard pass */
    rtcd_xform prev;       /* b in a's frame at the last call (this call's, once planned) */
    int has_motion;        /* this call: the motion of this step is known (rtcd_track_plan's `before`) */
    float step_displacement; /* relative motion in the last step */
    float speculative;     /* this call's speculative reach (0: none) */
    int refresh;           /* the last pass found crossing contacts, which are not kept: a standard pass next */
    rtcd_iterative_params params;
    /* The iterative algorithm: how far the pair may move from `ref` before
     * a vertex outside the other mesh then may have come in unseen
     * (rtcd_track_plan). */
    float unseen_reach;
    /* The meshes' deformation odometers (rtcd_mesh.deformation) at the last
     * standard pass and at the last call: a deforming mesh's vertices and
     * triangles move in its own frame as well. */
    double deformed_ref[2], deformed_prev[2];
    uint32_t deformed;        /* this call: bit k, mesh k deformed since the last call (rtcd_pair_ctx.deformed) */
    /* The predictive algorithm, a partner moving steadily (rtcd_track_plan):
     * b's translation per call in a's frame at the last standard pass (0: not
     * steady), and the calls since that pass. */
    float steady[3];
    uint32_t calls_since_ref;
} rtcd_pair_track;

/* A bound on how far any point of either mesh moves in the other's frame
 * between two relative poses (b in a). */
/* exported for tests only */
RTCD_API float rtcd_relative_displacement(const rtcd_mesh* a, const rtcd_mesh* b, const rtcd_xform* b_in_a0,
                                 const rtcd_xform* b_in_a1);
/* The same bound over the points that can touch at b_in_a1 only: those of
 * either mesh within `near` of the other's bounding ball (exported for
 * tests only). */
RTCD_API float rtcd_near_displacement(const rtcd_mesh* a, const rtcd_mesh* b, const rtcd_xform* b_in_a0,
                                      const rtcd_xform* b_in_a1, float near);

/* What the caller says of a pair's motion over the next step
 * (rtcd_pair_desc.motion, .has_back, .back_a, .back_b; or the body form's). */
typedef struct rtcd_pair_motion {
    float bound;           /* 0: unknown */
    int has_back;
    rtcd_xform back;       /* b in a's frame one step back along the velocities */
} rtcd_pair_motion;

/* Every number of t finite? x * 0 is 0 for a finite x and NaN otherwise,
 * and NaN stays in a sum: one branch a pose, which the compiler vectorises
 * (this runs for every pair of every call). */
static inline int rtcd_transform_finite(const rtcd_transform* t)
{
    float z = 0.0f;
    for (int i = 0; i < 9; ++i) z += t->rotation[i] * 0.0f;
    for (int i = 0; i < 3; ++i) z += t->translation[i] * 0.0f;
    return z == 0.0f;
}

/* *m from a pair's motion bound and back_a, back_b: each body's pose one
 * step back, or NULL (none); ignored unless both are finite. Inline, every
 * field written once in place and the poses read in place: a motion built
 * on the stack and copied out (returned by value from two branches) cost a
 * quarter, then a sixth, of the OpenCL host's planning in store-forwarding
 * stalls (perf, 8192 blobs). */
static inline void rtcd_pair_motion_set(rtcd_pair_motion* m, float motion, const rtcd_transform* back_a,
                                        const rtcd_transform* back_b)
{
    m->bound = motion > 0.0f && isfinite(motion) ? motion : 0.0f;
    m->has_back = back_a && back_b && rtcd_transform_finite(back_a) && rtcd_transform_finite(back_b);
    if (m->has_back)
        xf_relative_into(&m->back, back_a->rotation, back_a->translation, back_b->rotation, back_b->translation);
    else
        memset(&m->back, 0, sizeof m->back);
}

/* Decides this call's pass and updates the track: returns 1 for a standard
 * pass (parameters chosen afresh, displacement reset), 0 for an iterative
 * one. A track of other meshes (by address or id), or of the STANDARD
 * algorithm, resets.
 * motion may be NULL (nothing known). Sets track->speculative and
 * track->has_motion; when that is set, *before is b in a's frame one step
 * back (motion->back when given, else the last call's): this call's
 * output, not kept in the track, which planning writes for every pair
 * (the OpenCL host plans each pair's track where it lies in its pool). */
int rtcd_track_plan(rtcd_pair_track* track, const rtcd_narrowphase_def* def, const rtcd_mesh* a, const rtcd_mesh* b,
                    const rtcd_xform* pose_a, const rtcd_xform* pose_b, const rtcd_pair_motion* motion,
                    rtcd_xform* before);

/* What a standard pass of the iterative algorithms keeps: one entry (2
 * words, shared/iterate.h) per colliding ray, and for the predictive one per
 * predictive ray, in vertex order. */
typedef struct rtcd_keep {
    uint32_t* entries;
    uint32_t count, capacity;
    int overflow;          /* more entries than capacity: the rest were dropped */
} rtcd_keep;

/* Which items of the second phase (shared/crossing.h) a pair runs: the
 * def's edge crossings and deep vertices, both only between closed meshes
 * (an exit behind every entry, a centre); the CPU context and the kernels'
 * pair flags alike. */
void rtcd_pair_second_phase(const rtcd_narrowphase_def* def, const rtcd_mesh* a, const rtcd_mesh* b,
                            int* edge_crossings, int* deep_contacts);

/* The shared pipeline's context of one pair on the CPU (shared/pair.h):
 * params NULL for the standard algorithm, before (b in a's frame one call
 * earlier) NULL when unknown, deformed as rtcd_pair_track.deformed. */
/* Do the surfaces not cross and neither mesh hold the other (exact, with a
 * tolerance that covers the float second phase)? Then no item of the
 * second phase can find anything (the CPU's gate; the OpenCL host's too). */
int rtcd_meshes_provably_apart(const rtcd_mesh* a, const rtcd_mesh* b, const rtcd_xform* a_in_b,
                               const rtcd_xform* b_in_a);

void rtcd_pair_ctx_init(rtcd_pair_ctx* c, const rtcd_narrowphase_def* def, const rtcd_mesh* a, const rtcd_xform* pa,
                        const rtcd_mesh* b, const rtcd_xform* pb, rtcd_algorithm algorithm,
                        const rtcd_iterative_params* params, const rtcd_xform* before, uint32_t deformed,
                        float speculative);

/* core/narrowphase/narrowphase.c: the standard pass of c's pair; its records go to
 * recs (room for both meshes' vertex counts), in (direction, vertex) order:
 * colliding rays, and speculative contacts (RTCD_ENTRY_PREDICTION in the
 * triangle word; stats->colliding_rays counts the rays alone); keep NULL
 * for the plain standard algorithm. */
void rtcd_standard_pass(const rtcd_narrowphase_def* def, const rtcd_pair_ctx* c, const rtcd_mesh* a,
                        const rtcd_mesh* b, rtcd_ray_rec* recs, uint32_t* count, rtcd_narrowphase_stats* stats,
                        rtcd_keep* keep);
/* core/narrowphase/iterative.c: one call of a pair (rtcd_collide_iterative without the
 * argument checks): plans the pass (state NULL, or the STANDARD algorithm:
 * a standard pass), runs it, leaves its records (colliding rays and
 * speculative contacts, as rtcd_standard_pass) in recs (room for both
 * meshes' vertex counts) and the pair's context in *ctx (to turn them into
 * world rays or contacts; not set when *count is 0). motion:
 * rtcd_pair_motion_set's, or NULL. */
rtcd_error rtcd_pair_step(const rtcd_narrowphase_def* def, rtcd_pair_state* state, const rtcd_mesh* a,
                          const rtcd_xform* pa, const rtcd_mesh* b, const rtcd_xform* pb, const rtcd_pair_motion* motion,
                          rtcd_pair_ctx* ctx, rtcd_ray_rec* recs, uint32_t* count, rtcd_narrowphase_stats* st);
static inline rtcd_contact rtcd_contact_to_public(rtcd_contact_v v)
{
    rtcd_contact c;
    c.point_on_b[0] = v.point_on_b.x, c.point_on_b[1] = v.point_on_b.y, c.point_on_b[2] = v.point_on_b.z;
    c.normal_on_b[0] = v.normal_on_b.x, c.normal_on_b[1] = v.normal_on_b.y, c.normal_on_b[2] = v.normal_on_b.z;
    c.depth = v.depth;
    c.feature = v.feature;
    return c;
}

/* Records one pass of the pair may write: one per vertex (a ray or a
 * speculative contact) and one per edge slot (crossing.h). */
static inline uint32_t rtcd_pair_record_room(const rtcd_mesh* a, const rtcd_mesh* b)
{
    return a->vertex_count + b->vertex_count + 3u * (a->triangle_count + b->triangle_count);
}

/* The world-space rays of the colliding records (speculative ones skipped);
 * returns how many. */
uint32_t rtcd_recs_to_rays(const rtcd_pair_ctx* c, const rtcd_ray_rec* recs, uint32_t count, rtcd_ray_hit* rays);
/* NULL pointers, buffer size (sum of vertex counts) and finite poses. */
rtcd_error rtcd_check_pair_args(const char* fn, const rtcd_mesh* a, const rtcd_transform* pose_a, const rtcd_mesh* b,
                                const rtcd_transform* pose_b, const rtcd_ray_hit* rays, uint32_t ray_capacity,
                                const uint32_t* ray_count);

#endif
