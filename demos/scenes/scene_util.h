/* Small pieces every scene needs: a seeded generator, random orientations,
 * and rtcd meshes from generated arrays. */
#ifndef RTCD_SCENE_UTIL_H
#define RTCD_SCENE_UTIL_H

#include <rtcd/rtcd.h>
#include <rtcd/rtcd_batch.h>

uint64_t scene_rng_next(uint64_t* state);      /* splitmix64 */
double scene_rng_uniform(uint64_t* state);     /* [0, 1) */
/* A uniformly random rotation (Shoemake) at the given translation. */
rtcd_transform scene_random_pose(uint64_t* state, float x, float y, float z);
/* Creates a mesh from generated arrays, then frees the arrays (also on failure). */
rtcd_error scene_mesh_from_generated(rtcd_generated_mesh* g, const char* name, rtcd_mesh** out);

/* Pairs of bodies (all using `mesh`) whose bounding spheres around their
 * origins overlap: a stand-in broadphase for benchmarks and tests. Writes at
 * most n*(n-1)/2 entries, keyed (i << 32 | j), and returns the count. */
uint32_t scene_overlapping_pairs(const rtcd_mesh* mesh, const rtcd_transform* poses, uint32_t n,
                                 rtcd_pair_desc* out);

/* The deforming bodies' shape (demos' --deforming, the deformation tests):
 * each of n vertices scaled by `scale` about the origin and turned about
 * the z axis by twist_per_metre times its height, in double precision. */
void scene_pulse_twist(const float* rest, uint32_t n, double scale, double twist_per_metre, float* out);

#endif
