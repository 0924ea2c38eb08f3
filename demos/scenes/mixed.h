/* The mixed scene: a static terrain and a mix of dynamic bodies dropped onto
 * it in layers. Shared by the mixed program, bench_mixed and the tests
 * (through demo_common's DEMO_MIXED), and usable on any world:
 *
 *   mixed_scene s;
 *   mixed_scene_create(world, &def, &s);   // terrain and bodies into `world`
 *   for (...) { rtcd_world_step(world); mixed_scene_check(&s, world); }
 *   printf("%u tunnelled\n", s.tunnelled);
 *   mixed_scene_destroy(&s);               // the world keeps its bodies
 *
 * The terrain is an open, one-sided heightfield surface (RTCD_MESH_OPEN_SURFACE,
 * fronts up) of MIXED_TERRAIN_QUADS x MIXED_TERRAIN_QUADS quads over
 * MIXED_TERRAIN_SIZE x MIXED_TERRAIN_SIZE metres centred on the origin: smooth
 * hills of about 1 m in a bowl whose rim rises about 4 m at the edge, so that
 * bodies stay on it. There is no ground plane: a body that passes through the
 * surface falls for ever, and is counted (mixed_scene_check).
 *
 * The bodies, mass 1 each, cycle through twelve slots: a concave body every
 * other slot (the avalanche blob, rtcd_generate_blob, in rotation with the
 * user's meshes when given), and a box, a sphere, a capsule, a convex hull, a
 * cylinder and a cone between them. They start on a grid of layers above the
 * bowl's floor, at seeded orientations, no two touching. The same definition
 * (seed, objects, meshes) gives the same scene. */
#ifndef RTCD_SCENE_MIXED_H
#define RTCD_SCENE_MIXED_H

#include <rtcd/rtcd.h>
#include <rtcd/rtcd_world.h>

#include "user_meshes.h"

#define MIXED_TERRAIN_QUADS 48u
#define MIXED_TERRAIN_SIZE 24.0f

typedef enum mixed_kind {
    MIXED_BLOB = 0,     /* the avalanche blob (concave, 902 triangles) */
    MIXED_BOX,
    MIXED_SPHERE,
    MIXED_CAPSULE,
    MIXED_HULL,         /* a convex hull of 14 seeded points */
    MIXED_CYLINDER,
    MIXED_CONE,
    MIXED_USER,         /* the user's meshes (concave, in rotation with the blob) */
    MIXED_KIND_COUNT
} mixed_kind;

/* "blob", "box", "sphere", "capsule", "hull", "cylinder", "cone", "user". */
const char* mixed_kind_name(mixed_kind kind);

typedef struct mixed_def {
    uint32_t objects;               /* dynamic bodies */
    uint64_t seed;                  /* the blob, the hull's points, orientations */
    const user_meshes* users;       /* the --mesh files, one shape each (NULL: none; read during the call only) */
} mixed_def;

typedef struct mixed_scene {
    float heights[(MIXED_TERRAIN_QUADS + 1) * (MIXED_TERRAIN_QUADS + 1)]; /* the terrain's vertices, x fastest */
    uint32_t first_body;            /* the world's index of the scene's first body */
    uint32_t body_count;
    uint8_t* body_kind;             /* mixed_kind per body */
    float* body_size;               /* per body: largest distance of its surface from its origin */
    uint8_t* below;                 /* per body: was ever below the terrain by more than its size */
    uint32_t kind_counts[MIXED_KIND_COUNT];
    uint32_t kind_triangles[MIXED_KIND_COUNT]; /* concave kinds: triangles of one body (user: of the last) */
    uint64_t triangles_total;       /* the concave bodies' triangles */
    uint32_t terrain_triangles;
    float max_size;                 /* largest body_size */
    /* mixed_scene_check's findings, over every call so far */
    uint32_t tunnelled;             /* bodies that were below the terrain by more than their size */
    uint32_t off_terrain;           /* bodies outside the terrain's square at the last check */
    float min_height;               /* lowest body origin above the terrain (negative: below) */
    uint32_t checks;
} mixed_scene;

/* Adds the terrain (rtcd_world_add_static_mesh) and the bodies to `world`.
 * On failure the world may hold part of the scene; destroy both. */
rtcd_error mixed_scene_create(rtcd_world* world, const mixed_def* def, mixed_scene* out);
void mixed_scene_destroy(mixed_scene* scene);

/* The terrain's triangle mesh as the world has it, from the scene's
 * heights: MIXED_TERRAIN_VERTICES vertices (3 floats each, x fastest) and
 * MIXED_TERRAIN_TRIANGLES triangles (3 indices each, fronts up) in arrays
 * the caller frees (free); 0 and none when out of memory. */
#define MIXED_TERRAIN_VERTICES ((MIXED_TERRAIN_QUADS + 1) * (MIXED_TERRAIN_QUADS + 1))
#define MIXED_TERRAIN_TRIANGLES (2 * MIXED_TERRAIN_QUADS * MIXED_TERRAIN_QUADS)
int mixed_terrain_arrays(const mixed_scene* scene, float** vertices, uint32_t** indices);

/* The terrain surface's height at (x, y), exactly as its triangles have it;
 * outside the square, the height at the nearest point of its border. */
float mixed_terrain_height(const mixed_scene* scene, float x, float y);

/* Checks every body's origin against the terrain below it (or the nearest
 * border point): a body whose origin is below the surface by more than its
 * size has passed through it and counts as tunnelled (once, whatever
 * follows). Updates tunnelled, off_terrain, min_height and checks. */
void mixed_scene_check(mixed_scene* scene, const rtcd_world* world);

#endif
