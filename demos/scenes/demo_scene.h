/* The scenes the demo programs and tests run: the avalanche, the spawner and
 * the mixed scene (mixed.h), built from demo options in a world. */
#ifndef RTCD_DEMO_SCENE_H
#define RTCD_DEMO_SCENE_H

#include "deform.h"
#include "demo_options.h"
#include "mixed.h"

#include <rtcd/rtcd.h>
#include <rtcd/rtcd_world.h>

/* FNV-1a 64 over the bytes, as stored, of every body's pose in body order
 * (rtcd_world_get_pose: rotation[9] then translation[3] floats): equal
 * checksums mean bit-identical final poses. Printed as 16 hex digits. */
uint64_t demo_pose_checksum(const rtcd_world* world);

typedef struct demo_scene {
    demo_scene_kind kind;
    rtcd_world* world;
    rtcd_shape** shapes;          /* shape_count; avalanche: shapes[0] (or the user's, in turn); mixed: none */
    uint32_t shape_count;
    uint32_t* shape_triangles;    /* shape_count */
    uint64_t triangles_total;     /* over all bodies */
    uint64_t rng;
    uint32_t spawned;             /* spawner: bodies added so far */
    float bounding_radius;        /* largest distance of a vertex from a body's origin, all shapes */
    uint32_t user_meshes;         /* meshes read from --mesh files (in use as shapes) */
    mixed_scene mixed;            /* DEMO_MIXED: the terrain, the bodies' kinds, the tunnelling check */
    uint32_t deforming_wanted;    /* --deforming */
    demo_deformer deform;         /* the deforming bodies' shapes */
} demo_scene;

/* The spawner's source: 10 Hz at 60 Hz, 13 drops a turn (see demo_scene_update). */
#define DEMO_SPAWN_EVERY 6u
#define DEMO_SPAWN_PER_TURN 13u
#define DEMO_SPAWN_RADIUS 3.0
#define DEMO_SPAWN_HEIGHT 6.0f

/* The avalanche's cube of blobs: side^3 places (the last layer partly
 * filled), lowest layer z0 up, spacing a bounding diameter plus 2 cm. */
typedef struct demo_avalanche_cube {
    uint32_t side;
    float spacing, z0;
} demo_avalanche_cube;
demo_avalanche_cube demo_avalanche_cube_of(uint32_t objects, float bounding_radius);

/* A few steps of a small avalanche on the backend a benchmark asks for, so
 * that the OpenCL kernels' first build (hundreds of ms, cached afterwards)
 * does not land in the first timed run. */
void demo_warm_up(int backend, uint32_t devices, uint32_t threads, uint64_t seed);

/* Builds the world and the scene's shapes; the avalanche's and the mixed
 * scene's bodies too. A --mesh file that cannot be used fails it with a line
 * on stderr naming the file and the reason. */
rtcd_error demo_scene_create(const demo_options* opt, demo_scene* out);
/* Per step before rtcd_world_step: the spawner adds a body every 0.1 s. */
rtcd_error demo_scene_update(demo_scene* scene, uint32_t step);
void demo_scene_destroy(demo_scene* scene);
/* Why the last demo_scene_create failed where rtcd's message would not say
 * (a --mesh file); "" otherwise. */
const char* demo_scene_error(void);

#endif
