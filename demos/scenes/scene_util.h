/* Small pieces every scene needs: a seeded generator, random orientations,
 * and rtcd meshes from generated arrays. */
#ifndef RTCD_SCENE_UTIL_H
#define RTCD_SCENE_UTIL_H

#include <rtcd/rtcd.h>

uint64_t scene_rng_next(uint64_t* state);      /* splitmix64 */
double scene_rng_uniform(uint64_t* state);     /* [0, 1) */
/* A uniformly random rotation (Shoemake) at the given translation. */
rtcd_transform scene_random_pose(uint64_t* state, float x, float y, float z);
/* Creates a mesh from generated arrays, then frees the arrays (also on failure). */
rtcd_error scene_mesh_from_generated(rtcd_generated_mesh* g, const char* name, rtcd_mesh** out);

#endif
