/* A pile of identical avalanche blobs at seeded random orientations on a
 * jittered grid, packed so that neighbours touch and interpenetrate a little:
 * the narrow-phase load of an avalanche at rest, without a physics engine. */
#ifndef RTCD_SCENE_PILE_H
#define RTCD_SCENE_PILE_H

#include <rtcd/rtcd.h>

typedef struct scene_pile {
    uint32_t count;
    rtcd_mesh* mesh;          /* shared by every body (one reference) */
    rtcd_transform* poses;    /* count */
    uint32_t (*pairs)[2];     /* bodies whose world boxes overlap */
    uint32_t pair_count;
} scene_pile;

/* spacing is the grid step in units of the blob's diameter (1.0 = just apart). */
rtcd_error scene_pile_create(uint32_t count, float spacing, uint64_t seed, scene_pile* out);
void scene_pile_destroy(scene_pile* pile);

#endif
