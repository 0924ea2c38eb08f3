/* SPDX-License-Identifier: Zlib. Copyright (c) 2026 the rtcd authors (LICENSE). */
/* Iterative and predictive ray-traced collision detection (IRTCD, JVRC 2013
 * section 3.1, Algorithm 1) for one pair of closed meshes, with per-pair
 * parameters that adapt to the pair's motion.
 *
 * A pair keeps, between calls, the rays that collided (vertex and hit
 * triangle) and the predictive rays (vertex and the triangle its opposite ray
 * hit). While the pair has moved less than the displacement threshold since
 * its last standard pass, each kept ray is relaunched on its triangle and
 * walks to the neighbour across the nearest edge until it finds its triangle
 * again (at most max_iterations tests); otherwise the standard algorithm runs
 * and the displacement resets. */
#ifndef RTCD_ITERATIVE_H
#define RTCD_ITERATIVE_H

#include "rtcd_common.h"
#include "rtcd_narrowphase.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The adaptive rule. step_displacement: how far the pair moved relative to
 * each other in the last step (a bound on the displacement of any point of
 * one body in the other's frame); edge_length: mean edge length of the two
 * meshes. The threshold covers 16 steps of the current motion, between a
 * quarter and half an edge (walks stay local); extension and culling
 * distance are confidence x threshold, and 0 (no predictive rays) for a pair
 * that moves a threshold per step, whose next call is a standard pass
 * anyway; one walk may cross as many edges as the contact point moves in a
 * step, plus the six steps of going round a vertex. The predictive pass
 * also skips pairs whose extension is 0 (fixed parameters never are). */
RTCD_API rtcd_iterative_params rtcd_adaptive_params(const rtcd_iterative_def* def, float step_displacement,
                                                    float edge_length);

/* What a pair keeps between calls. Owned by the caller: one per pair while
 * the pair persists (drop it when the pair leaves the broadphase). A state
 * used with other meshes than before resets itself, a mesh created at a
 * released one's address included (rtcd_mesh_id tells them apart). */
typedef struct rtcd_pair_state rtcd_pair_state;
RTCD_API rtcd_error rtcd_pair_state_create(rtcd_pair_state** out);
RTCD_API void rtcd_pair_state_retain(rtcd_pair_state* state);
RTCD_API void rtcd_pair_state_release(rtcd_pair_state* state); /* the last release frees it; NULL is fine */
RTCD_API void rtcd_pair_state_reset(rtcd_pair_state* state);   /* next call runs a standard pass */
/* A hint for batch loops: the state will be used soon (cache prefetch). */
RTCD_API void rtcd_pair_state_prefetch(const rtcd_pair_state* state);
/* Parameters chosen at the last standard pass. */
RTCD_API rtcd_iterative_params rtcd_pair_state_params(const rtcd_pair_state* state);

/* One step of the pair with `def->iterative.algorithm` (STANDARD behaves
 * as rtcd_collide_standard and keeps nothing). Same output as
 * rtcd_collide_standard: the colliding rays, in the order their pass found
 * them, which `rays` must have room for (vertex_count(a) + vertex_count(b)).
 * stats may be NULL; its standard_pass says which pass ran. */
RTCD_API rtcd_error rtcd_collide_iterative(const rtcd_narrowphase_def* def, rtcd_pair_state* state,
                                           const rtcd_mesh* a, const rtcd_transform* pose_a, const rtcd_mesh* b,
                                           const rtcd_transform* pose_b, rtcd_ray_hit* rays, uint32_t ray_capacity,
                                           uint32_t* ray_count, rtcd_narrowphase_stats* stats);

/* How far a result is from the standard algorithm's on the same poses. Rays
 * are matched by (direction, vertex); a ray is incorrect when only one side
 * has it, or when both have it with lengths more than `tolerance` apart (a
 * different triangle at the same length is the same ray: shared edges). */
typedef struct rtcd_ray_agreement {
    uint32_t compared;   /* rays colliding in either result */
    uint32_t missed;     /* in the reference only */
    uint32_t spurious;   /* in the tested result only */
    uint32_t different;  /* in both, lengths apart */
    uint32_t incorrect;  /* missed + spurious + different */
    double reference_length; /* sum of the reference rays' lengths */
    double tested_length;    /* sum of the tested rays' lengths */
} rtcd_ray_agreement;

RTCD_API rtcd_error rtcd_compare_rays(const rtcd_ray_hit* reference, uint32_t reference_count,
                                      const rtcd_ray_hit* tested, uint32_t tested_count, float tolerance,
                                      rtcd_ray_agreement* out);

#ifdef __cplusplus
}
#endif
#endif
