/* The avalanche and spawner scenes (JVRC 2013) on the C API over Bullet, and
 * the run loop the demo programs share: options, per-step statistics, CSV,
 * JSON summary, progress bar. Tests build the same scenes through here. */
#ifndef RTCD_DEMO_COMMON_H
#define RTCD_DEMO_COMMON_H

#include <rtcd/rtcd.h>
#include <rtcd/rtcd_world.h>

#include <stdio.h>

typedef enum demo_scene_kind { DEMO_AVALANCHE = 0, DEMO_SPAWNER = 1 } demo_scene_kind;

typedef struct demo_options {
    demo_scene_kind scene;
    uint32_t objects;             /* avalanche: bodies (default 512) */
    uint32_t steps;               /* default 600 (avalanche), 3000 (spawner) */
    uint64_t seed;
    rtcd_narrowphase_kind narrowphase;
    int compare;                  /* --narrowphase all: rtcd, gimpact and hull in one run, one JSON */
    rtcd_backend backend;
    uint32_t devices;             /* OpenCL devices at most (0: all selected) */
    const char* csv_path;         /* NULL: no CSV */
    int json;
    uint32_t penetration_every;   /* measure every K steps (default 10; 0: never) */
} demo_options;

/* Parses argv; prints usage and returns 2 on a bad option, 0 otherwise. */
int demo_parse_options(demo_scene_kind scene, int argc, char** argv, demo_options* out);

typedef struct demo_scene {
    demo_scene_kind kind;
    rtcd_world* world;
    rtcd_shape* shapes[4];        /* avalanche uses shapes[0] */
    uint32_t shape_count;
    uint32_t shape_triangles[4];
    uint64_t triangles_total;     /* over all bodies */
    uint64_t rng;
    uint32_t spawned;             /* spawner: bodies added so far */
    float bounding_radius;        /* largest distance of a vertex from a body's origin, all shapes */
} demo_scene;

/* The spawner's source: 10 Hz at 60 Hz, 13 drops a turn (see demo_scene_update). */
#define DEMO_SPAWN_EVERY 6u
#define DEMO_SPAWN_PER_TURN 13u
#define DEMO_SPAWN_RADIUS 3.0
#define DEMO_SPAWN_HEIGHT 6.0f

/* Largest distance of a vertex of the shape's body mesh from the body origin. */
float demo_shape_bounding_radius(const rtcd_shape* shape);

/* Builds the world and the scene's shapes; the avalanche's bodies too. */
rtcd_error demo_scene_create(const demo_options* opt, demo_scene* out);
/* Per step before rtcd_world_step: the spawner adds a body every 0.1 s. */
rtcd_error demo_scene_update(demo_scene* scene, uint32_t step);
void demo_scene_destroy(demo_scene* scene);

/* Runs the whole scene as the programs do; returns the process exit code. */
int demo_run(const demo_options* opt);

#endif
