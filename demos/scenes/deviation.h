/* The deviation experiment (JVRC 2013, Table 1): an object pressed into a
 * plane at many orientations and depths; the net penalty force of its
 * contacts (sum of normal * depth) should point straight up. Deviation is
 * |tangential| / |normal| of that force, averaged over configurations. */
#ifndef RTCD_SCENE_DEVIATION_H
#define RTCD_SCENE_DEVIATION_H

#include <rtcd/rtcd.h>

typedef struct scene_deviation_def {
    uint32_t orientations;     /* uniform random rotations (seeded) */
    uint32_t depths;           /* evenly spaced in (0, max_depth_fraction * height] */
    float max_depth_fraction;  /* of the object's extent along the plane normal */
    uint64_t seed;
} scene_deviation_def;

typedef struct scene_deviation_result {
    double deviation_pct[3];   /* indexed by rtcd_contact_normal: re-projected, raw, weighted */
    uint32_t configurations;   /* with at least one colliding ray */
    uint64_t colliding_rays;
} scene_deviation_result;

scene_deviation_def scene_default_deviation_def(void); /* 400 x 20, 25 % of the height */
rtcd_error scene_run_deviation(const rtcd_mesh* object, const scene_deviation_def* def,
                               scene_deviation_result* out);

/* The three meshes of the table: 70-vertex UV sphere, avalanche blob, largest spawner mesh. */
#define SCENE_DEVIATION_MESHES 3
rtcd_mesh* scene_deviation_mesh(int which, const char** name);

#endif
